/**
 * The car evaluation as a worker-pool job (sandbox/pool.ts): one run plus, when asked, the default-parameter
 * baseline, returned as plain data. Runs are memoised per worker, so a worker computes each baseline once.
 */
import { parseCase } from "./behaviours.js";
import { baselineRmse, evaluateParams } from "./evaluate.js";
import type { MpcParams } from "./mpc.js";
import type { RunResult } from "./simulate.js";
import type { TrackName } from "./track.js";

/** Arguments of `evaluateJob`. */
export interface EvalJobArgs {
  caseText: string;
  track: TrackName;
  params: MpcParams;
  /** Also compute the default parameters' metric. */
  withBaseline: boolean;
  /** Set when the completion already failed (parse or validation): only the baseline is wanted, not a run. */
  failure?: string;
}

/** Result of `evaluateJob` (structured-cloneable). */
export interface EvalJobResult {
  metric: number | null;
  crashed: boolean;
  stalled: boolean;
  crashReason: RunResult["crashReason"];
  crashTime: number | null;
  meanProgressSpeed: number;
  baseline: number | null;
}

/** Evaluates `params` on (case, track); throws on an unreadable case (the caller checked it already). */
export function evaluateJob(args: EvalJobArgs): EvalJobResult {
  const c = parseCase(args.caseText);
  if (!c) throw new Error(`evaluateJob: unreadable case ${JSON.stringify(args.caseText)}`);
  const baseline = args.withBaseline ? baselineRmse(c, args.track) : null;
  if (args.failure !== undefined) {
    return {
      metric: null,
      crashed: false,
      stalled: false,
      crashReason: null,
      crashTime: null,
      meanProgressSpeed: 0,
      baseline,
    };
  }
  const e = evaluateParams(c, args.track, args.params);
  return {
    metric: e.metric,
    crashed: e.crashed,
    stalled: e.stalled,
    crashReason: e.crashReason,
    crashTime: e.run.crashTime,
    meanProgressSpeed: e.meanProgressSpeed,
    baseline,
  };
}
