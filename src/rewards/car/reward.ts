/**
 * The RobotxR1 MPC car lap rewards (rewards spec §11), registered as five named rewards so a task can weight them:
 *   mpc-car-driving     clip((b − rmse)/b, −4, 4), b = the default parameters' RMSE; crash, stall, unparseable or
 *                       rejected dict → `crashReward` (−4) (D-R1), or the reference's RMSE 69 under `crashRmse`
 *   mpc-car-format      mean over reasoning and answer of 1[exactly one open and one close tag]
 *   mpc-car-extraction  1 when a dict was parsed (an empty dict counts)
 *   mpc-car-names       (exact + 0.5·alias)/#keys; an empty dict and substrings earn 0 (D-R4, D-R5)
 *   mpc-car-improved    1 when driving > 0 (strictly better than the defaults): the task's pass@k term
 * Gold: `{ case, track, baselineRmse?, simVersion? }`. A gold whose case or track cannot be read, or whose baseline
 * run fails, scores null (G2, D-R3). The `robotxR1` preset restores the reference's quirks for parity: crash RMSE 69,
 * substring names earn 0.5 and an empty dict earns names = 1.
 */
import { z } from "zod";
import { rewards } from "../registry.js";
import type { RewardInput, RewardResult, RewardSpec } from "../types.js";
import { parseCase, type DrivingCase } from "./behaviours.js";
import { baselineRmse, evaluateParams, SIM_VERSION } from "./evaluate.js";
import { PARAM_NAMES } from "./mpc.js";
import { formatParams, namesScore, readParams, validateParams, type ParsedParams } from "./params.js";
import { TRACK_NAMES, type TrackName } from "./track.js";

/** Gold of a car example. */
export interface CarGold {
  /** Behaviour, e.g. "racingLine" or "refVelocity(2.5)". */
  case: string;
  track: TrackName;
  /** The default parameters' metric; recomputed when absent or from another simulator version. */
  baselineRmse?: number;
  simVersion?: string;
}

/** Options shared by the car rewards. */
export const carRewardOptions = z
  .object({
    preset: z.enum(["default", "robotxR1"]).default("default").describe("robotxR1 restores the reference's quirks (G7)"),
    outOfRange: z.enum(["reject", "clamp"]).default("reject").describe("out-of-range values: reject the dict, or clamp"),
    crashReward: z.number().default(-4).describe("driving term for a crash, stall, or unparseable/rejected dict (D-R1)"),
    crashRmse: z.number().positive().optional().describe("if set, a crash counts as this RMSE instead (reference: 69)"),
    clip: z.tuple([z.number(), z.number()]).default([-4, 4]).describe("clip range of the relative improvement (D-R2)"),
  })
  .strict();

/** Options after defaults. */
export type CarRewardOptions = z.infer<typeof carRewardOptions>;

/** A completion in the trained format carrying `params`. */
export function carCompletion(reasoning: string, params: Record<string, number>): string {
  return `<reasoning>${reasoning}</reasoning><answer>${formatParams(params)}</answer>`;
}

const EXAMPLE_GOLD: CarGold = { case: "racingLine", track: "circle" };

function readGold(gold: CarGold): { c: DrivingCase; track: TrackName } | null {
  const c = parseCase(gold?.case);
  if (!c || !TRACK_NAMES.includes(gold.track)) return null;
  return { c, track: gold.track };
}

/** The driving term with its diagnostics (null score when the gold or the baseline fails). */
export function drivingTerm(completion: string, gold: CarGold, o: CarRewardOptions): RewardResult {
  const g = readGold(gold);
  if (!g) return { score: null, terms: {}, info: { reason: `unreadable gold case/track: ${JSON.stringify(gold)}` } };
  const b = gold.baselineRmse !== undefined && gold.simVersion === SIM_VERSION ? gold.baselineRmse : baselineRmse(g.c, g.track);
  if (b === null || !(b > 0) || !Number.isFinite(b)) return { score: null, terms: {}, info: { reason: "baseline run failed", baseline: b } };
  const crashRmse = o.crashRmse ?? (o.preset === "robotxR1" ? 69 : undefined);
  const clip = (v: number) => Math.min(o.clip[1], Math.max(o.clip[0], v));
  const failed = (reason: string, extra: Record<string, unknown> = {}): RewardResult => {
    const driving = crashRmse !== undefined ? clip((b - crashRmse) / b) : o.crashReward;
    return { score: driving, terms: { driving }, info: { reason, baseline: b, ...extra } };
  };
  const parsed = readParams(completion);
  if (!parsed.extracted) return failed(parsed.error ?? "no parameters");
  const valid = validateParams(parsed.values, o.outOfRange);
  if (!valid.ok) return failed(`rejected: ${valid.reason}`);
  const ev = evaluateParams(g.c, g.track, valid.params);
  const info = { baseline: b, params: valid.params, clamped: valid.clamped, meanProgressSpeed: ev.meanProgressSpeed };
  if (ev.crashed) return failed(`crash (${ev.crashReason}) at t=${ev.run.crashTime?.toFixed(2)} s`, info);
  if (ev.stalled) return failed(`stalled: mean progress speed ${ev.meanProgressSpeed.toFixed(2)} m/s`, info);
  const driving = clip((b - ev.metric!) / b);
  return { score: driving, terms: { driving }, info: { ...info, rmse: ev.metric } };
}

function tagScore(text: string, tag: string): number {
  const count = (s: string) => text.split(s).length - 1;
  return count(`<${tag}>`) === 1 && count(`</${tag}>`) === 1 ? 1 : 0;
}

/** The reference's substring rule for names (robotxR1 preset only). */
function referenceNames(parsed: ParsedParams): number {
  if (!parsed.extracted) return 0;
  if (parsed.keys.length === 0) return 1;
  let credit = 0;
  for (const k of parsed.keys) {
    if (k.match === "exact") credit += 1;
    else if (k.match === "alias" || PARAM_NAMES.some((n) => n.includes(k.key))) credit += 0.5;
  }
  return credit / parsed.keys.length;
}

function spec(name: string, description: string, score: (input: RewardInput<CarGold>, o: CarRewardOptions) => RewardResult): RewardSpec<CarRewardOptions, CarGold> {
  return {
    name,
    description,
    options: carRewardOptions as unknown as z.ZodType<CarRewardOptions>,
    score,
    exampleGold: EXAMPLE_GOLD,
    goldCompletion: () => carCompletion("Follow the racing line tightly.", { qn: 60, qalpha: 15 }),
  };
}

/**
 * The driving term (runs the simulator). It has no gold completion in the registry sense: full credit (1) would
 * need an RMSE of exactly 0, so the registry-wide gold test skips it; the task's gold is tested to improve instead.
 */
export const carDrivingReward: RewardSpec<CarRewardOptions, CarGold> = (() => {
  const { goldCompletion: _unused, ...rest } = spec(
    "mpc-car-driving",
    "MPC car: relative improvement of the behaviour's RMSE over the default parameters, clipped to [-4, 4]",
    (input, o) => drivingTerm(input.completion, input.gold, o),
  );
  return rest;
})();

/** The format term. */
export const carFormatReward: RewardSpec<CarRewardOptions, CarGold> = {
  ...spec("mpc-car-format", "MPC car: mean over <reasoning> and <answer> of exactly one open and one close tag", (input) => {
    const v = (tagScore(input.completion, "reasoning") + tagScore(input.completion, "answer")) / 2;
    return { score: v, terms: { format: v } };
  }),
  maxScore: 1,
};

/** The extraction term. */
export const carExtractionReward: RewardSpec<CarRewardOptions, CarGold> = {
  ...spec("mpc-car-extraction", "MPC car: 1 when new_mpc_params = {...} in the answer parses", (input) => {
    const p = readParams(input.completion);
    const v = p.extracted ? 1 : 0;
    return { score: v, terms: { extraction: v }, info: p.error ? { reason: p.error } : {} };
  }),
  maxScore: 1,
};

/** The parameter-name term. */
export const carNamesReward: RewardSpec<CarRewardOptions, CarGold> = {
  ...spec("mpc-car-names", "MPC car: share of dict keys that are parameter names (aliases count half)", (input, o) => {
    const p = readParams(input.completion);
    const v = o.preset === "robotxR1" ? referenceNames(p) : namesScore(p);
    return { score: v, terms: { names: v }, info: { keys: p.keys } };
  }),
  maxScore: 1,
};

/** The pass@k term: did the parameters beat the defaults on the asked behaviour? */
export const carImprovedReward = spec(
  "mpc-car-improved",
  "MPC car: 1 when the parameters beat the defaults on the asked behaviour (driving > 0)",
  (input, o) => {
    const r = drivingTerm(input.completion, input.gold, o);
    if (r.score === null) return r;
    const v = r.score > 0 ? 1 : 0;
    return { score: v, terms: { improved: v }, info: r.info ?? {} };
  },
);

/** Every car reward, in term order. */
export const CAR_REWARDS = [carDrivingReward, carFormatReward, carExtractionReward, carNamesReward, carImprovedReward];

for (const r of CAR_REWARDS) if (!rewards.has(r.name)) rewards.register(r);
