/**
 * Native elementwise kernels against the js twins: unary maps and gradients (inputs spanning tiny, moderate
 * and large magnitudes), pow/affine/axpy, broadcasting binary ops and their gradients, where and strided
 * copies (permutes, slices with offsets, broadcast expansion, sum-reduction). Sizes include 1, 7, 33 and 130
 * so vector tails are exercised, and one size large enough to run on the thread pool.
 * Tolerances: 2e-6 relative for exact IEEE ops (add, mul, sqrt, ...), 1e-5 relative (+1e-6 absolute) for
 * polynomial transcendental approximations (exp, log, tanh, sigmoid, GELU, SiLU).
 */
import { describe, expect, it } from "vitest";
import { jsKernels } from "../../src/engine/backends/js.js";
import type { BinaryOp, UnaryOp } from "../../src/engine/backends/kernels.js";
import { contiguousStrides } from "../../src/engine/backends/js-strided.js";
import { Rng } from "../../src/util/rng.js";
import { expectClose, native, randn } from "./helpers.js";

const SIZES = [1, 7, 33, 130, 100_003];
const UNARY: UnaryOp[] = ["neg", "exp", "log", "sqrt", "rsqrt", "tanh", "gelu", "silu", "relu", "abs", "sigmoid"];
const BINARY: BinaryOp[] = ["add", "sub", "mul", "div", "maximum", "minimum"];

// Inputs with a spread of magnitudes: tiny (tanh/GELU relative precision), moderate, and large (saturation).
function spread(rng: Rng, n: number, positive: boolean): Float32Array {
  const x = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const scale = [1e-4, 0.3, 1, 4, 30][i % 5]!;
    const v = rng.normal() * scale;
    x[i] = positive ? Math.abs(v) + 1e-3 : v;
  }
  return x;
}

describe.skipIf(!native)("native elementwise kernels vs js", () => {
  it("unary forward and backward", () => {
    const rng = new Rng(10);
    for (const op of UNARY) {
      for (const n of SIZES) {
        const x = spread(rng, n, op === "log" || op === "sqrt" || op === "rsqrt");
        const want = new Float32Array(n),
          got = new Float32Array(n);
        jsKernels.unary(op, x, want);
        native!.unary(op, x, got);
        expectClose(got, want, 1e-5, 1e-6, `unary ${op} n=${n}`);
        const dy = randn(rng, n),
          dx0 = randn(rng, n);
        const dWant = dx0.slice(),
          dGot = dx0.slice();
        jsKernels.unaryBackward(op, x, want, dy, dWant);
        native!.unaryBackward(op, x, want, dy, dGot);
        expectClose(dGot, dWant, 1e-5, 1e-5, `unaryBackward ${op} n=${n}`);
      }
    }
  });

  it("special values: exp/log/tanh at 0, infinities and NaN", () => {
    const x = new Float32Array([0, -0, Infinity, -Infinity, NaN, -100, 100, 88, -87]);
    for (const op of ["exp", "tanh", "sigmoid", "gelu", "silu", "relu", "abs"] as UnaryOp[]) {
      const want = new Float32Array(x.length),
        got = new Float32Array(x.length);
      jsKernels.unary(op, x, want);
      native!.unary(op, x, got);
      expectClose(got, want, 1e-5, 1e-30, `unary ${op} special values`);
    }
    const pos = new Float32Array([0, Infinity, 1, 1e-40, 3e38, -1, NaN]);
    const want = new Float32Array(pos.length),
      got = new Float32Array(pos.length);
    jsKernels.unary("log", pos, want);
    native!.unary("log", pos, got);
    expectClose(got, want, 1e-5, 0, "log special values");
  });

  it("powScalar, affine, axpy", () => {
    const rng = new Rng(11);
    for (const n of SIZES) {
      const x = spread(rng, n, true);
      for (const p of [2, 1, 0.5, 3, -1.5]) {
        const want = new Float32Array(n),
          got = new Float32Array(n);
        jsKernels.powScalar(x, p, want);
        native!.powScalar(x, p, got);
        expectClose(got, want, 2e-6, 0, `pow ${p} n=${n}`);
      }
      const want = new Float32Array(n),
        got = new Float32Array(n);
      jsKernels.affine(x, -1.7, 0.25, want);
      native!.affine(x, -1.7, 0.25, got);
      expectClose(got, want, 2e-6, 1e-7, `affine n=${n}`);
      const y0 = randn(rng, n),
        yw = y0.slice(),
        yg = y0.slice();
      jsKernels.axpy(0.3, x, yw);
      native!.axpy(0.3, x, yg);
      expectClose(yg, yw, 2e-6, 1e-7, `axpy n=${n}`);
    }
  });

  // Broadcast cases: [out shape, a shape, b shape] (numpy rules, right-aligned).
  const CASES: [number[], number[], number[]][] = [
    [[7], [7], [7]],
    [[130], [130], [1]],
    [[33, 7], [33, 7], [7]],
    [
      [33, 7],
      [33, 1],
      [1, 7],
    ],
    [
      [2, 3, 130],
      [2, 1, 130],
      [3, 1],
    ],
    [
      [4, 5, 6, 7],
      [4, 1, 6, 1],
      [5, 1, 7],
    ],
    [[300, 257], [300, 257], [257]],
    [[1], [1], [1]],
    [[0, 3], [0, 3], [3]],
  ];
  function bstrides(shape: number[], outShape: number[]): number[] {
    const s = contiguousStrides(shape);
    const off = outShape.length - shape.length;
    return outShape.map((n, d) => (d < off || shape[d - off] === 1 ? 0 : s[d - off]!));
  }
  const size = (s: number[]) => s.reduce((a, b) => a * b, 1);

  it("binary forward and backward with broadcasting", () => {
    const rng = new Rng(12);
    for (const op of BINARY) {
      for (const [outS, aS, bS] of CASES) {
        const a = randn(rng, size(aS)),
          b = randn(rng, size(bS));
        if (op === "maximum" || op === "minimum")
          for (let i = 0; i < Math.min(a.length, b.length); i += 3) b[i] = a[i]!; // ties
        const sa = bstrides(aS, outS),
          sb = bstrides(bS, outS);
        const want = new Float32Array(size(outS)),
          got = new Float32Array(size(outS));
        jsKernels.binary(op, a, sa, b, sb, want, outS);
        native!.binary(op, a, sa, b, sb, got, outS);
        expectClose(got, want, 2e-6, 0, `binary ${op} ${JSON.stringify([outS, aS, bS])}`);
        const dy = randn(rng, size(outS));
        const da0 = randn(rng, a.length),
          db0 = randn(rng, b.length);
        const daW = da0.slice(),
          dbW = db0.slice(),
          daG = da0.slice(),
          dbG = db0.slice();
        jsKernels.binaryBackward(op, a, sa, b, sb, dy, daW, dbW, outS);
        native!.binaryBackward(op, a, sa, b, sb, dy, daG, dbG, outS);
        const tol = 1e-5 * Math.sqrt(Math.max(1, size(outS) / Math.max(1, Math.min(a.length, b.length))));
        expectClose(daG, daW, tol, tol, `binaryBackward ${op} da ${JSON.stringify(outS)}`);
        expectClose(dbG, dbW, tol, tol, `binaryBackward ${op} db ${JSON.stringify(outS)}`);
        const dbOnly = db0.slice();
        native!.binaryBackward(op, a, sa, b, sb, dy, null, dbOnly, outS);
        expectClose(dbOnly, dbW, tol, tol, `binaryBackward ${op} da = null`);
      }
    }
  });

  it("binary NaN propagation in maximum/minimum", () => {
    const a = new Float32Array([NaN, 1, 2, NaN, 5, 6, 7, 8, 9]),
      b = new Float32Array([1, NaN, 3, NaN, 1, 1, 1, 1, 1]);
    for (const op of ["maximum", "minimum"] as BinaryOp[]) {
      const want = new Float32Array(9),
        got = new Float32Array(9);
      jsKernels.binary(op, a, [1], b, [1], want, [9]);
      native!.binary(op, a, [1], b, [1], got, [9]);
      expectClose(got, want, 0, 0, `${op} NaN`);
    }
  });

  it("where with broadcast condition", () => {
    const rng = new Rng(13);
    for (const [outS, cS, aS] of CASES) {
      const cond = new Float32Array(size(cS)).map(() => (rng.random() < 0.5 ? 0 : 1));
      const a = randn(rng, size(aS)),
        b = randn(rng, size(outS));
      const sc = bstrides(cS, outS),
        sa = bstrides(aS, outS),
        sb = contiguousStrides(outS);
      const want = new Float32Array(size(outS)),
        got = new Float32Array(size(outS));
      jsKernels.where(cond, sc, a, sa, b, sb, want, outS);
      native!.where(cond, sc, a, sa, b, sb, got, outS);
      expectClose(got, want, 0, 0, `where ${JSON.stringify(outS)}`);
    }
  });

  it("stridedCopy: permute, slice with offsets, broadcast, sum-reduce", () => {
    const rng = new Rng(14);
    // permute (B, T, H, D) -> (B, H, T, D)
    const [B, T, H, D] = [2, 33, 4, 7];
    const x = randn(rng, B * T * H * D);
    const xs = contiguousStrides([B, T, H, D]);
    const shape = [B, H, T, D];
    const permX = [xs[0]!, xs[2]!, xs[1]!, xs[3]!];
    const outS = contiguousStrides(shape);
    for (const accumulate of [false, true]) {
      const o0 = randn(rng, x.length),
        w = o0.slice(),
        g = o0.slice();
      jsKernels.stridedCopy(x, 0, permX, w, 0, outS, shape, accumulate);
      native!.stridedCopy(x, 0, permX, g, 0, outS, shape, accumulate);
      expectClose(g, w, 2e-6, 1e-7, `permute acc=${accumulate}`);
    }
    // slice columns [3, 10) of a (130, 17) matrix into the middle of a (130, 20) buffer at column 5
    const m = randn(rng, 130 * 17);
    const w = new Float32Array(130 * 20),
      g = new Float32Array(130 * 20);
    jsKernels.stridedCopy(m, 3, [17, 1], w, 5, [20, 1], [130, 7], false);
    native!.stridedCopy(m, 3, [17, 1], g, 5, [20, 1], [130, 7], false);
    expectClose(g, w, 0, 0, "slice with offsets");
    // broadcast expansion (7,) -> (33, 7) and sum-reduction back
    const v = randn(rng, 7);
    const e1 = new Float32Array(33 * 7),
      e2 = new Float32Array(33 * 7);
    jsKernels.stridedCopy(v, 0, [0, 1], e1, 0, [7, 1], [33, 7], false);
    native!.stridedCopy(v, 0, [0, 1], e2, 0, [7, 1], [33, 7], false);
    expectClose(e2, e1, 0, 0, "broadcast expand");
    const big = randn(rng, 300 * 130);
    for (const [xsr, os] of [
      [
        [130, 1],
        [0, 1],
      ],
      [
        [130, 1],
        [1, 0],
      ],
    ] as const) {
      const n = os[0] === 0 ? 130 : 300;
      const r1 = randn(rng, n),
        r2 = r1.slice();
      jsKernels.stridedCopy(big, 0, xsr, r1, 0, os, [300, 130], true);
      native!.stridedCopy(big, 0, xsr, r2, 0, os, [300, 130], true);
      expectClose(r2, r1, 1e-5, 1e-5, `sum-reduce ${JSON.stringify(os)}`);
    }
  });

  it("rejects strides that reach past a buffer", () => {
    expect(() =>
      native!.binary("add", new Float32Array(6), [3, 1], new Float32Array(2), [0, 1], new Float32Array(6), [2, 3]),
    ).toThrow(/native binary: b needs 3 elements, has 2/);
  });
});
