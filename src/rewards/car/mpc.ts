/**
 * Frenet-frame model-predictive controller (rewards spec §11.4, after ForzaETH/race_stack's MPC), solved each
 * control step as a linear-time-varying, condensed QP with our ADMM solver (qp.ts).
 *
 * State z = [n, α, v, δ, δ_cmd] (s is carried along for κ(s)), input u = [a, δ̇_cmd]. Model: the kinematic bicycle of
 * vehicle.ts with its first-order steering lag (δ̇ = (δ_cmd − δ)/τ) but without the plant's understeer, discretised
 * with RK4 at T = 0.05 s (20 Hz) over `horizon` steps. Each step: shift the previous input sequence, roll it out
 * from the measured state (nominal trajectory), linearise the RK4 step around it by finite differences, condense
 * (z_k = z̄_k + Σ_j G_kj δu_j) and solve for δu.
 *   cost  Σ_k qn n_k² + qalpha α_k² + qv (v_k − V_target(s_k))² + Σ_k qac a_k² + qddelta δ̇_k²   (terminal: no inputs)
 *   hard  a ∈ [a_min, a_max], |δ̇_cmd| ≤ 4 rad/s, |δ_cmd| ≤ 0.4
 *   soft  −d_right + margin ≤ n ≤ d_left − margin (weights 10 linear, 100 quadratic, as the spec),
 *         v ∈ [v_min, v_max] and |v² tan δ / L| ≤ alat_max (weights 100 / 1000: soft so a start from rest, or a
 *         parameter change at speed, never makes the QP infeasible).
 * Departures: no input delay; q_adv (progress reward) is fixed at 0; the spec's steering-rate input acts on the
 * commanded angle, and the model carries the actuator lag so the default weights drive without oscillating.
 */
import { solveQp, type QpProblem, type QpSettings } from "./qp.js";
import { lookup, type Track } from "./track.js";
import { CAR, type CarInput, type CarState } from "./vehicle.js";

/** The tunable parameter dictionary (names as in LLMxRobot `MPC_PARAM_NAMES`). */
export interface MpcParams {
  qv: number;
  qn: number;
  qalpha: number;
  qac: number;
  qddelta: number;
  alat_max: number;
  a_min: number;
  a_max: number;
  v_min: number;
  v_max: number;
  track_safety_margin: number;
}

/** The parameter names, in the reference's order. */
export const PARAM_NAMES: readonly (keyof MpcParams)[] = [
  "qv",
  "qn",
  "qalpha",
  "qac",
  "qddelta",
  "alat_max",
  "a_min",
  "a_max",
  "v_min",
  "v_max",
  "track_safety_margin",
];

/** Default parameters (race_stack NUC2, spec §11.4). */
export const DEFAULT_PARAMS: Readonly<MpcParams> = Object.freeze({
  qv: 10,
  qn: 20,
  qalpha: 7,
  qac: 0.01,
  qddelta: 0.1,
  alat_max: 10,
  a_min: -10,
  a_max: 10,
  v_min: 2,
  v_max: 12,
  track_safety_margin: 0.3,
});

/** Controller settings that are not part of the model's dictionary. */
export interface MpcConfig {
  horizon: number;
  /** Control period (s). */
  dt: number;
  qp: Partial<QpSettings>;
}

/** Default controller settings: N = 15 at 20 Hz (0.75 s look-ahead; the spec allows lowering race_stack's 40 for speed). */
export const MPC_DEFAULTS: MpcConfig = {
  horizon: 15,
  dt: 0.05,
  qp: { rho: 0.01, maxIter: 150, epsAbs: 1e-4, epsRel: 1e-4 },
};

const NS = 6; // model state incl. s
const NX = 5; // linearised state [n, α, v, δ, δ_cmd]
const NU = 2;
const SOFT_N = [10, 100];
const SOFT_OTHER = [100, 1000];

/** One RK4 step of the controller's model; x and out are [s, n, α, v, δ, δ_cmd] (exported for tests). */
export function modelStep(
  track: Track,
  x: ArrayLike<number>,
  a: number,
  w: number,
  T: number,
  out: Float64Array,
): void {
  let s = x[0]!,
    n = x[1]!,
    al = x[2]!,
    v = x[3]!,
    d = x[4]!,
    dc = x[5]!;
  const s0 = s,
    n0 = n,
    al0 = al,
    v0 = v,
    d0 = d,
    dc0 = dc;
  let as = 0,
    an = 0,
    aal = 0,
    ad = 0;
  for (let stage = 0; stage < 4; stage++) {
    const kappa = lookup(track, track.kappa, s);
    const ks = (v * Math.cos(al)) / (1 - kappa * n);
    const kn = v * Math.sin(al);
    const kal = (v * Math.tan(d)) / CAR.wheelbase - kappa * ks;
    const kd = (dc - d) / CAR.steerTau;
    const wt = stage === 0 || stage === 3 ? 1 : 2;
    as += wt * ks;
    an += wt * kn;
    aal += wt * kal;
    ad += wt * kd;
    const h = stage === 2 ? T : T / 2;
    s = s0 + h * ks;
    n = n0 + h * kn;
    al = al0 + h * kal;
    v = v0 + h * a;
    d = d0 + h * kd;
    dc = dc0 + h * w;
  }
  out[0] = s0 + (T / 6) * as;
  out[1] = n0 + (T / 6) * an;
  out[2] = al0 + (T / 6) * aal;
  out[3] = v0 + T * a;
  out[4] = d0 + (T / 6) * ad;
  out[5] = dc0 + T * w;
}

/** Result of one control step. */
export interface MpcStep {
  input: CarInput;
  /** QP status; "nonFinite" means the parameters made the problem unsolvable. */
  status: "solved" | "maxIter" | "nonFinite";
  iterations: number;
}

/** The condensed QP of one control step, with what is needed to read its solution. */
export interface MpcQp {
  problem: QpProblem;
  /** Nominal inputs ū (N, NU): the solution is u = ū + δu. */
  ub: Float64Array;
  /** Nominal rollout (N+1, 6): [s, n, α, v, δ, δ_cmd] per stage. */
  xb: Float64Array;
  /** Sensitivities (N, NX, N·NU): δz_{k+1} = G_k δu, z = [n, α, v, δ, δ_cmd]. */
  G: Float64Array;
  lo: number[];
  hi: number[];
}

/**
 * Builds the condensed QP in δu for measured state `x`, commanded steering `steerCmd` and the previous optimal
 * input sequence `uPrev` (N, NU). Exported for tests (linearisation and cost checks).
 */
export function buildMpcQp(
  track: Track,
  params: MpcParams,
  cfg: MpcConfig,
  x: CarState,
  steerCmd: number,
  uPrev: Float64Array,
): MpcQp {
  const N = cfg.horizon;
  const p = params;
  const T = cfg.dt;
  const nv = N * NU;
  const lo = [p.a_min, -CAR.maxSteerRate];
  const hi = [p.a_max, CAR.maxSteerRate];
  // Nominal inputs: the previous sequence shifted by one step, clamped to the boxes.
  const ub = new Float64Array(nv);
  for (let k = 0; k < N; k++) {
    const src = Math.min(k + 1, N - 1);
    for (let i = 0; i < NU; i++) ub[k * NU + i] = Math.min(hi[i]!, Math.max(lo[i]!, uPrev[src * NU + i]!));
  }
  // Nominal rollout xb: (N+1, 5) and Jacobians of each RK4 step by forward differences.
  const xb = new Float64Array((N + 1) * NS);
  xb.set([x.s, x.n, x.alpha, x.v, x.delta, steerCmd]);
  const A = new Float64Array(N * NX * NX); // (N, NX, NX)
  const B = new Float64Array(N * NX * NU); // (N, NX, NU)
  const out = new Float64Array(NS);
  const pert = new Float64Array(NS);
  const eps = 1e-6;
  for (let k = 0; k < N; k++) {
    const xk = xb.subarray(k * NS, k * NS + NS);
    const a = ub[k * NU]!,
      w = ub[k * NU + 1]!;
    modelStep(track, xk, a, w, T, out);
    xb.set(out, (k + 1) * NS);
    for (let j = 0; j < NX; j++) {
      pert.set(xk);
      pert[j + 1]! += eps;
      modelStep(track, pert, a, w, T, out);
      for (let i = 0; i < NX; i++) A[(k * NX + i) * NX + j] = (out[i + 1]! - xb[(k + 1) * NS + i + 1]!) / eps;
    }
    for (let j = 0; j < NU; j++) {
      modelStep(track, xk, a + (j === 0 ? eps : 0), w + (j === 1 ? eps : 0), T, out);
      for (let i = 0; i < NX; i++) B[(k * NX + i) * NU + j] = (out[i + 1]! - xb[(k + 1) * NS + i + 1]!) / eps;
    }
  }
  // Condensed sensitivities G: (N, NX, nv); row block k maps δu to δz_{k+1}.
  const G = new Float64Array(N * NX * nv);
  for (let k = 0; k < N; k++) {
    const gk = k * NX * nv;
    if (k > 0) {
      const gp = (k - 1) * NX * nv;
      for (let i = 0; i < NX; i++)
        for (let j = 0; j < NX; j++) {
          const aij = A[(k * NX + i) * NX + j]!;
          if (aij === 0) continue;
          for (let c = 0; c < k * NU; c++) G[gk + i * nv + c]! += aij * G[gp + j * nv + c]!;
        }
    }
    for (let i = 0; i < NX; i++) for (let j = 0; j < NU; j++) G[gk + i * nv + k * NU + j] = B[(k * NX + i) * NU + j]!;
  }
  // Cost ½ δuᵀ P δu + qᵀ δu.
  const Q = [p.qn, p.qalpha, p.qv, 0, 0];
  const P = new Float64Array(nv * nv);
  const q = new Float64Array(nv);
  for (let k = 0; k < N; k++) {
    const zb = (k + 1) * NS;
    const err = [xb[zb + 1]!, xb[zb + 2]!, xb[zb + 3]! - lookup(track, track.vTarget, xb[zb]!), 0, 0];
    const cols = (k + 1) * NU;
    for (let i = 0; i < NX; i++) {
      const qi = 2 * Q[i]!;
      if (qi === 0) continue;
      const row = k * NX * nv + i * nv;
      for (let a = 0; a < cols; a++) {
        const ga = G[row + a]!;
        if (ga === 0) continue;
        q[a]! += qi * ga * err[i]!;
        const f = qi * ga;
        for (let b = 0; b <= a; b++) P[a * nv + b]! += f * G[row + b]!;
      }
    }
  }
  const R = [p.qac, p.qddelta];
  for (let a = 0; a < nv; a++) {
    P[a * nv + a]! += 2 * R[a % NU]! + 1e-6;
    q[a]! += 2 * R[a % NU]! * ub[a]!;
    for (let b = 0; b < a; b++) P[b * nv + a] = P[a * nv + b]!;
  }
  // Constraint rows: inputs (nv), then per stage n, v, δ, a_lat (N each).
  const m = nv + 4 * N;
  const Arows = new Float64Array(m * nv);
  const l = new Float64Array(m);
  const u = new Float64Array(m);
  const w1 = new Float64Array(m);
  const w2 = new Float64Array(m);
  for (let a = 0; a < nv; a++) {
    Arows[a * nv + a] = 1;
    l[a] = lo[a % NU]! - ub[a]!;
    u[a] = hi[a % NU]! - ub[a]!;
  }
  const margin = p.track_safety_margin;
  for (let k = 0; k < N; k++) {
    const zb = (k + 1) * NS;
    const s = xb[zb]!,
      n = xb[zb + 1]!,
      v = xb[zb + 3]!,
      d = xb[zb + 4]!,
      dc = xb[zb + 5]!;
    const g = k * NX * nv;
    const rn = nv + k,
      rv = nv + N + k,
      rd = nv + 2 * N + k,
      rl = nv + 3 * N + k;
    const gv = (2 * v * Math.tan(d)) / CAR.wheelbase;
    const gd = (v * v) / (CAR.wheelbase * Math.cos(d) ** 2);
    for (let c = 0; c < nv; c++) {
      Arows[rn * nv + c] = G[g + c]!;
      Arows[rv * nv + c] = G[g + 2 * nv + c]!;
      Arows[rd * nv + c] = G[g + 4 * nv + c]!;
      Arows[rl * nv + c] = gv * G[g + 2 * nv + c]! + gd * G[g + 3 * nv + c]!;
    }
    l[rn] = -lookup(track, track.dRight, s) + margin - n;
    u[rn] = lookup(track, track.dLeft, s) - margin - n;
    [w1[rn], w2[rn]] = SOFT_N;
    l[rv] = p.v_min - v;
    u[rv] = p.v_max - v;
    [w1[rv], w2[rv]] = SOFT_OTHER;
    l[rd] = -CAR.maxSteer - dc;
    u[rd] = CAR.maxSteer - dc;
    const lat = (v * v * Math.tan(d)) / CAR.wheelbase;
    l[rl] = -p.alat_max - lat;
    u[rl] = p.alat_max - lat;
    [w1[rl], w2[rl]] = SOFT_OTHER;
  }
  return { problem: { n: nv, m, P, q, A: Arows, l, u, softLin: w1, softQuad: w2 }, ub, xb, G, lo, hi };
}

/** An MPC controller bound to a track and a parameter set; keeps its warm start between steps. */
export class MpcController {
  private readonly N: number;
  private readonly u: Float64Array; // (N, NU): the last optimal input sequence
  private y: Float64Array | null = null;
  private steerCmd = 0;

  constructor(
    private readonly track: Track,
    private readonly params: MpcParams,
    private readonly cfg: MpcConfig = MPC_DEFAULTS,
  ) {
    this.N = cfg.horizon;
    this.u = new Float64Array(this.N * NU);
  }

  /** Computes the input for the measured state (call once per control period). */
  control(x: CarState): MpcStep {
    const { N } = this;
    const nv = N * NU;
    const { problem, ub, lo, hi } = buildMpcQp(this.track, this.params, this.cfg, x, this.steerCmd, this.u);
    const T = this.cfg.dt;
    const sol = solveQp(problem, this.cfg.qp, this.y ? { y: this.shiftDuals(this.y, N, nv) } : undefined);
    if (sol.status === "nonFinite" || !sol.x.every(Number.isFinite)) {
      return { input: { accel: 0, steer: this.steerCmd }, status: "nonFinite", iterations: sol.iterations };
    }
    for (let a = 0; a < nv; a++) this.u[a] = Math.min(hi[a % NU]!, Math.max(lo[a % NU]!, ub[a]! + sol.x[a]!));
    this.y = sol.y;
    this.steerCmd = Math.min(CAR.maxSteer, Math.max(-CAR.maxSteer, this.steerCmd + T * this.u[1]!));
    return { input: { accel: this.u[0]!, steer: this.steerCmd }, status: sol.status, iterations: sol.iterations };
  }

  /** Shifts each row group of the previous duals one stage forward (warm start). */
  private shiftDuals(y: Float64Array, N: number, nv: number): Float64Array {
    const out = new Float64Array(y.length);
    for (let a = 0; a < nv; a++) out[a] = y[Math.min(a + NU, nv - NU + (a % NU))]!;
    for (let grp = 0; grp < 4; grp++)
      for (let k = 0; k < N; k++) out[nv + grp * N + k] = y[nv + grp * N + Math.min(k + 1, N - 1)]!;
    return out;
  }
}
