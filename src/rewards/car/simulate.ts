/**
 * One evaluation run of the car (rewards spec §11.4 and D-R6): reset to a fixed state at rest on the racing line,
 * apply the parameters, settle for 5 s of sim time, then record 1,000 samples at 50 Hz. The plant runs at
 * dt = 0.01 s (RK4), the MPC at 20 Hz. A crash (the footprint touching a wall, a non-finite state, or a QP the
 * parameters made unsolvable) is checked over the whole run, settling included, and ends it.
 */
import { MPC_DEFAULTS, MpcController, type MpcConfig, type MpcParams } from "./mpc.js";
import type { Track } from "./track.js";
import { CAR, hitsWall, plantCurvature, progressRate, stepPlant, type CarState } from "./vehicle.js";

/** Run settings. */
export interface SimConfig {
  /** Plant step (s). */
  dt: number;
  /** Settling time before recording (s). */
  settleTime: number;
  /** Number of recorded samples. */
  samples: number;
  /** Recording rate (Hz). */
  sampleRate: number;
  mpc: MpcConfig;
}

/** Defaults from the spec: dt 0.01 s, 5 s settle, 1,000 samples at 50 Hz. */
export const SIM_DEFAULTS: SimConfig = { dt: 0.01, settleTime: 5, samples: 1000, sampleRate: 50, mpc: MPC_DEFAULTS };

/** Recorded trajectory (one entry per sample) in the racing line's Frenet frame. */
export interface Trajectory {
  t: Float64Array;
  s: Float64Array;
  n: Float64Array;
  alpha: Float64Array;
  v: Float64Array;
  /** Progress rate ṡ (m/s), negative when driving the track backwards. */
  vs: Float64Array;
  /** Longitudinal and lateral acceleration (m/s²). */
  ax: Float64Array;
  ay: Float64Array;
}

/** Outcome of a run. */
export interface RunResult {
  crashed: boolean;
  /** Why the run ended early: "wall", "solver", or null. */
  crashReason: "wall" | "solver" | null;
  /** Sim time of the crash (s), or null. */
  crashTime: number | null;
  /** Recorded samples (fewer than asked after a crash). */
  trajectory: Trajectory;
  /** Distance driven along the racing line during recording (m, signed). */
  progress: number;
  /** Distance driven along the racing line over the whole run, settling included (m, signed). */
  totalProgress: number;
  /** MPC steps whose QP hit the iteration cap, and total QP iterations. */
  qpMaxIter: number;
  qpIterations: number;
  controlSteps: number;
}

/** The fixed initial state: at rest at s = 0 on the racing line. */
export const INITIAL_STATE: Readonly<CarState> = Object.freeze({ s: 0, n: 0, alpha: 0, v: 0, delta: 0 });

/** Drives the car on `track` with MPC parameters `params`; deterministic for the same inputs. */
export function runLap(track: Track, params: MpcParams, cfg: Partial<SimConfig> = {}): RunResult {
  const c = { ...SIM_DEFAULTS, ...cfg };
  const controller = new MpcController(track, params, c.mpc);
  const controlEvery = Math.max(1, Math.round(c.mpc.dt / c.dt));
  const recordEvery = Math.max(1, Math.round(1 / (c.sampleRate * c.dt)));
  const settleSteps = Math.round(c.settleTime / c.dt);
  const totalSteps = settleSteps + c.samples * recordEvery;
  const traj: Trajectory = {
    t: new Float64Array(c.samples),
    s: new Float64Array(c.samples),
    n: new Float64Array(c.samples),
    alpha: new Float64Array(c.samples),
    v: new Float64Array(c.samples),
    vs: new Float64Array(c.samples),
    ax: new Float64Array(c.samples),
    ay: new Float64Array(c.samples),
  };
  let x: CarState = { ...INITIAL_STATE };
  let input = { accel: 0, steer: 0 };
  let recorded = 0;
  let crashReason: RunResult["crashReason"] = null;
  let crashTime: number | null = null;
  let qpMaxIter = 0;
  let qpIterations = 0;
  let controlSteps = 0;
  let sStart = 0;
  for (let step = 0; step < totalSteps; step++) {
    if (step % controlEvery === 0) {
      const r = controller.control(x);
      controlSteps++;
      qpIterations += r.iterations;
      if (r.status === "maxIter") qpMaxIter++;
      if (r.status === "nonFinite") {
        crashReason = "solver";
        crashTime = step * c.dt;
        break;
      }
      input = r.input;
    }
    if (step === settleSteps) sStart = x.s;
    if (step >= settleSteps && (step - settleSteps) % recordEvery === 0) {
      const i = recorded++;
      const accel = Math.min(CAR.aMax, Math.max(CAR.aMin, input.accel));
      traj.t[i] = step * c.dt;
      traj.s[i] = x.s;
      traj.n[i] = x.n;
      traj.alpha[i] = x.alpha;
      traj.v[i] = x.v;
      traj.vs[i] = progressRate(track, x);
      traj.ax[i] = accel;
      traj.ay[i] = x.v * x.v * plantCurvature(x.v, x.delta);
    }
    x = stepPlant(track, x, input, c.dt);
    if (hitsWall(track, x)) {
      crashReason = "wall";
      crashTime = (step + 1) * c.dt;
      break;
    }
  }
  const trim = (a: Float64Array) => a.subarray(0, recorded);
  const trajectory: Trajectory = {
    t: trim(traj.t),
    s: trim(traj.s),
    n: trim(traj.n),
    alpha: trim(traj.alpha),
    v: trim(traj.v),
    vs: trim(traj.vs),
    ax: trim(traj.ax),
    ay: trim(traj.ay),
  };
  return {
    crashed: crashReason !== null,
    crashReason,
    crashTime,
    trajectory,
    progress: recorded > 0 ? x.s - sStart : 0,
    totalProgress: x.s - INITIAL_STATE.s,
    qpMaxIter,
    qpIterations,
    controlSteps,
  };
}
