/**
 * The instructed driving behaviours and their metrics (rewards spec §11.4, after LLMxRobot
 * `train/utils/mpc/eval_driving.py`), all in the racing line's Frenet frame over the recorded samples:
 *   centerline      RMSE of n − (d_left − (d_left + d_right)/2)   (offset from the track's centre)
 *   racingLine      RMSE of n
 *   reverse         RMSE of v_s − (−1)                            (drive the track backwards at 1 m/s)
 *   refVelocity(v)  RMSE of v_s − v
 *   smooth          sqrt(mean(a_x² + a_y²))
 * Our addition: behaviours that require progress. For centerline, racingLine and smooth a run whose mean v_s is
 * below `MIN_PROGRESS_SPEED` (1 m/s) has "stalled"; for reverse the mean v_s must be at most −0.5 m/s. A stall
 * scores like a crash; otherwise parking on the racing line (or crawling, for smooth) would beat every honest
 * lap, and standing still would earn 85 % of the reverse reward.
 */
import type { RunResult } from "./simulate.js";
import { lookup, type Track } from "./track.js";

/** A behaviour the prompt asks for. */
export type DrivingCase =
  | { kind: "centerline" }
  | { kind: "racingLine" }
  | { kind: "reverse" }
  | { kind: "refVelocity"; vRef: number }
  | { kind: "smooth" };

/** The behaviour kinds. */
export const CASE_KINDS = ["centerline", "racingLine", "reverse", "refVelocity", "smooth"] as const;

/** Mean forward progress speed (m/s) below which a forward behaviour counts as stalled. */
export const MIN_PROGRESS_SPEED = 1.0;

/** The case's canonical text: "centerline", "refVelocity(2.5)". */
export function caseKey(c: DrivingCase): string {
  return c.kind === "refVelocity" ? `refVelocity(${c.vRef})` : c.kind;
}

/** Parses a case's canonical text; null when it is not one (a bad gold gives a null score, G2). */
export function parseCase(text: unknown): DrivingCase | null {
  if (typeof text !== "string") return null;
  if (text === "centerline" || text === "racingLine" || text === "reverse" || text === "smooth") return { kind: text };
  const m = /^refVelocity\(([+-]?\d+(?:\.\d+)?)\)$/.exec(text);
  if (m) {
    const vRef = Number(m[1]);
    if (Number.isFinite(vRef) && vRef >= -2 && vRef <= 12) return { kind: "refVelocity", vRef };
  }
  return null;
}

/** True when the run's mean progress speed is too low (or in the wrong direction) for behaviour `c`. */
export function isStalled(c: DrivingCase, meanProgress: number): boolean {
  if (c.kind === "reverse") return meanProgress > -MIN_PROGRESS_SPEED / 2;
  if (c.kind === "refVelocity") return false; // the metric itself penalises any speed but vRef
  return meanProgress < MIN_PROGRESS_SPEED;
}

function rms(count: number, f: (i: number) => number): number {
  let acc = 0;
  for (let i = 0; i < count; i++) acc += f(i) ** 2;
  return Math.sqrt(acc / count);
}

/** Mean progress speed over the recorded samples. */
export function meanProgressSpeed(run: RunResult): number {
  const vs = run.trajectory.vs;
  let acc = 0;
  for (let i = 0; i < vs.length; i++) acc += vs[i]!;
  return vs.length > 0 ? acc / vs.length : 0;
}

/** The behaviour's metric (lower is better) for a finished, uncrashed run. */
export function caseMetric(c: DrivingCase, run: RunResult, track: Track): number {
  const tr = run.trajectory;
  const count = tr.t.length;
  if (count === 0) return NaN;
  switch (c.kind) {
    case "centerline":
      return rms(count, (i) => {
        const dl = lookup(track, track.dLeft, tr.s[i]!);
        const dr = lookup(track, track.dRight, tr.s[i]!);
        return tr.n[i]! - (dl - (dl + dr) / 2);
      });
    case "racingLine":
      return rms(count, (i) => tr.n[i]!);
    case "reverse":
      return rms(count, (i) => tr.vs[i]! + 1);
    case "refVelocity":
      return rms(count, (i) => tr.vs[i]! - c.vRef);
    case "smooth":
      return rms(count, (i) => Math.hypot(tr.ax[i]!, tr.ay[i]!));
  }
}
