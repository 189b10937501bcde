/**
 * Closed race tracks for the car twin (rewards spec §11.4): a circle (training) and an "F"-shaped loop
 * (evaluation), each with a centreline, walls, a racing line, the racing line's curvature κ(s), the wall distances
 * d_left(s), d_right(s) measured from the racing line, and a target speed profile V_target(s).
 *
 * The Frenet frame of the simulator and the MPC is the racing line (as in ForzaETH/race_stack): n is the lateral
 * offset from the racing line, positive to the left.
 *
 * Racing line: minimise Σ‖p_{i+1} − 2p_i + p_{i−1}‖² over offsets e_i along the centreline normals, |e_i| ≤ w − 0.4,
 * solved with our QP solver, then passed through a periodic cubic spline. This is the second-difference
 * ("minimum curvature times ds²") line: it cuts corners like a minimum-curvature line and, on a circle, takes the
 * inner ring (the shortest path). Departures: d_left/d_right are w ∓ e measured along the centreline normal, not
 * along the racing line's own normal (they differ by under 1 cm on these tracks).
 */
import { solveQp } from "./qp.js";
import { PeriodicSpline } from "./spline.js";

/** Names of the built-in tracks. */
export type TrackName = "circle" | "F";

/** The list of built-in track names. */
export const TRACK_NAMES: readonly TrackName[] = ["circle", "F"];

/** A tabulated closed track; every table is sampled on the racing line at s = i·ds, i = 0..count−1. */
export interface Track {
  name: TrackName;
  /** Racing-line length (m). */
  length: number;
  ds: number;
  count: number;
  x: Float64Array;
  y: Float64Array;
  /** Heading of the racing line (rad, unwrapped). */
  psi: Float64Array;
  kappa: Float64Array;
  dLeft: Float64Array;
  dRight: Float64Array;
  /** Target speed along the racing line (m/s). */
  vTarget: Float64Array;
  /** Half-width of the track (m). */
  halfWidth: number;
  /** Centreline and walls, for plots: closed polylines. */
  centre: { x: Float64Array; y: Float64Array };
  leftWall: { x: Float64Array; y: Float64Array };
  rightWall: { x: Float64Array; y: Float64Array };
}

type Piece = { straight: number } | { arc: number; turn: number };

/** Speed profile constants: lateral and longitudinal accelerations (m/s²), speed cap (m/s). */
const PROFILE = { aLat: 6, aLong: 2.5, vCap: 10 };
/** Distance the racing line keeps from the walls (m). */
const LINE_MARGIN = 0.4;
/** Spacing of the racing-line optimisation points (m). */
const COARSE = 0.5;
/** Spacing of the tables (m). */
const FINE = 0.05;

const DEFS: Record<TrackName, { halfWidth: number; pieces: Piece[]; start: [number, number] }> = {
  // Radius 6 m circle, driven counter-clockwise.
  circle: { halfWidth: 1.2, start: [0, -6], pieces: [{ arc: 6, turn: 2 * Math.PI }] },
  // The outline of a letter F (stem 6 m wide, two arms), rounded with 2 m corners, driven counter-clockwise.
  F: {
    halfWidth: 1.1,
    start: [3, 0],
    pieces: [
      { straight: 1 },
      { arc: 2, turn: Math.PI / 2 },
      { straight: 4 },
      { arc: 2, turn: -Math.PI / 2 },
      { straight: 2 },
      { arc: 2, turn: Math.PI / 2 },
      { straight: 1 },
      { arc: 2, turn: Math.PI / 2 },
      { straight: 2 },
      { arc: 2, turn: -Math.PI / 2 },
      { arc: 2, turn: -Math.PI / 2 },
      { straight: 6 },
      { arc: 2, turn: Math.PI / 2 },
      { straight: 1 },
      { arc: 2, turn: Math.PI / 2 },
      { straight: 12 },
      { arc: 2, turn: Math.PI / 2 },
      { straight: 18 },
      { arc: 2, turn: Math.PI / 2 },
      { straight: 1 },
    ],
  },
};

/** Samples a turtle path (straights and arcs) every `step` metres; returns points, headings and total length. */
function turtle(
  pieces: Piece[],
  start: [number, number],
  step: number,
): { x: number[]; y: number[]; psi: number[]; length: number } {
  const total = pieces.reduce((acc, p) => acc + ("straight" in p ? p.straight : p.arc * Math.abs(p.turn)), 0);
  const count = Math.round(total / step);
  const h = total / count;
  const xs: number[] = [];
  const ys: number[] = [];
  const ps: number[] = [];
  let [x0, y0] = start;
  let psi0 = 0;
  let pieceStart = 0;
  let k = 0;
  for (const p of pieces) {
    const len = "straight" in p ? p.straight : p.arc * Math.abs(p.turn);
    while (k < count && k * h < pieceStart + len - 1e-9) {
      const d = k * h - pieceStart;
      if ("straight" in p) {
        xs.push(x0 + d * Math.cos(psi0));
        ys.push(y0 + d * Math.sin(psi0));
        ps.push(psi0);
      } else {
        const sign = Math.sign(p.turn);
        const a = (sign * d) / p.arc;
        // Centre of the arc lies on the left (turn > 0) or right of the heading.
        const cx = x0 - sign * p.arc * Math.sin(psi0);
        const cy = y0 + sign * p.arc * Math.cos(psi0);
        xs.push(cx + sign * p.arc * Math.sin(psi0 + a));
        ys.push(cy - sign * p.arc * Math.cos(psi0 + a));
        ps.push(psi0 + a);
      }
      k++;
    }
    if ("straight" in p) {
      x0 += len * Math.cos(psi0);
      y0 += len * Math.sin(psi0);
    } else {
      const sign = Math.sign(p.turn);
      const cx = x0 - sign * p.arc * Math.sin(psi0);
      const cy = y0 + sign * p.arc * Math.cos(psi0);
      psi0 += p.turn;
      x0 = cx + sign * p.arc * Math.sin(psi0);
      y0 = cy - sign * p.arc * Math.cos(psi0);
    }
    pieceStart += len;
  }
  return { x: xs, y: ys, psi: ps, length: total };
}

/** Offsets e_i of the second-difference racing line at centreline points (x, y) with normals (nx, ny). */
function racingOffsets(x: number[], y: number[], nx: number[], ny: number[], bound: number): Float64Array {
  const M = x.length;
  // Residual r_i = Δc_i + e_{i+1}ν_{i+1} − 2e_iν_i + e_{i−1}ν_{i−1}; P = 2BᵀB, q = 2BᵀΔc.
  const P = new Float64Array(M * M);
  const q = new Float64Array(M);
  for (let i = 0; i < M; i++) {
    const idx = [(i - 1 + M) % M, i, (i + 1) % M];
    const coef = [1, -2, 1];
    const dcx = x[idx[2]!]! - 2 * x[i]! + x[idx[0]!]!;
    const dcy = y[idx[2]!]! - 2 * y[i]! + y[idx[0]!]!;
    for (let a = 0; a < 3; a++) {
      const ja = idx[a]!;
      const bx = coef[a]! * nx[ja]!;
      const by = coef[a]! * ny[ja]!;
      q[ja]! += 2 * (bx * dcx + by * dcy);
      for (let b = 0; b < 3; b++) {
        const jb = idx[b]!;
        P[ja * M + jb]! += 2 * (bx * coef[b]! * nx[jb]! + by * coef[b]! * ny[jb]!);
      }
    }
  }
  for (let i = 0; i < M; i++) P[i * M + i]! += 1e-6;
  const A = new Float64Array(M * M);
  for (let i = 0; i < M; i++) A[i * M + i] = 1;
  const sol = solveQp(
    { n: M, m: M, P, q, A, l: new Float64Array(M).fill(-bound), u: new Float64Array(M).fill(bound) },
    { maxIter: 4000, epsAbs: 1e-7, epsRel: 1e-7 },
  );
  if (sol.status === "nonFinite") throw new Error("racing line QP failed");
  return sol.x.map((e) => Math.max(-bound, Math.min(bound, e)));
}

/** Forward/backward passes limiting V_target by lateral and longitudinal acceleration (closed loop: two laps). */
function speedProfile(kappa: Float64Array, ds: number): Float64Array {
  const K = kappa.length;
  const v = new Float64Array(K);
  for (let i = 0; i < K; i++)
    v[i] = Math.min(PROFILE.vCap, Math.sqrt(PROFILE.aLat / Math.max(Math.abs(kappa[i]!), 1e-6)));
  for (let pass = 0; pass < 2; pass++) {
    for (let k = 1; k <= K; k++) {
      const i = k % K;
      const prev = (k - 1) % K;
      v[i] = Math.min(v[i]!, Math.sqrt(v[prev]! ** 2 + 2 * PROFILE.aLong * ds));
    }
    for (let k = K - 1; k >= 0; k--) {
      const i = k;
      const next = (k + 1) % K;
      v[i] = Math.min(v[i]!, Math.sqrt(v[next]! ** 2 + 2 * PROFILE.aLong * ds));
    }
  }
  return v;
}

function buildTrack(name: TrackName): Track {
  const def = DEFS[name];
  const w = def.halfWidth;
  const coarse = turtle(def.pieces, def.start, COARSE);
  const nx = coarse.psi.map((p) => -Math.sin(p));
  const ny = coarse.psi.map((p) => Math.cos(p));
  const e = racingOffsets(coarse.x, coarse.y, nx, ny, w - LINE_MARGIN);
  const M = coarse.x.length;
  const h = coarse.length / M;
  const sx = new PeriodicSpline(
    coarse.x.map((v, i) => v + e[i]! * nx[i]!),
    h,
  );
  const sy = new PeriodicSpline(
    coarse.y.map((v, i) => v + e[i]! * ny[i]!),
    h,
  );
  const se = new PeriodicSpline(e, h);
  // Fine walk along the spline parameter, accumulating arc length.
  const sub = 40;
  const T = M * sub;
  const arc = new Float64Array(T + 1);
  let [px, py] = [sx.eval(0)[0], sy.eval(0)[0]];
  for (let j = 1; j <= T; j++) {
    const t = (j * h) / sub;
    const qx = sx.eval(t)[0];
    const qy = sy.eval(t)[0];
    arc[j] = arc[j - 1]! + Math.hypot(qx - px, qy - py);
    [px, py] = [qx, qy];
  }
  const length = arc[T]!;
  const count = Math.round(length / FINE);
  const ds = length / count;
  const tab = {
    x: new Float64Array(count),
    y: new Float64Array(count),
    psi: new Float64Array(count),
    kappa: new Float64Array(count),
    dLeft: new Float64Array(count),
    dRight: new Float64Array(count),
  };
  let j = 0;
  let psiPrev = 0;
  for (let i = 0; i < count; i++) {
    const s = i * ds;
    while (arc[j + 1]! < s) j++;
    const t = ((j + (s - arc[j]!) / (arc[j + 1]! - arc[j]!)) * h) / sub;
    const [X, dX, ddX] = sx.eval(t);
    const [Y, dY, ddY] = sy.eval(t);
    const off = se.eval(t)[0];
    tab.x[i] = X;
    tab.y[i] = Y;
    let psi = Math.atan2(dY, dX);
    if (i > 0) psi = psiPrev + Math.atan2(Math.sin(psi - psiPrev), Math.cos(psi - psiPrev));
    tab.psi[i] = psiPrev = psi;
    tab.kappa[i] = (dX * ddY - dY * ddX) / Math.pow(dX * dX + dY * dY, 1.5);
    tab.dLeft[i] = w - off;
    tab.dRight[i] = w + off;
  }
  const fine = turtle(def.pieces, def.start, 0.25);
  const wall = (sign: number) => ({
    x: Float64Array.from(fine.x, (v, i) => v - sign * w * Math.sin(fine.psi[i]!)),
    y: Float64Array.from(fine.y, (v, i) => v + sign * w * Math.cos(fine.psi[i]!)),
  });
  return {
    name,
    length,
    ds,
    count,
    ...tab,
    vTarget: speedProfile(tab.kappa, ds),
    halfWidth: w,
    centre: { x: Float64Array.from(fine.x), y: Float64Array.from(fine.y) },
    leftWall: wall(1),
    rightWall: wall(-1),
  };
}

const cache = new Map<TrackName, Track>();

/** The built-in track `name` (built once per process, deterministically). */
export function getTrack(name: TrackName): Track {
  if (!TRACK_NAMES.includes(name))
    throw new RangeError(`unknown track "${String(name)}"; known: ${TRACK_NAMES.join(", ")}`);
  let t = cache.get(name);
  if (!t) {
    t = buildTrack(name);
    cache.set(name, t);
  }
  return t;
}

/** Linear interpolation of a track table at arc length s (wrapped into one lap). */
export function lookup(track: Track, table: Float64Array, s: number): number {
  let u = (s % track.length) / track.ds;
  if (u < 0) u += track.count;
  const i = Math.floor(u);
  const f = u - i;
  const i0 = i % track.count;
  const i1 = (i0 + 1) % track.count;
  return table[i0]! * (1 - f) + table[i1]! * f;
}

/** Cartesian position of the Frenet point (s, n) on `track`. */
export function toCartesian(track: Track, s: number, n: number): [number, number] {
  const x = lookup(track, track.x, s);
  const y = lookup(track, track.y, s);
  // psi is unwrapped along the lap; across the lap's end it jumps by 2π, so interpolate the wrapped difference.
  let u = (s % track.length) / track.ds;
  if (u < 0) u += track.count;
  const i0 = Math.floor(u) % track.count;
  const i1 = (i0 + 1) % track.count;
  const d = track.psi[i1]! - track.psi[i0]!;
  const psi = track.psi[i0]! + (u - Math.floor(u)) * Math.atan2(Math.sin(d), Math.cos(d));
  return [x - n * Math.sin(psi), y + n * Math.cos(psi)];
}
