/**
 * The numeric procedures behind unsimplified maths answers (src/rewards/math/numeric.ts), against hand-computed
 * values: Gauss–Kronrod quadrature (the qk15 constants are exact on polynomials of degree ≤ 22 here), infinite
 * ranges, limits by extrapolation (one- and two-sided, at infinity), exact and floating-point determinants, and
 * the NaN outcome when a result cannot be trusted. Work is counted on a meter, never timed.
 */
import { describe, expect, it } from "vitest";
import { type Rational, rat } from "../../src/rewards/math/ast.js";
import { Work } from "../../src/rewards/math/budget.js";
import { detExact, detFloat, integrate, limit } from "../../src/rewards/math/numeric.js";

const close = (a: number, b: number, rel = 1e-12): boolean => Math.abs(a - b) <= rel * Math.max(1, Math.abs(b));

describe("integrate (adaptive Gauss–Kronrod 7–15)", () => {
  it("is exact on x^k over [0, 1] for k = 0..22: 1/(k+1)", () => {
    for (let k = 0; k <= 22; k++) {
      expect(
        close(
          integrate((x) => x ** k, 0, 1, new Work()),
          1 / (k + 1),
        ),
        `k=${k}`,
      ).toBe(true);
    }
  });
  it.each([
    ["sin on [0, π]", (x: number) => Math.sin(x), 0, Math.PI, 2],
    ["e^-x on [0, ∞)", (x: number) => Math.exp(-x), 0, Infinity, 1],
    ["1/(1+x²) on ℝ", (x: number) => 1 / (1 + x * x), -Infinity, Infinity, Math.PI],
    ["e^(-x²) on ℝ", (x: number) => Math.exp(-x * x), -Infinity, Infinity, Math.sqrt(Math.PI)],
    ["e^x on (-∞, 0]", (x: number) => Math.exp(x), -Infinity, 0, 1],
    ["reversed limits change the sign", (x: number) => x, 1, 0, -0.5],
  ] as [string, (x: number) => number, number, number, number][])("%s", (_name, f, lo, hi, want) => {
    expect(close(integrate(f, lo, hi, new Work()), want, 1e-10)).toBe(true);
  });
  it("gives NaN when it does not converge within the panel cap, after bounded work", () => {
    const w = new Work();
    expect(integrate((x) => Math.sin(1 / x), 0, 1, w)).toBeNaN();
    expect(w.used).toBeGreaterThan(0);
    expect(w.used).toBeLessThan(w.limit);
  });
  it("gives NaN for a divergent integral (1/x on [0, 1])", () => {
    expect(integrate((x) => 1 / x, 0, 1, new Work())).toBeNaN();
  });
});

describe("limit (Neville extrapolation)", () => {
  it.each([
    ["sin x / x at 0", (x: number) => Math.sin(x) / x, 0, "", 1],
    ["(e^x − 1)/x at 0", (x: number) => Math.expm1(x) / x, 0, "", 1],
    ["(x² − 4)/(x − 2) at 2", (x: number) => (x * x - 4) / (x - 2), 2, "", 4],
    ["(1 + 1/x)^x at ∞", (x: number) => (1 + 1 / x) ** x, Infinity, "", Math.E],
    ["(2x + 1)/(x − 3) at −∞", (x: number) => (2 * x + 1) / (x - 3), -Infinity, "", 2],
    ["|x|/x at 0 from the right", (x: number) => Math.abs(x) / x, 0, "+", 1],
    ["|x|/x at 0 from the left", (x: number) => Math.abs(x) / x, 0, "-", -1],
  ] as [string, (x: number) => number, number, "" | "+" | "-", number][])("%s", (_name, f, a, side, want) => {
    expect(close(limit(f, a, side, new Work()), want, 1e-9)).toBe(true);
  });
  it.each([
    ["|x|/x at 0 (two sides disagree)", (x: number) => Math.abs(x) / x, 0],
    ["sin(1/x) at 0 (oscillates)", (x: number) => Math.sin(1 / x), 0],
    ["1/x² at 0 (diverges)", (x: number) => 1 / (x * x), 0],
  ] as [string, (x: number) => number, number][])("%s → NaN", (_name, f, a) => {
    expect(limit(f, a, "", new Work())).toBeNaN();
  });
});

describe("determinants", () => {
  const hilbert = (n: number): Rational[][] =>
    Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => rat(1n, BigInt(i + j + 1))));
  it("exact: the Hilbert matrices of order 2, 3, 4 (1/12, 1/2160, 1/6048000)", () => {
    expect(detExact(hilbert(2), new Work())).toEqual({ n: 1n, d: 12n });
    expect(detExact(hilbert(3), new Work())).toEqual({ n: 1n, d: 2160n });
    expect(detExact(hilbert(4), new Work())).toEqual({ n: 1n, d: 6048000n });
  });
  it("exact: a row swap flips the sign; a zero column gives 0; a non-square or 13×13 matrix gives null", () => {
    const m = [
      [rat(0n), rat(1n)],
      [rat(1n), rat(0n)],
    ];
    expect(detExact(m, new Work())).toEqual({ n: -1n, d: 1n });
    expect(
      detExact(
        [
          [rat(0n), rat(1n)],
          [rat(0n), rat(2n)],
        ],
        new Work(),
      ),
    ).toEqual({ n: 0n, d: 1n });
    expect(detExact([[rat(1n), rat(2n)]], new Work())).toBeNull();
    const big = Array.from({ length: 13 }, (_, i) => Array.from({ length: 13 }, (_, j) => rat(i === j ? 1n : 0n)));
    expect(detExact(big, new Work())).toBeNull();
  });
  it("floating point with partial pivoting: [[1, 2], [3, 4]] is −2; a rotation has determinant 1", () => {
    expect(
      close(
        detFloat(
          [
            [1, 2],
            [3, 4],
          ],
          new Work(),
        ),
        -2,
      ),
    ).toBe(true);
    const t = 0.7;
    expect(
      close(
        detFloat(
          [
            [Math.cos(t), -Math.sin(t)],
            [Math.sin(t), Math.cos(t)],
          ],
          new Work(),
        ),
        1,
      ),
    ).toBe(true);
    expect(detFloat([[1, 2, 3]], new Work())).toBeNaN();
  });
});
