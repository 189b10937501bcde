/**
 * Forward values of every op against hand-computed numbers, on every available backend (tolerance 1e-6
 * absolute + 1e-6 relative unless stated; the expected values were worked out by hand or to 7+ digits).
 */
import { beforeAll, describe, expect, it } from "vitest";
import * as E from "../../src/engine/index.js";
import { Rng } from "../../src/util/rng.js";
import { expectClose } from "./gradcheck.js";

const T = (data: number[], shape: number[]) => E.tensor(data, shape);
const m23 = () => T([1, 2, 3, 4, 5, 6], [2, 3]);

describe.each(E.availableBackends())("op values on %s", (name) => {
  beforeAll(() => void E.setBackend(name));

  it("binary arithmetic with broadcasting", () => {
    expectClose(E.add(m23(), T([10, 20, 30], [3])).data, [11, 22, 33, 14, 25, 36]);
    expectClose(E.sub(m23(), T([1, 2], [2, 1])).data, [0, 1, 2, 2, 3, 4]);
    expectClose(E.mul(T([2], [1]), m23()).data, [2, 4, 6, 8, 10, 12]);
    expectClose(E.div(m23(), T([1, 2, 4], [3])).data, [1, 1, 0.75, 4, 2.5, 1.5]);
    expectClose(E.maximum(m23(), 3.5).data, [3.5, 3.5, 3.5, 4, 5, 6]);
    expectClose(E.minimum(m23(), T([2, 9, 0], [3])).data, [1, 2, 0, 2, 5, 0]);
    expectClose(E.sub(10, m23()).data, [9, 8, 7, 6, 5, 4]);
    expectClose(E.div(1, T([4], [1])).data, [0.25]);
    expect(E.add(T([1, 2, 3], [3, 1]), T([10, 20], [2])).shape).toEqual([3, 2]);
  });

  it("unary functions", () => {
    const x = T([-1, 0, 0.5, 1], [4]);
    expectClose(E.neg(x).data, [1, 0, -0.5, -1]);
    expectClose(E.exp(x).data, [0.36787944, 1, 1.64872127, 2.71828183]);
    expectClose(E.log(T([1, Math.E, 0.5], [3])).data, [0, 1, -0.69314718]);
    expectClose(E.sqrt(T([4, 2], [2])).data, [2, 1.41421356]);
    expectClose(E.rsqrt(T([4, 0.25], [2])).data, [0.5, 2]);
    expectClose(E.tanh(x).data, [-0.76159416, 0, 0.46211716, 0.76159416]);
    // gelu_new(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    expectClose(E.gelu(x).data, [-0.15880801, 0, 0.34571401, 0.84119199]);
    expectClose(E.silu(x).data, [-0.26894142, 0, 0.31122967, 0.73105858]);
    expectClose(E.relu(x).data, [0, 0, 0.5, 1]);
    expectClose(E.abs(x).data, [1, 0, 0.5, 1]);
    expectClose(E.sigmoid(x).data, [0.26894142, 0.5, 0.62245933, 0.73105858]);
    expectClose(E.pow(T([2, 4], [2]), 3).data, [8, 64]);
    expectClose(E.pow(T([4, 9], [2]), 0.5).data, [2, 3]);
    expectClose(E.clamp(x, -0.5, 0.6).data, [-0.5, 0, 0.5, 0.6]);
  });

  it("where, maskedFill", () => {
    expectClose(E.where(T([1, 0, 1], [3]), T([1, 2, 3], [3]), 0).data, [1, 0, 3]);
    const filled = E.maskedFill(m23(), T([0, 1, 0], [3]), -Infinity);
    expect(Array.from(filled.data)).toEqual([1, -Infinity, 3, 4, -Infinity, 6]);
    expectClose(E.softmax(filled).data, [0.11920292, 0, 0.88079708, 0.11920292, 0, 0.88079708]);
  });

  it("sum, mean, max", () => {
    expectClose(E.sum(m23()).data, [21]);
    expect(E.sum(m23()).shape).toEqual([]);
    expectClose(E.sum(m23(), 0).data, [5, 7, 9]);
    expectClose(E.sum(m23(), -1, true).data, [6, 15]);
    expect(E.sum(m23(), -1, true).shape).toEqual([2, 1]);
    expectClose(E.mean(m23()).data, [3.5]);
    expectClose(E.mean(m23(), 0).data, [2.5, 3.5, 4.5]);
    expectClose(E.max(m23(), 0).data, [4, 5, 6]);
    expectClose(E.max(m23(), 1).data, [3, 6]);
    expect(E.max(m23(), 0, true).shape).toEqual([1, 3]);
  });

  it("reshape, transpose, permute, slice, concat", () => {
    expect(E.reshape(m23(), [3, -1]).shape).toEqual([3, 2]);
    expectClose(E.transpose(m23(), 0, 1).data, [1, 4, 2, 5, 3, 6]);
    const x = T([...Array(24).keys()], [2, 3, 4]);
    const p = E.permute(x, [2, 0, 1]);
    expect(p.shape).toEqual([4, 2, 3]);
    expectClose(p.data.slice(0, 6), [0, 4, 8, 12, 16, 20]);
    expectClose(E.slice(m23(), 1, 1, 3).data, [2, 3, 5, 6]);
    expectClose(E.slice(m23(), 0, -1, 2).data, [4, 5, 6]);
    expectClose(E.concat([m23(), T([7, 8], [2, 1])], 1).data, [1, 2, 3, 7, 4, 5, 6, 8]);
    expectClose(E.concat([m23(), T([7, 8, 9], [1, 3])], 0).data, [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it("permute moving only axes of size 1 is a view with the copied values", () => {
    const x = T([...Array(24).keys()], [2, 1, 3, 4]); // a decoding step's (B, 1, H, D)
    const v = E.transpose(x, 1, 2); // (B, H, 1, D): same memory order
    expect(v.shape).toEqual([2, 3, 1, 4]);
    expect(v.data).toBe(x.data);
    const moved = E.permute(x, [1, 0, 2, 3]); // (1, B, H, D): also a view
    expect(moved.data).toBe(x.data);
    // (B, 1, H, D) → (H, 1, B, D) swaps B and H: a copy, value (h, 0, b, d) = x[b, 0, h, d]
    const c = E.permute(x, [2, 1, 0, 3]);
    expect(c.data).not.toBe(x.data);
    expectClose(c.data.slice(0, 8), [0, 1, 2, 3, 12, 13, 14, 15]);
  });

  it("matmul: plain, transposed, batched with a shared operand", () => {
    const b = T([1, 0, 0, 1, 1, 1], [3, 2]);
    expectClose(E.matmul(m23(), b).data, [4, 5, 10, 11]);
    expectClose(E.matmul(b, m23(), { transA: true, transB: true }).data, [4, 10, 5, 11]);
    expectClose(E.matmul(m23(), m23(), { transB: true }).data, [14, 32, 32, 77]);
    expectClose(E.matmul(m23(), m23(), { transA: true }).data, [17, 22, 27, 22, 29, 36, 27, 36, 45]);
    const batched = E.matmul(E.reshape(E.concat([m23(), E.mul(m23(), 2)], 0), [2, 2, 3]), b);
    expectClose(batched.data, [4, 5, 10, 11, 8, 10, 20, 22]);
    // A larger product against a float64 reference (exercises the blocked paths).
    const rng = new Rng(3);
    const [m, k, n] = [37, 150, 530];
    const A = E.randn([m, k], rng),
      B = E.randn([n, k], rng);
    const C = E.matmul(A, B, { transB: true });
    for (const [i, j] of [
      [0, 0],
      [5, 529],
      [36, 311],
      [20, 7],
    ] as const) {
      let s = 0;
      for (let p = 0; p < k; p++) s += A.data[i * k + p]! * B.data[j * k + p]!;
      expect(C.data[i * n + j]).toBeCloseTo(s, 3);
    }
    const C2 = E.matmul(A, E.transpose(B, 0, 1));
    expectClose(C2.data, C.data, 1e-4, 1e-4);
  });

  it("linear = x W^T + b", () => {
    const w = T([1, 0, 0, 1, 1, 1], [3, 2]);
    expectClose(E.linear(T([1, 2, 3, 4], [2, 2]), w, T([10, 20, 30], [3])).data, [11, 22, 33, 13, 24, 37]);
    expectClose(E.linear(T([1, 2], [1, 2]), w, null).data, [1, 2, 3]);
    expect(() => E.linear(T([1, 2, 3], [1, 3]), w, null)).toThrow(
      "linear: x (1, 3), weight (3, 2): need weight (out, 3) and bias (out)",
    );
  });

  it("embedding gather", () => {
    const table = T([1, 2, 3, 4, 5, 6], [3, 2]);
    const y = E.embedding(table, Int32Array.from([2, 0, 1, 2]), [2, 2]);
    expect(y.shape).toEqual([2, 2, 2]);
    expectClose(y.data, [5, 6, 1, 2, 3, 4, 5, 6]);
  });

  it("softmax, logSoftmax, crossEntropy", () => {
    const x = T([1, 2, 3, 1, 1, 1], [2, 3]);
    expectClose(E.softmax(x).data, [0.09003057, 0.24472847, 0.66524096, 1 / 3, 1 / 3, 1 / 3]);
    expectClose(E.logSoftmax(x).data, [-2.40760596, -1.40760596, -0.40760596, -1.09861229, -1.09861229, -1.09861229]);
    expectClose(E.softmax(x, 0).data, [0.5, 0.73105858, 0.88079708, 0.5, 0.26894142, 0.11920292]);
    const t = Int32Array.from([2, 0]);
    expectClose(E.crossEntropy(x, t, { reduction: "none" }).data, [0.40760596, 1.09861229]);
    expectClose(E.crossEntropy(x, t).data, [(0.40760596 + 1.09861229) / 2]);
    expectClose(E.crossEntropy(x, t, { reduction: "sum" }).data, [0.40760596 + 1.09861229]);
    // Ignored rows count for nothing, in the loss or the mean's denominator.
    expectClose(E.crossEntropy(x, Int32Array.from([-100, 0])).data, [1.09861229]);
    expectClose(E.crossEntropy(x, Int32Array.from([-100, -100])).data, [0]);
  });

  it("layerNorm, rmsNorm", () => {
    const x = T([1, 2, 3], [1, 3]);
    expectClose(E.layerNorm(x, T([1, 1, 1], [3]), T([0, 0, 0], [3])).data, [-1.22473562, 0, 1.22473562]);
    expectClose(E.layerNorm(x, T([2, 1, 1], [3]), T([1, 1, 1], [3])).data, [-1.44947124, 1, 2.22473562]);
    expectClose(E.rmsNorm(x, T([1, 1, 2], [3])).data, [0.46291005, 0.9258201, 2.77746029]);
  });

  it("rope: rotate-half convention, positions from posOffset", () => {
    // D = 2: one frequency (theta^0 = 1); position p rotates (x0, x1) by p radians.
    const x = T([1, 0, 1, 0, 0, 1], [1, 1, 3, 2]);
    expectClose(E.rope(x).data, [1, 0, Math.cos(1), Math.sin(1), -Math.sin(2), Math.cos(2)], 1e-6);
    expectClose(E.rope(T([1, 0], [1, 1, 1, 2]), { posOffset: 2 }).data, [Math.cos(2), Math.sin(2)], 1e-6);
    // D = 4, theta = 100: frequencies 1 and 100^(-1/2) = 0.1; pairs are (x0, x2) and (x1, x3).
    const y = E.rope(T([1, 1, 0, 0], [1, 1, 1, 4]), { posOffset: 3, theta: 100 });
    expectClose(y.data, [Math.cos(3), Math.cos(0.3), Math.sin(3), Math.sin(0.3)], 1e-6);
  });

  it("scaledDotProductAttention: hand-computed causal case and padding", () => {
    const q = T([1, 1], [1, 1, 2, 1]),
      k = T([0, Math.log(3)], [1, 1, 2, 1]),
      v = T([1, 5], [1, 1, 2, 1]);
    // Row 0 sees key 0 only; row 1 weights keys 1:3 → 0.25 * 1 + 0.75 * 5.
    expectClose(E.scaledDotProductAttention(q, k, v, { scale: 1 }).data, [1, 4]);
    expectClose(E.scaledDotProductAttention(q, k, v, { scale: 1, causal: false }).data, [4, 4]);
    // Key 0 is padding: row 0 has nothing to attend to (zeros, not NaN); row 1 sees key 1 only.
    expectClose(E.scaledDotProductAttention(q, k, v, { scale: 1, mask: Float32Array.from([0, 1]) }).data, [0, 5]);
  });

  it("dropout: zero or scaled, identity outside training", () => {
    const x = E.ones([1000]);
    const y = E.dropout(x, 0.25, new Rng(1));
    const zerosCount = y.toArray().filter((v) => v === 0).length;
    expect(y.toArray().every((v) => v === 0 || Math.abs(v - 4 / 3) < 1e-6)).toBe(true);
    expect(zerosCount).toBeGreaterThan(200);
    expect(zerosCount).toBeLessThan(300);
    expect(E.dropout(x, 0.25, new Rng(1), false)).toBe(x);
    expect(E.dropout(x, 0, new Rng(1))).toBe(x);
  });
});
