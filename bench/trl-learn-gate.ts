/**
 * The comparison of `bench:trl:learn`: how much held-out pass@1 each trainer gains per RL step, and whether rlvr
 * learns at least as much per step as TRL within the seed spread. Pure functions, unit-tested in
 * test/bench/trl-learn-gate.test.ts.
 *
 * The gain per step of one run is the least-squares slope of its held-out curve (pass@1 at steps 0, k, 2k, ...):
 * it uses every evaluation, so one lucky or unlucky point moves it less than "last minus first" does. Over seeds,
 * PASS means mean(rlvr) + spread ≥ mean(TRL), where the spread is the larger sample standard deviation of the two
 * sides' per-seed slopes (0 with one seed, which then asks for rlvr ≥ TRL outright). When TRL's mean slope is not
 * above 0, TRL learned nothing to compare against and the verdict is INCONCLUSIVE, never PASS.
 */
import { summarize } from "./harness/index.js";

/** One held-out evaluation of a run. */
export interface CurvePoint {
  step: number;
  pass: number;
}

/** Least-squares slope of pass@1 against step (pass@1 per step); needs two distinct steps. */
export function slopePerStep(curve: readonly CurvePoint[]): number {
  if (curve.length < 2) throw new Error(`slopePerStep: need at least 2 points, got ${curve.length}`);
  if (curve.some((p) => !Number.isFinite(p.step) || !Number.isFinite(p.pass))) {
    throw new Error("slopePerStep: every step and pass@1 must be a finite number");
  }
  const n = curve.length;
  const ms = curve.reduce((s, p) => s + p.step, 0) / n;
  const mp = curve.reduce((s, p) => s + p.pass, 0) / n;
  const sxx = curve.reduce((s, p) => s + (p.step - ms) ** 2, 0);
  if (sxx === 0) throw new Error("slopePerStep: every point has the same step");
  return curve.reduce((s, p) => s + (p.step - ms) * (p.pass - mp), 0) / sxx;
}

/** The final pass@1 minus the first (the curve sorted by step). */
export function totalGain(curve: readonly CurvePoint[]): number {
  if (curve.length === 0) throw new Error("totalGain: empty curve");
  const sorted = [...curve].sort((a, b) => a.step - b.step);
  return sorted[sorted.length - 1]!.pass - sorted[0]!.pass;
}

/** The verdict of the learning-parity comparison. */
export interface ParityVerdict {
  /** PASS: rlvr within the spread of TRL or better; FAIL: below; INCONCLUSIVE: TRL's mean slope ≤ 0. */
  verdict: "PASS" | "FAIL" | "INCONCLUSIVE";
  pass: boolean;
  rlvr: { mean: number; std: number; min: number; n: number };
  trl: { mean: number; std: number; min: number; n: number };
  /** max(std of rlvr's slopes, std of TRL's slopes). */
  spread: number;
  /** mean(rlvr) − mean(TRL); PASS when ≥ −spread. */
  margin: number;
}

/** PASS when rlvr's mean gain per step is at least TRL's minus the seed spread and TRL learned (file comment). */
export function learningParity(rlvrSlopes: readonly number[], trlSlopes: readonly number[]): ParityVerdict {
  if (rlvrSlopes.length === 0 || rlvrSlopes.length !== trlSlopes.length) {
    throw new Error(
      "learningParity: need one slope per seed on both sides, " + `got ${rlvrSlopes.length} and ${trlSlopes.length}`,
    );
  }
  if ([...rlvrSlopes, ...trlSlopes].some((x) => !Number.isFinite(x))) {
    throw new Error("learningParity: a slope is not finite");
  }
  const rlvr = summarize(rlvrSlopes);
  const trl = summarize(trlSlopes);
  const spread = Math.max(rlvr.std, trl.std);
  const margin = rlvr.mean - trl.mean;
  const pass = margin >= -spread;
  const verdict = trl.mean <= 0 ? "INCONCLUSIVE" : pass ? "PASS" : "FAIL";
  return { verdict, pass: verdict === "PASS", rlvr, trl, spread, margin };
}

/** A curve as text: `0:0.31 10:0.35 ...` (pass@1 to two decimals). */
export function formatCurve(curve: readonly CurvePoint[]): string {
  return curve.map((p) => `${p.step}:${p.pass.toFixed(2)}`).join(" ");
}
