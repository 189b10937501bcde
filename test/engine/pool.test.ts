/**
 * The buffer pool recycles only what the engine owns: repeated training steps with tensors big enough to be
 * pooled give bit-identical gradients, and nothing a caller holds (outputs, leaf gradients) changes later.
 */
import { beforeAll, describe, expect, it } from "vitest";
import * as E from "../../src/engine/index.js";
import { pooledByteCount } from "../../src/engine/pool.js";
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
      loss.backward();
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
