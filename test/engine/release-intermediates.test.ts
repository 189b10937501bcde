/**
 * `backward(loss, { releaseIntermediates: true })` returns the graph's intermediate buffers to the pool: the same
 * loss and gradients as without it, a pool that grows by them, and nothing a caller still owns reused behind it
 * (parameters, a parameter seen through a reshape, an input, a detached intermediate used as a constant, a `where`
 * condition computed with the graph).
 */
import { beforeAll, describe, expect, it } from "vitest";
import * as E from "../../src/engine/index.js";
import { allocUninit, clearPool, pooledByteCount } from "../../src/engine/pool.js";
import { Rng } from "../../src/util/rng.js";

describe.each(E.availableBackends())("backward releaseIntermediates on %s", (name) => {
  beforeAll(() => void E.setBackend(name));

  const [b, t, d] = [4, 32, 64]; // every activation has b·t·d = 8192 elements, above the pooling threshold
  const rng = new Rng(11);
  const w = E.param([d, d], E.randn([d, d], rng, 0.1));
  const table = E.param([100, d], E.randn([100, d], rng));
  const gain = E.param([d], E.randn([d], rng, 0.1));
  const ids = Int32Array.from({ length: b * t }, (_, i) => (i * 7) % 100);
  const targets = Int32Array.from({ length: b * t }, (_, i) => (i * 5) % d);
  const params = [w, table, gain];

  /** One step: the loss, the gradients (copied), and the caller-owned tensors to check afterwards. */
  const step = (release: boolean) => {
    for (const p of params) p.grad = null;
    const x = E.reshape(E.embedding(table, ids, [b, t]), [b * t, d]); // an intermediate seen through a reshape
    const wView = E.reshape(E.reshape(w, [d * d]), [d, d]); // a parameter seen through reshapes: shares its buffer
    const h = E.matmul(E.rmsNorm(x, gain), wView, { transB: true });
    const frozen = h.detach(); // the same buffer as h, used below as a constant
    const cond = E.add(E.mul(h, 0), 1); // a graph tensor used as where's condition (all ones)
    const y = E.where(cond, E.add(E.gelu(h), E.mul(frozen, 0.5)), 0);
    const loss = E.crossEntropy(E.softmax(E.add(E.mul(y, 3), E.mul(cond, 0))), targets); // cond is in the walk too
    const frozenBefore = frozen.data.slice();
    E.backward(loss, { releaseIntermediates: release });
    return { loss: loss.item(), grads: params.map((p) => p.grad!.slice()), frozen, frozenBefore };
  };

  it("gives the same loss and gradients, and returns the activations to the pool", () => {
    clearPool();
    const plain = step(false);
    const plainPooled = pooledByteCount();
    clearPool();
    const freed = step(true);
    expect(pooledByteCount()).toBeGreaterThan(plainPooled + 3 * b * t * d * 4); // several activations came back
    expect(freed.loss).toBe(plain.loss);
    freed.grads.forEach((g, i) => expect(Array.from(g)).toEqual(Array.from(plain.grads[i]!)));
  });

  it("never reuses what the caller owns: parameters, a parameter's reshape, a detached intermediate", () => {
    clearPool();
    const wBefore = w.data.slice();
    const tableBefore = table.data.slice();
    const first = step(true);
    // Whatever went back to the pool is overwritten (taken out and filled with NaN); the next steps reuse the rest.
    for (const n of [d * d, b * t * d, 100 * d]) {
      for (let before = pooledByteCount(), k = 0; k < 64; k++, before = pooledByteCount()) {
        const buf = allocUninit(n);
        if (pooledByteCount() === before) break; // a fresh array: none of that size left in the pool
        buf.fill(NaN);
      }
    }
    const again = [step(true), step(true)];
    expect(Array.from(w.data)).toEqual(Array.from(wBefore));
    expect(Array.from(table.data)).toEqual(Array.from(tableBefore));
    expect(Array.from(first.frozen.data)).toEqual(Array.from(first.frozenBefore));
    for (const r of again) {
      expect(r.loss).toBe(first.loss);
      r.grads.forEach((g, i) => expect(Array.from(g)).toEqual(Array.from(first.grads[i]!)));
    }
  });
});
