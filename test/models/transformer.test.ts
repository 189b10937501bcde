import { describe, expect, it } from "vitest";
import { noGrad } from "../../src/engine/index.js";
import { createModel } from "../../src/models/registry.js";
import { tokenLogprobs } from "../../src/models/transformer.js";
import { Rng } from "../../src/util/index.js";

const llama = createModel("micro-char", new Rng(1)).model.eval();
const gpt = createModel("micro-char", new Rng(2), { arch: "gpt2", nKvHeads: 4 }).model.eval();
const seq = Int32Array.from([1, 17, 20, 14, 22, 33, 40, 8]);

function maxDiff(a: Float32Array, b: Float32Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

describe.each([
  ["llama", llama],
  ["gpt2", gpt],
] as const)("Transformer (%s)", (_name, model) => {
  const V = model.config.vocabSize;

  it("gives the same logits through a KV cache fed in chunks (prefill 3, then 2, 1, 1, 1)", () => {
    const full = noGrad(() => model.forward(seq, 1, 8));
    const cache = model.newCache(1, 8);
    const parts: Float32Array[] = [];
    let at = 0;
    for (const n of [3, 2, 1, 1, 1]) {
      parts.push(noGrad(() => model.forward(seq.slice(at, at + n), 1, n, { cache })).data);
      at += n;
    }
    expect(cache.length).toBe(8);
    const joined = new Float32Array(8 * V);
    let off = 0;
    for (const p of parts) {
      joined.set(p, off);
      off += p.length;
    }
    expect(maxDiff(joined, full.data)).toBeLessThan(1e-5);
  });

  it("gives a left-padded row the logits of the unpadded row", () => {
    const short = seq.slice(0, 5);
    const alone = noGrad(() => model.forward(short, 1, 5));
    const ids = Int32Array.from([0, 0, 0, ...short, ...seq]); // (2, 8): row 0 left-padded
    const mask = Float32Array.from([0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
    const both = noGrad(() => model.forward(ids, 2, 8, { mask }));
    expect(maxDiff(both.data.subarray(3 * V, 8 * V), alone.data)).toBeLessThan(1e-5);
  });

  it("computes only the last position's logits with lastOnly", () => {
    const full = noGrad(() => model.forward(seq, 2, 4));
    const last = noGrad(() => model.forward(seq, 2, 4, { lastOnly: true }));
    expect(last.shape).toEqual([2, 1, V]);
    expect(maxDiff(last.data.subarray(0, V), full.data.subarray(3 * V, 4 * V))).toBeLessThan(1e-6);
    expect(maxDiff(last.data.subarray(V), full.data.subarray(7 * V, 8 * V))).toBeLessThan(1e-6);
  });

  it("hands a released cache's stores to the next cache of that shape, zeroed, with the same logits", () => {
    // 16 rows x 64 slots: each store is above the pool's 4096-element threshold.
    const rows = 16;
    const ids = Int32Array.from({ length: rows * 8 }, (_, i) => seq[i % 8]!);
    const decode = (cache: ReturnType<typeof model.newCache>) => {
      noGrad(() => model.forward(ids.subarray(0, rows * 7), rows, 7, { cache }));
      return noGrad(() => model.forward(ids.subarray(0, rows), rows, 1, { cache })).data.slice();
    };
    const first = model.newCache(rows, 64);
    const want = decode(first);
    const stores = (c: object) => {
      const { keys, values } = c as { keys: Float32Array[]; values: Float32Array[] };
      return [...keys, ...values];
    };
    const reused = stores(first)[0]!;
    first.release();
    const second = model.newCache(rows, 64);
    expect(stores(second)).toContain(reused); // the released store came back from the pool...
    for (const k of stores(second)) expect(k.every((x) => x === 0)).toBe(true); // ...zeroed
    expect(Array.from(decode(second))).toEqual(Array.from(want));
    expect(() => decode(first)).toThrow(/this cache was released/);
  });

  it("refuses a cache under grad mode and names bad shapes", () => {
    expect(() => model.forward(seq, 1, 8, { cache: model.newCache(1, 8) })).toThrow(/run cached decoding under noGrad/);
    expect(() => model.forward(seq, 2, 8)).toThrow(/8 ids do not fill \(B, T\) = \(2, 8\)/);
    expect(() => model.forward(seq, 1, 8, { mask: new Float32Array(3) })).toThrow(
      /mask has 3 values, expected \(B, Tk\) = \(1, 8\)/,
    );
  });
});

describe("tokenLogprobs", () => {
  it("is log_softmax(logits / T) at the targets, 0 where ignored, with gradients to the logits", () => {
    const logits = llama.forward(seq, 2, 4); // (2, 4, V)
    const targets = Int32Array.from([5, 6, -100, 7, 8, 9, 10, -100]);
    const lp = tokenLogprobs(logits, targets, 0.5);
    expect(lp.shape).toEqual([2, 4]);
    const V = llama.config.vocabSize;
    const row = Array.from(logits.data.subarray(V, 2 * V), (x) => x / 0.5);
    const lse = Math.log(row.reduce((s, x) => s + Math.exp(x), 0));
    expect(lp.data[1]!).toBeCloseTo(row[6]! - lse, 4);
    expect(lp.data[2]).toBe(0);
    expect(lp.requiresGrad).toBe(true);
  });
});
