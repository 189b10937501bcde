/**
 * Evaluating a parameter set on a behaviour: one deterministic run (simulate.ts), then the behaviour's metric,
 * with crash and stall detection; and the default-parameter baseline per (case, track, simulator version), cached
 * in-process. Runs are memoised by (track, parameters, settings), so the reward terms that need the same run
 * (driving, improved) and every behaviour's baseline on a track share one simulation.
 */
import { caseMetric, isStalled, meanProgressSpeed, type DrivingCase } from "./behaviours.js";
import { DEFAULT_PARAMS, PARAM_NAMES, type MpcParams } from "./mpc.js";
import { runLap, type RunResult, type SimConfig } from "./simulate.js";
import { getTrack, type TrackName } from "./track.js";

/** Version of the simulator and controller; baselines are valid only for the version that computed them. */
export const SIM_VERSION = "car-sim-1";

/** Outcome of one evaluation. */
export interface Evaluation {
  /** The behaviour's metric (RMSE); null when the run crashed. A stalled run keeps its metric (the reward ignores it). */
  metric: number | null;
  crashed: boolean;
  stalled: boolean;
  crashReason: RunResult["crashReason"];
  meanProgressSpeed: number;
  run: RunResult;
}

const runs = new Map<string, RunResult>();
const MEMO_SIZE = 128;

/** Runs `params` on `track` once per (track, parameters, settings); later calls reuse the run. */
export function memoRun(trackName: TrackName, params: MpcParams, sim: Partial<SimConfig> = {}): RunResult {
  const key = `${trackName}|${PARAM_NAMES.map((n) => params[n]).join(",")}|${JSON.stringify(sim)}`;
  let run = runs.get(key);
  if (!run) {
    run = runLap(getTrack(trackName), params, sim);
    if (runs.size >= MEMO_SIZE) runs.delete(runs.keys().next().value!);
    runs.set(key, run);
  }
  return run;
}

/** Runs `params` on `track` and scores behaviour `c` (the run is memoised; deterministic). */
export function evaluateParams(
  c: DrivingCase,
  trackName: TrackName,
  params: MpcParams,
  sim: Partial<SimConfig> = {},
): Evaluation {
  const run = memoRun(trackName, params, sim);
  const speed = meanProgressSpeed(run);
  const stalled = !run.crashed && isStalled(c, speed);
  const metric = run.crashed ? null : caseMetric(c, run, getTrack(trackName));
  return { metric, crashed: run.crashed, stalled, crashReason: run.crashReason, meanProgressSpeed: speed, run };
}

/**
 * The default parameters' metric for (case, track); null when the defaults crash (a simulator bug). The stall
 * rule does not apply: the defaults drive forwards, which is exactly what the reverse baseline measures.
 */
export function baselineRmse(c: DrivingCase, trackName: TrackName, sim: Partial<SimConfig> = {}): number | null {
  return evaluateParams(c, trackName, { ...DEFAULT_PARAMS }, sim).metric;
}
