/** The ADMM QP solver against hand-computed optima and an exact active-set enumeration on random small QPs. */
import { describe, expect, it } from "vitest";
import { cholesky, cholSolve, proxRow, solveQp, type QpProblem } from "../../src/rewards/car/qp.js";
import { Rng } from "../../src/util/rng.js";

const f64 = (xs: number[]) => Float64Array.from(xs);

function problem(
  P: number[][],
  q: number[],
  A: number[][],
  l: number[],
  u: number[],
  soft?: [number[], number[]],
): QpProblem {
  return {
    n: q.length,
    m: l.length,
    P: f64(P.flat()),
    q: f64(q),
    A: f64(A.flat()),
    l: f64(l),
    u: f64(u),
    ...(soft ? { softLin: f64(soft[0]), softQuad: f64(soft[1]) } : {}),
  };
}

const TIGHT = { epsAbs: 1e-9, epsRel: 1e-9, maxIter: 20000 };

describe("cholesky", () => {
  it("solves a 3x3 SPD system", () => {
    // [[4,2,0],[2,5,1],[0,1,3]] x = [2,3,4] has x = [7/46 ... ] checked by multiplying back.
    const M = f64([4, 2, 0, 2, 5, 1, 0, 1, 3]);
    const L = M.slice();
    expect(cholesky(L, 3)).toBe(true);
    const b = f64([2, 3, 4]);
    cholSolve(L, 3, b);
    for (let i = 0; i < 3; i++)
      expect(M[i * 3]! * b[0]! + M[i * 3 + 1]! * b[1]! + M[i * 3 + 2]! * b[2]!).toBeCloseTo([2, 3, 4][i]!, 12);
  });
  it("reports an indefinite matrix", () => expect(cholesky(f64([1, 2, 2, 1]), 2)).toBe(false));
});

describe("proxRow", () => {
  it("projects hard rows and shrinks soft rows by the closed form", () => {
    expect(proxRow(3, 0, 1, 0, 0, 1, true)).toBe(1);
    expect(proxRow(0.5, 0, 1, 5, 5, 1, false)).toBe(0.5);
    // v = 3 above u = 1, w1 = 1, w2 = 1, ρ = 2: p = (2·2 − 1)/(2 + 2) = 0.75 → z = 1.75.
    expect(proxRow(3, 0, 1, 1, 1, 2, false)).toBeCloseTo(1.75, 15);
    // a linear weight larger than ρ·d keeps z on the bound.
    expect(proxRow(-0.5, 0, 1, 10, 0, 1, false)).toBe(0);
  });
});

describe("solveQp", () => {
  it("unconstrained minimum x = −P⁻¹q", () => {
    const s = solveQp(
      problem(
        [
          [2, 0],
          [0, 4],
        ],
        [-2, -8],
        [
          [1, 0],
          [0, 1],
        ],
        [-100, -100],
        [100, 100],
      ),
      TIGHT,
    );
    expect(s.status).toBe("solved");
    expect(s.x[0]).toBeCloseTo(1, 6);
    expect(s.x[1]).toBeCloseTo(2, 6);
  });
  it("active box bound", () => {
    const s = solveQp(
      problem(
        [
          [2, 0],
          [0, 4],
        ],
        [-2, -8],
        [
          [1, 0],
          [0, 1],
        ],
        [-100, -100],
        [0.5, 100],
      ),
      TIGHT,
    );
    expect(s.x[0]).toBeCloseTo(0.5, 6);
    expect(s.x[1]).toBeCloseTo(2, 6);
  });
  it("general row: min ½‖x‖² s.t. x1 + x2 ≥ 2 → (1, 1), dual −1", () => {
    const s = solveQp(
      problem(
        [
          [1, 0],
          [0, 1],
        ],
        [0, 0],
        [[1, 1]],
        [2],
        [Infinity],
      ),
      TIGHT,
    );
    expect(s.x[0]).toBeCloseTo(1, 6);
    expect(s.x[1]).toBeCloseTo(1, 6);
    expect(s.y[0]).toBeCloseTo(-1, 5);
  });
  it("soft row: min ½x² + p + p², p = max(0, 2 − x) → x = 5/3", () => {
    const s = solveQp(problem([[1]], [0], [[1]], [2], [Infinity], [[1], [1]]), TIGHT);
    expect(s.x[0]).toBeCloseTo(5 / 3, 6);
  });
  it("matches exact active-set enumeration on 40 random QPs (n = 3, m = 4)", () => {
    const rng = new Rng(7);
    for (let trial = 0; trial < 40; trial++) {
      const n = 3;
      const m = 4;
      const R = Array.from({ length: n }, () => Array.from({ length: n }, () => rng.normal()));
      const P = Array.from({ length: n }, (_, i) =>
        Array.from({ length: n }, (_, j) => R.reduce((a, r) => a + r[i]! * r[j]!, 0) + (i === j ? 0.5 : 0)),
      );
      const q = Array.from({ length: n }, () => 3 * rng.normal());
      const A = Array.from({ length: m }, () => Array.from({ length: n }, () => rng.normal()));
      const l = Array.from({ length: m }, () => -0.5 - rng.random());
      const u = Array.from({ length: m }, () => 0.5 + rng.random());
      const s = solveQp(problem(P, q, A, l, u), TIGHT);
      const exact = enumerate(P, q, A, l, u);
      for (let i = 0; i < n; i++) expect(s.x[i]).toBeCloseTo(exact[i]!, 4);
    }
  });
  it("is deterministic", () => {
    const p = problem(
      [
        [2, 1],
        [1, 3],
      ],
      [1, -1],
      [
        [1, 1],
        [1, -1],
      ],
      [-1, -1],
      [1, 0.2],
    );
    expect(Array.from(solveQp(p).x)).toEqual(Array.from(solveQp(p).x));
  });
});

/** Exact optimum: the best feasible stationary point over all 3^m choices of active bounds (KKT systems). */
function enumerate(P: number[][], q: number[], A: number[][], l: number[], u: number[]): number[] {
  const n = q.length;
  const m = l.length;
  let best: number[] = [];
  let bestObj = Infinity;
  for (let code = 0; code < 3 ** m; code++) {
    const active: [number, number][] = [];
    for (let r = 0, c = code; r < m; r++, c = Math.floor(c / 3))
      if (c % 3) active.push([r, c % 3 === 1 ? l[r]! : u[r]!]);
    const k = active.length;
    const N = n + k;
    const M = Array.from({ length: N }, () => new Array<number>(N + 1).fill(0));
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) M[i]![j] = P[i]![j]!;
      M[i]![N] = -q[i]!;
    }
    active.forEach(([r, b], a) => {
      for (let j = 0; j < n; j++) {
        M[n + a]![j] = A[r]![j]!;
        M[j]![n + a] = A[r]![j]!;
      }
      M[n + a]![N] = b;
    });
    const x = gauss(M, N);
    if (!x) continue;
    const xs = x.slice(0, n);
    const feasible = A.every((row, r) => {
      const v = row.reduce((acc, a, j) => acc + a * xs[j]!, 0);
      return v >= l[r]! - 1e-9 && v <= u[r]! + 1e-9;
    });
    if (!feasible) continue;
    let obj = 0;
    for (let i = 0; i < n; i++) {
      obj += q[i]! * xs[i]!;
      for (let j = 0; j < n; j++) obj += 0.5 * xs[i]! * P[i]![j]! * xs[j]!;
    }
    if (obj < bestObj) [bestObj, best] = [obj, xs];
  }
  return best;
}

function gauss(M: number[][], N: number): number[] | null {
  for (let c = 0; c < N; c++) {
    let piv = c;
    for (let r = c + 1; r < N; r++) if (Math.abs(M[r]![c]!) > Math.abs(M[piv]![c]!)) piv = r;
    if (Math.abs(M[piv]![c]!) < 1e-12) return null;
    [M[c], M[piv]] = [M[piv]!, M[c]!];
    for (let r = 0; r < N; r++) {
      if (r === c) continue;
      const f = M[r]![c]! / M[c]![c]!;
      for (let k = c; k <= N; k++) M[r]![k]! -= f * M[c]![k]!;
    }
  }
  return M.map((row, i) => row[N]! / row[i]!);
}
