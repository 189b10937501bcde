/**
 * A small dense convex QP solver (ADMM, after OSQP: Stellato et al. 2020, "OSQP: an operator splitting solver for
 * quadratic programs", Algorithm 1) with soft constraints, used by the MPC controller and the racing-line fit.
 *
 *   minimise ½ xᵀPx + qᵀx + Σ_i φ_i(a_iᵀx)     φ_i = indicator of [l_i, u_i]            (hard row)
 *                                                φ_i = w1·p + w2·p², p = dist(a_iᵀx, [l_i, u_i]) (soft row)
 *
 * Departures from OSQP: problems are small and dense, so the KKT system is reduced to (P + σI + ρAᵀA) and factored
 * with a dense Cholesky; soft rows are handled exactly in the z-update by the closed-form proximal operator of the
 * penalty (OSQP would need slack variables); scaling is Jacobi on P plus unit-norm rows instead of Ruiz; ρ is
 * adapted (OSQP §5.2 rule) at most every `adaptEvery` iterations. Deterministic: a fixed operation order, no
 * randomness, no timers.
 */

/** A QP in the form above; P is n×n and A is m×n, both dense row-major. */
export interface QpProblem {
  n: number;
  m: number;
  P: Float64Array;
  q: Float64Array;
  A: Float64Array;
  l: Float64Array;
  u: Float64Array;
  /** Linear penalty weight per row; omitted or 0 on every row with `softQuad` 0 means a hard row. */
  softLin?: Float64Array;
  /** Quadratic penalty weight per row. */
  softQuad?: Float64Array;
}

/** Solver settings (defaults suit the MPC's 40-variable problems). */
export interface QpSettings {
  rho: number;
  sigma: number;
  alpha: number;
  maxIter: number;
  epsAbs: number;
  epsRel: number;
  adaptEvery: number;
}

/** Default settings. */
export const QP_DEFAULTS: QpSettings = {
  rho: 0.1,
  sigma: 1e-6,
  alpha: 1.6,
  maxIter: 400,
  epsAbs: 1e-5,
  epsRel: 1e-5,
  adaptEvery: 25,
};

/** A solution: primal x, row values z = Ax (projected), duals y (unscaled), iterations and status. */
export interface QpSolution {
  x: Float64Array;
  y: Float64Array;
  iterations: number;
  status: "solved" | "maxIter" | "nonFinite";
}

/** In-place Cholesky of an n×n SPD matrix (lower triangle kept); returns false when not positive definite. */
export function cholesky(M: Float64Array, n: number): boolean {
  for (let j = 0; j < n; j++) {
    let d = M[j * n + j]!;
    for (let k = 0; k < j; k++) d -= M[j * n + k]! * M[j * n + k]!;
    if (!(d > 0)) return false;
    const ljj = Math.sqrt(d);
    M[j * n + j] = ljj;
    for (let i = j + 1; i < n; i++) {
      let s = M[i * n + j]!;
      for (let k = 0; k < j; k++) s -= M[i * n + k]! * M[j * n + k]!;
      M[i * n + j] = s / ljj;
    }
  }
  return true;
}

/** Solves L Lᵀ x = b in place (b becomes x) with the factor from `cholesky`. */
export function cholSolve(L: Float64Array, n: number, b: Float64Array): void {
  for (let i = 0; i < n; i++) {
    let s = b[i]!;
    for (let k = 0; k < i; k++) s -= L[i * n + k]! * b[k]!;
    b[i] = s / L[i * n + i]!;
  }
  for (let i = n - 1; i >= 0; i--) {
    let s = b[i]!;
    for (let k = i + 1; k < n; k++) s -= L[k * n + i]! * b[k]!;
    b[i] = s / L[i * n + i]!;
  }
}

/**
 * Proximal operator of a row's penalty at v with step 1/ρ: argmin_z φ(z) + ρ/2 (z − v)².
 * Hard rows project onto [l, u]; soft rows move back towards the interval by the closed form of the penalty.
 */
export function proxRow(v: number, l: number, u: number, w1: number, w2: number, rho: number, hard: boolean): number {
  if (v >= l && v <= u) return v;
  if (hard) return v < l ? l : u;
  // p = distance outside; minimise w1 p + w2 p² + ρ/2 (p − d)² over p ≥ 0, with d the distance of v.
  const d = v > u ? v - u : l - v;
  const p = Math.max(0, (rho * d - w1) / (2 * w2 + rho));
  return v > u ? u + p : l - p;
}

/** Solves `prob` by ADMM, warm-started from `warm` (x and unscaled y) when given. */
export function solveQp(
  prob: QpProblem,
  settings: Partial<QpSettings> = {},
  warm?: { x?: Float64Array; y?: Float64Array },
): QpSolution {
  const s = { ...QP_DEFAULTS, ...settings };
  const { n, m } = prob;
  // Scaling: x = D x̂ with D_i = 1/sqrt(P_ii) (Jacobi), then each row of A·D normalised to unit length (E).
  const D = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const p = prob.P[i * n + i]!;
    D[i] = p > 1e-8 ? 1 / Math.sqrt(p) : 1;
  }
  const Ps = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) Ps[i * n + j] = D[i]! * prob.P[i * n + j]! * D[j]!;
  const qs = new Float64Array(n);
  for (let i = 0; i < n; i++) qs[i] = D[i]! * prob.q[i]!;
  const As = new Float64Array(m * n);
  const E = new Float64Array(m);
  const ls = new Float64Array(m);
  const us = new Float64Array(m);
  const w1 = new Float64Array(m);
  const w2 = new Float64Array(m);
  const hard = new Uint8Array(m);
  // Nonzero column range [lo, hi) of each row: the MPC's rows are sparse (boxes) or lower-triangular (states).
  const lo = new Int32Array(m);
  const hi = new Int32Array(m);
  for (let r = 0; r < m; r++) {
    let first = n;
    let last = -1;
    for (let j = 0; j < n; j++) {
      if (prob.A[r * n + j] !== 0) {
        if (first === n) first = j;
        last = j;
      }
    }
    lo[r] = first;
    hi[r] = last + 1;
    let norm = 0;
    for (let j = 0; j < n; j++) {
      const a = prob.A[r * n + j]! * D[j]!;
      As[r * n + j] = a;
      norm += a * a;
    }
    norm = Math.sqrt(norm);
    const e = norm > 1e-12 ? 1 / norm : 1;
    E[r] = e;
    for (let j = 0; j < n; j++) As[r * n + j]! *= e;
    let lower = prob.l[r]!;
    let upper = prob.u[r]!;
    if (lower > upper) lower = upper = 0.5 * (lower + upper); // an inverted interval collapses to its midpoint
    ls[r] = lower * e;
    us[r] = upper * e;
    const a1 = prob.softLin?.[r] ?? 0;
    const a2 = prob.softQuad?.[r] ?? 0;
    hard[r] = a1 === 0 && a2 === 0 ? 1 : 0;
    // p is measured in scaled units (p̂ = e·p): w1 p = (w1/e) p̂, w2 p² = (w2/e²) p̂².
    w1[r] = a1 / e;
    w2[r] = a2 / (e * e);
  }

  const x = new Float64Array(n);
  const z = new Float64Array(m);
  const y = new Float64Array(m);
  if (warm?.x) for (let i = 0; i < n; i++) x[i] = warm.x[i]! / D[i]!;
  if (warm?.y) for (let r = 0; r < m; r++) y[r] = warm.y[r]! / E[r]!;
  for (let r = 0; r < m; r++) {
    let v = 0;
    for (let j = lo[r]!; j < hi[r]!; j++) v += As[r * n + j]! * x[j]!;
    z[r] = Math.min(us[r]!, Math.max(ls[r]!, v));
  }

  let rho = s.rho;
  const K = new Float64Array(n * n);
  const factor = (): boolean => {
    for (let i = 0; i < n; i++) for (let j = 0; j <= i; j++) K[i * n + j] = Ps[i * n + j]! + (i === j ? s.sigma : 0);
    for (let r = 0; r < m; r++) {
      const row = r * n;
      for (let i = lo[r]!; i < hi[r]!; i++) {
        const ai = As[row + i]!;
        if (ai === 0) continue;
        const ri = rho * ai;
        for (let j = lo[r]!; j <= i; j++) K[i * n + j]! += ri * As[row + j]!;
      }
    }
    return cholesky(K, n);
  };
  if (!factor()) return { x: x.fill(NaN), y, iterations: 0, status: "nonFinite" };

  const rhs = new Float64Array(n);
  const Ax = new Float64Array(m);
  const Px = new Float64Array(n);
  const Aty = new Float64Array(n);
  let status: QpSolution["status"] = "maxIter";
  let it = 0;
  for (it = 1; it <= s.maxIter; it++) {
    // x̃ = (P + σI + ρAᵀA)⁻¹ (σx − q + Aᵀ(ρz − y))
    for (let i = 0; i < n; i++) rhs[i] = s.sigma * x[i]! - qs[i]!;
    for (let r = 0; r < m; r++) {
      const c = rho * z[r]! - y[r]!;
      if (c === 0) continue;
      const row = r * n;
      for (let j = lo[r]!; j < hi[r]!; j++) rhs[j]! += As[row + j]! * c;
    }
    cholSolve(K, n, rhs);
    let primRes = 0;
    let normAx = 0;
    let normZ = 0;
    for (let i = 0; i < n; i++) x[i] = s.alpha * rhs[i]! + (1 - s.alpha) * x[i]!;
    for (let r = 0; r < m; r++) {
      let zt = 0;
      const row = r * n;
      for (let j = lo[r]!; j < hi[r]!; j++) zt += As[row + j]! * rhs[j]!;
      const zRel = s.alpha * zt + (1 - s.alpha) * z[r]!;
      const zNew = proxRow(zRel + y[r]! / rho, ls[r]!, us[r]!, w1[r]!, w2[r]!, rho, hard[r] === 1);
      y[r]! += rho * (zRel - zNew);
      z[r] = zNew;
    }
    if (it % 5 !== 0 && it !== s.maxIter) continue;
    // Residuals (OSQP §3.4): r_prim = ‖Ax − z‖∞, r_dual = ‖Px + q + Aᵀy‖∞ (soft rows: y is the penalty gradient).
    for (let r = 0; r < m; r++) {
      let v = 0;
      const row = r * n;
      for (let j = lo[r]!; j < hi[r]!; j++) v += As[row + j]! * x[j]!;
      Ax[r] = v;
      primRes = Math.max(primRes, Math.abs(v - z[r]!));
      normAx = Math.max(normAx, Math.abs(v));
      normZ = Math.max(normZ, Math.abs(z[r]!));
    }
    Aty.fill(0);
    for (let r = 0; r < m; r++) {
      const yr = y[r]!;
      if (yr === 0) continue;
      const row = r * n;
      for (let j = lo[r]!; j < hi[r]!; j++) Aty[j]! += As[row + j]! * yr;
    }
    let dualRes = 0;
    let normPx = 0;
    let normAty = 0;
    let normQ = 0;
    for (let i = 0; i < n; i++) {
      let v = 0;
      for (let j = 0; j < n; j++) v += Ps[i * n + j]! * x[j]!;
      Px[i] = v;
      dualRes = Math.max(dualRes, Math.abs(v + qs[i]! + Aty[i]!));
      normPx = Math.max(normPx, Math.abs(v));
      normAty = Math.max(normAty, Math.abs(Aty[i]!));
      normQ = Math.max(normQ, Math.abs(qs[i]!));
    }
    if (!Number.isFinite(primRes) || !Number.isFinite(dualRes)) {
      status = "nonFinite";
      break;
    }
    const epsPrim = s.epsAbs + s.epsRel * Math.max(normAx, normZ);
    const epsDual = s.epsAbs + s.epsRel * Math.max(normPx, normAty, normQ);
    if (primRes <= epsPrim && dualRes <= epsDual) {
      status = "solved";
      break;
    }
    if (it % s.adaptEvery === 0) {
      const ratio = Math.sqrt(
        primRes / Math.max(normAx, normZ, 1e-12) / (dualRes / Math.max(normPx, normAty, normQ, 1e-12) + 1e-30),
      );
      if (ratio > 5 || ratio < 0.2) {
        rho = Math.min(1e6, Math.max(1e-6, rho * ratio));
        if (!factor()) {
          status = "nonFinite";
          break;
        }
      }
    }
  }
  const xOut = new Float64Array(n);
  for (let i = 0; i < n; i++) xOut[i] = D[i]! * x[i]!;
  const yOut = new Float64Array(m);
  for (let r = 0; r < m; r++) yOut[r] = E[r]! * y[r]!;
  return { x: xOut, y: yOut, iterations: Math.min(it, s.maxIter), status };
}
