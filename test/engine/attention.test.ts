/**
 * Attention against compositions of simpler ops, on every backend: the fused kernel equals
 * softmax(q k^T * scale + causal/padding mask) v built from matmul/maskedFill/softmax; a KV cache (Tk > Tq)
 * gives the same rows as full causal attention; grouped-query heads equal repeated KV heads. Tolerance 1e-5.
 */
import { beforeAll, describe, expect, it } from "vitest";
import * as E from "../../src/engine/index.js";
import { Rng } from "../../src/util/rng.js";
import { expectClose } from "./gradcheck.js";

/** Reference attention from primitive ops; k and v already have H heads. */
function reference(q: E.Tensor, k: E.Tensor, v: E.Tensor, padMask: Float32Array | null): E.Tensor {
  const [b, , tq, d] = q.shape as [number, number, number, number];
  const tk = k.shape[2]!;
  const scores = E.mul(E.matmul(q, k, { transB: true }), 1 / Math.sqrt(d)); // (B, H, Tq, Tk)
  const blocked = new Float32Array(b * tq * tk);
  for (let bi = 0; bi < b; bi++) {
    for (let i = 0; i < tq; i++) {
      for (let j = 0; j < tk; j++) {
        const future = j > tk - tq + i;
        const pad = padMask !== null && padMask[bi * tk + j] === 0;
        blocked[(bi * tq + i) * tk + j] = future || pad ? 1 : 0;
      }
    }
  }
  const masked = E.maskedFill(scores, E.tensor(blocked, [b, 1, tq, tk]), -Infinity);
  return E.matmul(E.softmax(masked), v);
}

/** Repeats each KV head `times` times: (B, Hkv, T, D) → (B, Hkv*times, T, D). */
function repeatHeads(x: E.Tensor, times: number): E.Tensor {
  const [b, hkv, t, d] = x.shape as [number, number, number, number];
  const parts: E.Tensor[] = [];
  for (let h = 0; h < hkv; h++) for (let r = 0; r < times; r++) parts.push(E.slice(x, 1, h, h + 1));
  return E.reshape(E.concat(parts, 1), [b, hkv * times, t, d]);
}

/** Fixed, non-uniform upstream gradient. */
function weights(shape: readonly number[]): E.Tensor {
  return E.randn(shape, new Rng(99));
}

describe.each(E.availableBackends())("attention on %s", (name) => {
  beforeAll(() => void E.setBackend(name));
  const rng = new Rng(5);
  const q = E.randn([2, 4, 6, 8], rng),
    k = E.randn([2, 2, 6, 8], rng),
    v = E.randn([2, 2, 6, 8], rng);

  it("equals the composition of matmul, mask and softmax (GQA via repeated heads, padding)", () => {
    const pad = Float32Array.from([1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1]);
    const fused = E.scaledDotProductAttention(q, k, v, { mask: pad });
    const ref = reference(q, repeatHeads(k, 2), repeatHeads(v, 2), pad);
    expectClose(fused.data, ref.data, 1e-5, 1e-5);
  });

  it("with a KV cache equals full causal attention on the last rows", () => {
    const full = E.scaledDotProductAttention(q, k, v);
    for (const tq of [1, 2]) {
      const qLast = E.slice(q, 2, 6 - tq, 6);
      const cached = E.scaledDotProductAttention(qLast, k, v);
      expectClose(cached.data, E.slice(full, 2, 6 - tq, 6).data, 1e-6, 1e-6);
    }
  });

  it("gradients match the composition's", () => {
    const leaves = [q, k, v].map((t) => E.param(t.shape, t));
    E.backward(E.sum(E.mul(E.scaledDotProductAttention(leaves[0]!, leaves[1]!, leaves[2]!), weights(q.shape))));
    const ref = [q, k, v].map((t) => E.param(t.shape, t));
    E.backward(
      E.sum(E.mul(reference(ref[0]!, repeatHeads(ref[1]!, 2), repeatHeads(ref[2]!, 2), null), weights(q.shape))),
    );
    for (let i = 0; i < 3; i++) expectClose(leaves[i]!.grad!, ref[i]!.grad!, 1e-5, 1e-4);
  });

  it("rejects mismatched shapes with a message naming them", () => {
    expect(() => E.scaledDotProductAttention(q, E.randn([2, 3, 6, 8], rng), E.randn([2, 3, 6, 8], rng))).toThrow(
      /scaledDotProductAttention: q \(2, 4, 6, 8\), k \(2, 3, 6, 8\)/,
    );
  });
});
