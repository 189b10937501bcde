/**
 * The buffer pool recycles only what the engine owns: repeated training steps with tensors big enough to be
 * pooled give bit-identical gradients, and nothing a caller holds (outputs, leaf gradients) changes later.
 * `tidy` returns a scope's intermediates and keeps exactly what the caller keeps (the result, a view's buffer).
 */
import { beforeAll, describe, expect, it } from "vitest";
import * as E from "../../src/engine/index.js";
import { allocUninit, clearPool, pooledByteCount, release, setPoolLimit } from "../../src/engine/pool.js";
import { Rng } from "../../src/util/rng.js";

describe.each(E.availableBackends())("buffer pool on %s", (name) => {
  beforeAll(() => void E.setBackend(name));

  it("reuses buffers without corrupting results a caller still holds", () => {
    const rng = new Rng(8);
    // Shapes chosen so every intermediate has >= 4096 elements (the pooling threshold).
    const [b, h, t, d] = [2, 4, 32, 16];
    const w = E.param([64, 64], E.randn([64, 64], rng, 0.1));
    const g = E.param([64], E.randn([64], rng, 0.1));
    const table = E.param([100, 64], E.randn([100, 64], rng));
    const ids = Int32Array.from({ length: b * t }, (_, i) => (i * 7) % 100);
    const targets = Int32Array.from({ length: b * t }, (_, i) => (i * 3) % 64);
    const step = () => {
      const x = E.embedding(table, ids, [b, t]); // (B, T, 64)
      const y = E.gelu(E.rmsNorm(E.matmul(x, w, { transB: true }), g));
      const q = E.transpose(E.reshape(y, [b, t, h, d]), 1, 2); // (B, H, T, D)
      const a = E.scaledDotProductAttention(E.rope(q), q, q);
      const z = E.add(E.reshape(E.transpose(a, 1, 2), [b * t, h * d]), E.reshape(x, [b * t, 64]));
      const loss = E.crossEntropy(E.softmax(E.mul(z, 3)), targets);
      E.backward(loss);
      return { z, loss: loss.item(), grads: [w, g, table].map((p) => p.grad!) };
    };
    const first = step();
    const zCopy = first.z.data.slice();
    const gradCopies = first.grads.map((x) => x.slice());
    expect(pooledByteCount()).toBeGreaterThan(0);
    for (const p of [w, g, table]) p.grad = null;
    const second = step();
    // Same numbers the second time round (served from pooled, dirty buffers)...
    expect(second.loss).toBe(first.loss);
    second.grads.forEach((x, i) => expect(Array.from(x)).toEqual(Array.from(gradCopies[i]!)));
    // ...and what the caller kept from the first step is untouched.
    expect(Array.from(first.z.data)).toEqual(Array.from(zCopy));
    first.grads.forEach((x, i) => expect(Array.from(x)).toEqual(Array.from(gradCopies[i]!)));
  });
});

describe.each(E.availableBackends())("uninitialised outputs on %s", (name) => {
  beforeAll(() => void E.setBackend(name));

  /** Puts NaN-filled buffers of `n` elements in the pool, so the next outputs of that size start as garbage. */
  const poison = (n: number, copies = 4) => {
    for (let i = 0; i < copies; i++) release(new Float32Array(n).fill(NaN));
  };
  const finite = (t: E.Tensor) => expect(t.data.every(Number.isFinite)).toBe(true);

  it("every kernel writes every element of its output", () => {
    const rng = new Rng(2);
    const n = 4096;
    const x = E.randn([64, 64], rng);
    const ops: [string, () => E.Tensor][] = [
      ["unary", () => E.exp(x)],
      ["binary", () => E.add(x, E.randn([64], rng))],
      ["affine", () => E.mul(x, 2)],
      ["pow", () => E.pow(x, 2)],
      ["where", () => E.where(E.ones([64, 1]), x, 0)],
      ["matmul", () => E.matmul(x, x, { transB: true })],
      ["linear", () => E.linear(x, x, E.randn([64], rng))],
      ["linear no bias", () => E.linear(x, x, null)],
      ["permute", () => E.transpose(x, 0, 1)],
      ["slice", () => E.slice(E.randn([128, 64], rng), 0, 32, 96)],
      ["concat", () => E.concat([E.slice(x, 0, 0, 32), E.slice(x, 0, 32, 64)], 0)],
      ["softmax", () => E.softmax(x)],
      ["logSoftmax", () => E.logSoftmax(x)],
      ["layerNorm", () => E.layerNorm(x, E.ones([64]), null)],
      ["rmsNorm", () => E.rmsNorm(x, E.ones([64]))],
      ["rope", () => E.rope(E.reshape(x, [1, 8, 8, 64]), { posOffset: 3 })],
      [
        "embedding",
        () =>
          E.embedding(
            x,
            Int32Array.from({ length: 64 }, (_, i) => 63 - i),
          ),
      ],
      ["max", () => E.max(E.randn([4096, 2], rng), -1)],
      [
        "crossEntropy rows",
        () =>
          E.crossEntropy(
            E.randn([4096, 2], rng),
            Int32Array.from({ length: 4096 }, (_, i) => (i % 3 === 0 ? -100 : i % 2)),
            { reduction: "none" },
          ),
      ],
    ];
    for (const [label, f] of ops) {
      poison(n);
      const y = f();
      expect(y.data.every(Number.isFinite), label).toBe(true);
    }
    // Attention where the first query of each sequence sees only padding: zeros, not leftovers.
    const [b, h, t, d] = [8, 8, 8, 8];
    const q = E.randn([b, h, t, d], rng);
    const mask = new Float32Array(b * t).fill(1);
    for (let i = 0; i < b; i++) mask[i * t] = 0;
    poison(b * h * t * d);
    const att = E.scaledDotProductAttention(q, q, q, { mask });
    finite(att);
    expect(att.data[0]).toBe(0);
  });
});

describe.each(E.availableBackends())("tidy on %s", (name) => {
  beforeAll(() => void E.setBackend(name));

  /** A forward pass with intermediates big enough to pool (64 × 64 = 4096 elements each). */
  const forward = (x: E.Tensor, w: E.Tensor) => E.softmax(E.gelu(E.matmul(E.rmsNorm(x, E.ones([64])), w)));

  it("returns the intermediates to the pool and keeps the result intact while they are reused", () => {
    const rng = new Rng(5);
    const x = E.randn([64, 64], rng);
    const w = E.randn([64, 64], rng, 0.2);
    const plain = E.noGrad(() => forward(x, w));
    clearPool();
    const y = E.tidy(() => E.noGrad(() => forward(x, w)));
    // Every intermediate (norm, matmul, gelu: 3 buffers of 16 KB, plus any scratch) came back; the result did not.
    expect(pooledByteCount()).toBeGreaterThanOrEqual(3 * 4096 * 4);
    expect(Array.from(y.data)).toEqual(Array.from(plain.data));
    // The next passes take those buffers; the kept result does not change under them.
    const kept = y.data.slice();
    for (let i = 0; i < 3; i++)
      E.tidy(
        () => E.noGrad(() => forward(E.mul(x, i + 2), w)),
        () => [],
      );
    expect(Array.from(y.data)).toEqual(Array.from(kept));
  });

  it("keeps the buffer behind a kept view, and an inner scope's result only as long as the outer scope keeps it", () => {
    const x = E.randn([128, 64], new Rng(6));
    clearPool();
    const whole = E.tidy(
      () => E.mul(x, 2),
      (t) => [t.data.subarray(10, 20)],
    );
    expect(pooledByteCount()).toBe(0); // its only buffer is behind the kept view
    let inner: E.Tensor | null = null;
    E.tidy(
      () => {
        inner = E.tidy(() => E.mul(x, 3)); // kept by the inner scope, handed to the outer one
        expect(pooledByteCount()).toBe(0);
        return E.add(inner, 1);
      },
      () => [],
    );
    // The outer scope kept nothing, so the inner result and the sum are both back in the pool (no caller may hold an
    // inner result beyond its outer scope), and the next two outputs of that size reuse them.
    expect(pooledByteCount()).toBe(2 * 128 * 64 * 4);
    const next = [E.mul(x, 4), E.mul(x, 5)].map((t) => t.data.buffer);
    expect(next.includes(inner!.data.buffer)).toBe(true);
    expect(next.includes(whole.data.buffer)).toBe(false);
  });

  it("releases nothing when fn throws", () => {
    const x = E.randn([128, 64], new Rng(7));
    clearPool();
    expect(() =>
      E.tidy(() => {
        E.mul(x, 4);
        throw new Error("boom");
      }),
    ).toThrow("boom");
    expect(pooledByteCount()).toBe(0);
  });
});

describe("pool limit", () => {
  const N = 4096; // the smallest pooled length: 16 KB a buffer

  it("makes room for a released buffer by dropping the sizes used least recently, never refusing the new one", () => {
    const limit = 4 * N * 4 + 3 * 4; // room for exactly the four buffers below
    const before = setPoolLimit(limit);
    try {
      clearPool();
      const a = [1, 2].map(() => new Float32Array(N));
      const b = new Float32Array(N + 1);
      const c = new Float32Array(N + 2);
      for (const x of [...a, b, c]) release(x); // full: sizes N (two), N + 1, N + 2; N used least recently
      expect(pooledByteCount()).toBe(limit);
      // Taking size N + 1 makes it the most recently used size.
      expect(allocUninit(N + 1)).toBe(b);
      release(b);
      // A new size displaces the least recently used ones: size N (both buffers), then N + 2 if still needed.
      const d = new Float32Array(2 * N);
      release(d);
      expect(pooledByteCount()).toBe(limit); // both size-N buffers out (the same bytes as d), d in
      expect(allocUninit(2 * N)).toBe(d); // the newcomer was kept
      expect(allocUninit(N + 1)).toBe(b); // the recently used size survived
      expect(allocUninit(N)).not.toBe(a[0]); // the stale size went to the GC
      expect(allocUninit(N)).not.toBe(a[1]);
    } finally {
      setPoolLimit(before);
      clearPool();
    }
  });

  it("does not pool a buffer larger than the limit, and evicts nothing for it", () => {
    const before = setPoolLimit(2 * N * 4);
    try {
      clearPool();
      const small = new Float32Array(N);
      release(small);
      release(new Float32Array(3 * N));
      expect(pooledByteCount()).toBe(N * 4);
      expect(allocUninit(N)).toBe(small);
    } finally {
      setPoolLimit(before);
      clearPool();
    }
  });
});
