/**
 * Finds the gold parameter dictionary of each car behaviour on each track by a small deterministic coordinate
 * search (multiplicative and additive steps, keep a step only when the metric improves and the car neither
 * crashes nor stalls), then writes them with the default-parameter baselines to src/tasks/mpc-car-gold.ts.
 *
 *   npx tsx scripts/tune-car.ts            (≈ 2–5 min on one core)
 *
 * refVelocity is tuned at vRef = 3 m/s; its gold is a template whose speed bounds are set to the asked speed.
 */
import { writeFileSync } from "node:fs";
import {
  baselineRmse,
  DEFAULT_PARAMS,
  evaluateParams,
  PARAM_RANGES,
  parseCase,
  SIM_VERSION,
  TRACK_NAMES,
  type MpcParams,
  type ParamName,
  type TrackName,
  validateParams,
} from "../src/rewards/car/index.js";

type Partial11 = Partial<MpcParams>;

interface Plan {
  start: Partial11;
  /** Parameters the search moves. */
  search: ParamName[];
}

const PLANS: Record<string, Plan> = {
  racingLine: { start: { qn: 40, qalpha: 10 }, search: ["qn", "qalpha", "qddelta", "qv"] },
  centerline: { start: { qn: 1, track_safety_margin: 1 }, search: ["qn", "qalpha", "qddelta", "track_safety_margin"] },
  reverse: { start: { qv: 0, v_min: -1, v_max: -1 }, search: ["qalpha", "qn", "qddelta", "qac"] },
  "refVelocity(3)": { start: { qv: 0, v_min: 3, v_max: 3 }, search: ["qalpha", "qn", "qddelta", "qac"] },
  smooth: {
    start: { alat_max: 4, a_min: -2, a_max: 2, qac: 0.5, v_min: 1, v_max: 3 },
    search: ["alat_max", "v_max", "qac", "qddelta", "a_max"],
  },
};

function clampParam(name: ParamName, v: number): number {
  const [lo, hi] = PARAM_RANGES[name];
  return Math.min(hi, Math.max(lo, Math.round(v * 1000) / 1000));
}

/** The reward's own validation (ranges, v_min ≤ v_max after merging with the defaults). */
function isValid(p: Partial11): boolean {
  const values = Object.fromEntries(
    Object.entries(p).map(([k, v]) => [k, { kind: "number" as const, value: v as number }]),
  );
  return validateParams(values, "reject").ok;
}

function score(caseText: string, track: TrackName, p: Partial11): number {
  const e = evaluateParams(parseCase(caseText)!, track, { ...DEFAULT_PARAMS, ...p });
  return e.metric === null || e.stalled ? Infinity : e.metric;
}

function tune(caseText: string, track: TrackName): { params: Partial11; metric: number; baseline: number } {
  const plan = PLANS[caseText]!;
  let best: Partial11 = { ...plan.start };
  if (!isValid(best)) throw new Error(`invalid start for ${caseText}`);
  let bestScore = score(caseText, track, best);
  for (let round = 0; round < 2; round++) {
    for (const name of plan.search) {
      const cur = best[name] ?? DEFAULT_PARAMS[name];
      const candidates = cur === 0 ? [1, 0.1] : [cur * 2, cur / 2];
      for (const c of candidates) {
        const trial = { ...best, [name]: clampParam(name, c) };
        if (!isValid(trial)) continue;
        const sc = score(caseText, track, trial);
        if (sc < bestScore) {
          best = trial;
          bestScore = sc;
        }
      }
    }
  }
  const baseline = baselineRmse(parseCase(caseText)!, track)!;
  return { params: best, metric: bestScore, baseline };
}

const out: Record<string, Record<string, { params: Partial11; metric: number; baseline: number }>> = {};
for (const track of TRACK_NAMES) {
  out[track] = {};
  for (const caseText of Object.keys(PLANS)) {
    const t0 = Date.now();
    const r = tune(caseText, track);
    out[track]![caseText] = r;
    console.log(
      `${track} ${caseText}: baseline ${r.baseline.toFixed(4)} tuned ${r.metric.toFixed(4)} (${(1 - r.metric / r.baseline).toFixed(3)}) ${JSON.stringify(r.params)} [${((Date.now() - t0) / 1000).toFixed(1)} s]`,
    );
  }
}

const file = `/**
 * Gold parameter dictionaries per track and behaviour, found by scripts/tune-car.ts (do not edit by hand; rerun
 * the script after any change to the simulator, and bump SIM_VERSION). \`metric\` is the tuned run's RMSE and
 * \`baseline\` the default parameters' RMSE, both from simulator version ${SIM_VERSION}.
 */
import type { MpcParams } from "../rewards/car/index.js";

/** Tuned result of one behaviour. */
export interface TunedCase {
  params: Partial<MpcParams>;
  metric: number;
  baseline: number;
}

/** Simulator version the numbers below come from. */
export const GOLD_SIM_VERSION = ${JSON.stringify(SIM_VERSION)};

/** Gold per track, then per behaviour ("refVelocity(3)" is the template for every refVelocity speed). */
export const CAR_GOLD: Record<"circle" | "F", Record<string, TunedCase>> = ${JSON.stringify(out, null, 2)};
`;
writeFileSync(new URL("../src/tasks/mpc-car-gold.ts", import.meta.url), file);
console.log("wrote src/tasks/mpc-car-gold.ts");
