/**
 * Gradient checks of every op against central finite differences, on every available backend.
 * FD step and tolerances: see gradcheck.ts (h = 1e-2, atol = 2e-3, rtol = 2e-2 unless a case states its own).
 * Inputs avoid kinks (relu/abs at 0, max/maximum ties) where the derivative is undefined.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as E from "../../src/engine/index.js";
import { allOps } from "../../src/engine/grad-table.js";
import { Rng } from "../../src/util/rng.js";
import { coveredOps, gradcheck, randInput } from "./gradcheck.js";

const awayFromZero = (shape: number[], seed: number) => {
  const x = randInput(shape, seed);
  return { data: Array.from(x.data, (v) => (v >= 0 ? v + 0.2 : v - 0.2)), shape };
};
const positive = (shape: number[], seed: number) => {
  const x = randInput(shape, seed, 0.3);
  return { data: Array.from(x.data, (v) => 1 + Math.abs(v)), shape };
};

describe.each(E.availableBackends())("gradcheck on %s", (name) => {
  beforeAll(() => void E.setBackend(name));

  it("the checker itself catches a wrong gradient", () => {
    // x * detach(x) has true derivative 2x but backward gives x.
    expect(() => gradcheck((t) => E.mul(t, t.detach()), [randInput([3], 0, 1, 2)])).toThrow(/analytic/);
  });

  it("binary ops with broadcasting", () => {
    const a = randInput([2, 3, 4], 1),
      b = randInput([3, 1], 2),
      c = randInput([4], 3);
    gradcheck((x, y) => E.add(x, y), [a, b]);
    gradcheck((x, y) => E.sub(x, y), [a, c]);
    gradcheck((x, y) => E.mul(x, y), [b, a]);
    gradcheck((x, y) => E.div(x, y), [a, positive([4], 4)]);
    gradcheck((x, y) => E.maximum(x, y), [randInput([3, 4], 5), randInput([4], 6)]);
    gradcheck((x, y) => E.minimum(x, y), [randInput([3, 4], 7), randInput([3, 1], 8)]);
  });

  it("scalar affine, pow, clamp", () => {
    gradcheck((x) => E.sub(E.mul(x, 2.5), 1), [randInput([5], 9)]);
    gradcheck((x) => E.div(1, x), [positive([5], 10)]);
    gradcheck((x) => E.pow(x, 3), [randInput([6], 11)]);
    gradcheck((x) => E.pow(x, -1.5), [positive([6], 12)]);
    gradcheck((x) => E.clamp(x, -0.5, 0.5), [{ data: [-1, -0.3, 0.1, 0.4, 0.9], shape: [5] }]);
  });

  it("unary ops", () => {
    const x = randInput([2, 5], 13);
    for (const f of [E.neg, E.exp, E.tanh, E.gelu, E.silu, E.sigmoid]) gradcheck(f, [x]);
    for (const f of [E.log, E.sqrt, E.rsqrt]) gradcheck(f, [positive([2, 5], 14)]);
    for (const f of [E.relu, E.abs]) gradcheck(f, [awayFromZero([2, 5], 15)]);
  });

  it("where and maskedFill", () => {
    const cond = E.tensor([1, 0, 1, 0, 0, 1], [2, 3]);
    gradcheck((a, b) => E.where(cond, a, b), [randInput([2, 3], 16), randInput([3], 17)]);
    gradcheck((x) => E.maskedFill(x, E.tensor([0, 1, 0], [3]), -5), [randInput([2, 3], 18)]);
  });

  it("sum, mean, max", () => {
    const x = randInput([2, 3, 4], 19);
    gradcheck((t) => E.sum(t), [x]);
    gradcheck((t) => E.sum(t, [0, 2]), [x]);
    gradcheck((t) => E.sum(t, -1, true), [x]);
    gradcheck((t) => E.mean(t, 1), [x]);
    gradcheck((t) => E.max(t, -1), [x]);
    gradcheck((t) => E.max(t, 1, true), [x]);
  });

  it("reshape, permute, transpose, slice, concat", () => {
    const x = randInput([2, 3, 4], 20);
    gradcheck((t) => E.reshape(t, [4, -1]), [x]);
    gradcheck((t) => E.permute(t, [2, 0, 1]), [x]);
    gradcheck((t) => E.transpose(t, 0, -1), [x]);
    gradcheck((t) => E.transpose(t, 1, 2), [randInput([2, 1, 3, 4], 22)]); // a view (only a size-1 axis moves)
    gradcheck((t) => E.slice(t, 1, 1, 3), [x]);
    gradcheck((a, b) => E.concat([a, b, a], 1), [x, randInput([2, 1, 4], 21)]);
  });

  it("matmul: plain, transposed, batched, broadcast", () => {
    gradcheck((a, b) => E.matmul(a, b), [randInput([3, 4], 22), randInput([4, 2], 23)]);
    gradcheck((a, b) => E.matmul(a, b, { transA: true }), [randInput([4, 3], 24), randInput([4, 2], 25)]);
    gradcheck((a, b) => E.matmul(a, b, { transB: true }), [randInput([2, 3, 4], 26), randInput([5, 4], 27)]);
    gradcheck(
      (a, b) => E.matmul(a, b, { transA: true, transB: true }),
      [randInput([2, 4, 3], 28), randInput([2, 5, 4], 29)],
    );
    gradcheck((a, b) => E.matmul(a, b), [randInput([3, 4], 30), randInput([2, 4, 2], 31)]);
    gradcheck((a, b) => E.matmul(a, b), [randInput([2, 1, 3, 4], 32), randInput([1, 3, 4, 2], 33)]);
    gradcheck((a, b) => E.matmul(a, b, { transA: true }), [randInput([2, 4, 3], 34), randInput([4, 2], 35)]);
  });

  it("linear with and without bias", () => {
    gradcheck((x, w, b) => E.linear(x, w, b), [randInput([2, 3, 4], 49), randInput([5, 4], 50), randInput([5], 51)]);
    gradcheck((x, w) => E.linear(x, w, null), [randInput([3, 4], 52), randInput([2, 4], 53)]);
  });

  it("embedding (repeated ids accumulate)", () => {
    const ids = Int32Array.from([2, 0, 2, 1]);
    gradcheck((t) => E.embedding(t, ids, [2, 2]), [randInput([3, 4], 36)]);
  });

  it("softmax, logSoftmax (last and inner axis)", () => {
    const x = randInput([2, 3, 4], 37);
    gradcheck((t) => E.softmax(t), [x]);
    gradcheck((t) => E.softmax(t, 1), [x]);
    gradcheck((t) => E.logSoftmax(t), [x]);
    gradcheck((t) => E.logSoftmax(t, 0), [x]);
  });

  it("crossEntropy: mean with ignored rows, sum, none", () => {
    const x = randInput([4, 5], 38);
    const t = Int32Array.from([1, -100, 4, 0]);
    gradcheck((l) => E.crossEntropy(l, t), [x]);
    gradcheck((l) => E.crossEntropy(l, t, { reduction: "sum" }), [x]);
    gradcheck((l) => E.crossEntropy(l, Int32Array.from([1, 3, 4, 3]), { reduction: "none", ignoreIndex: 3 }), [x]);
  });

  it("layerNorm (with and without bias), rmsNorm", () => {
    const x = randInput([3, 6], 39);
    gradcheck((t, w, b) => E.layerNorm(t, w, b), [x, randInput([6], 40, 0.5, 1), randInput([6], 41)]);
    gradcheck((t, w) => E.layerNorm(t, w, null), [x, randInput([6], 42, 0.5, 1)]);
    gradcheck((t, w) => E.rmsNorm(t, w), [x, randInput([6], 43, 0.5, 1)]);
  });

  it("rope with a position offset", () => {
    gradcheck((t) => E.rope(t, { posOffset: 3, theta: 100 }), [randInput([1, 2, 3, 4], 44)]);
  });

  it("attention: causal, GQA, KV-cache offset, padding mask", () => {
    const q = randInput([1, 4, 2, 4], 45),
      k = randInput([1, 2, 5, 4], 46),
      v = randInput([1, 2, 5, 4], 47);
    const mask = Float32Array.from([0, 1, 1, 1, 1]);
    gradcheck((a, b, c) => E.scaledDotProductAttention(a, b, c, { mask }), [q, k, v]);
    gradcheck((a, b, c) => E.scaledDotProductAttention(a, b, c, { causal: false }), [q, k, v]);
  });

  it("dropout is a mask multiply (fixed seed)", () => {
    const x = randInput([10], 48);
    gradcheck((t) => E.dropout(t, 0.3, new Rng(7)), [x]);
  });
});

afterAll(() => {
  // Every op of the closed set was exercised by some gradcheck above.
  const missing = allOps().filter((op) => !coveredOps.has(op));
  expect(missing).toEqual([]);
});

describe("gradcheck itself", () => {
  // sqrt(x * x) at x = 0: the forward is 0 and the central difference is (|h| - |-h|) / 2h = 0, but the chain rule
  // gives d sqrt(0) * d(x^2) = (0.5 / 0) * 0 = Inf * 0 = NaN. A checker that compares with `err > tol` passes it.
  it("fails on a NaN analytic gradient", () => {
    const f = (x: E.Tensor): E.Tensor => E.sqrt(E.mul(x, x));
    expect(() => gradcheck(f, [{ data: [0, 0.5], shape: [2] }])).toThrow(/analytic NaN/);
  });

  it("fails on a wrong finite gradient and passes a right one", () => {
    // A custom forward whose backward is off by a factor 2: y = x * x computed as mul(x, stopGrad(x)) gives dy = x dx.
    const wrong = (x: E.Tensor): E.Tensor => E.mul(x, new E.Tensor(Float32Array.from(x.data), x.shape));
    expect(() => gradcheck(wrong, [{ data: [1.5, -2], shape: [2] }])).toThrow(/analytic/);
    expect(() => gradcheck((x) => E.mul(x, x), [{ data: [1.5, -2], shape: [2] }])).not.toThrow();
  });
});
