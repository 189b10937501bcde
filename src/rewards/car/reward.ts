/**
 * The RobotxR1 MPC car lap rewards (rewards spec §11), registered as five named rewards so a task can weight them:
 *   mpc-car-driving     clip((b − rmse)/b, −4, 4), b = the default parameters' RMSE; crash, stall, unparseable or
 *                       rejected dict → `crashReward` (−4) (D-R1), or the reference's RMSE 69 under `crashRmse`
 *   mpc-car-format      mean over reasoning and answer of 1[exactly one open and one close tag]
 *   mpc-car-extraction  1 when a dict was parsed (an empty dict counts)
 *   mpc-car-names       (exact + 0.5·alias)/#keys; an empty dict and substrings earn 0 (D-R4, D-R5)
 *   mpc-car-improved    1 when driving > 0 (strictly better than the defaults): the task's pass@k term
 * Gold: `{ case, track, baselineRmse?, simVersion? }`. A gold whose case or track cannot be read, or whose baseline
 * run fails, scores null (G2, D-R3). The simulation runs in the shared reward worker pool (`worker: true`, the
 * default), off the training loop's thread; a worker that dies or times out gives null (our fault, D-R3).
 * Parsing and validation stay in the calling thread. The `robotxR1` preset restores the reference's quirks for parity: crash RMSE 69,
 * substring names earn 0.5 and an empty dict earns names = 1.
 */
import { z } from "zod";
import { rewards } from "../registry.js";
import type { RewardInput, RewardResult, RewardSpec } from "../types.js";
import { moduleUrl, sharedPool, type PoolOutcome } from "../sandbox/pool.js";
import { caseKey, parseCase } from "./behaviours.js";
import { SIM_VERSION } from "./evaluate.js";
import { evaluateJob, type EvalJobArgs, type EvalJobResult } from "./evaluate-job.js";
import { DEFAULT_PARAMS, PARAM_NAMES } from "./mpc.js";
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
    preset: z
      .enum(["default", "robotxR1"])
      .default("default")
      .describe("robotxR1 restores the reference's quirks (G7)"),
    outOfRange: z
      .enum(["reject", "clamp"])
      .default("reject")
      .describe("out-of-range values: reject the dict, or clamp"),
    crashReward: z
      .number()
      .default(-4)
      .describe("driving term for a crash, stall, or unparseable/rejected dict (D-R1)"),
    crashRmse: z.number().positive().optional().describe("if set, a crash counts as this RMSE instead (reference: 69)"),
    clip: z.tuple([z.number(), z.number()]).default([-4, 4]).describe("clip range of the relative improvement (D-R2)"),
    worker: z
      .boolean()
      .default(true)
      .describe("simulate in the shared reward worker pool (off the training loop's thread)"),
  })
  .strict();

/** Options after defaults. */
export type CarRewardOptions = z.infer<typeof carRewardOptions>;

/** A completion in the trained format carrying `params`. */
export function carCompletion(reasoning: string, params: Record<string, number>): string {
  return `<reasoning>${reasoning}</reasoning><answer>${formatParams(params)}</answer>`;
}

const EXAMPLE_GOLD: CarGold = { case: "racingLine", track: "circle" };

/** A completion read and validated: either its final result, or the run it needs. */
type Prepared = { done: RewardResult } | { args: EvalJobArgs; given: number | null; clamped: string[] };

function prepare(completion: string, gold: CarGold, o: CarRewardOptions): Prepared {
  const c = parseCase(gold?.case);
  if (!c || !TRACK_NAMES.includes(gold.track)) {
    return {
      done: { score: null, terms: {}, info: { reason: `unreadable gold case/track: ${JSON.stringify(gold)}` } },
    };
  }
  const given = gold.baselineRmse !== undefined && gold.simVersion === SIM_VERSION ? gold.baselineRmse : null;
  const base = { caseText: caseKey(c), track: gold.track, withBaseline: given === null };
  const parsed = readParams(completion);
  const valid = parsed.extracted ? validateParams(parsed.values, o.outOfRange) : null;
  if (!valid || !valid.ok) {
    const reason = !valid ? (parsed.error ?? "no parameters") : `rejected: ${(valid as { reason: string }).reason}`;
    // A failure needs no run, only the baseline (for crashRmse and for a null when the defaults themselves fail).
    if (given !== null) return { done: failure(reason, given, o) };
    return { args: { ...base, params: { ...DEFAULT_PARAMS }, failure: reason }, given, clamped: [] };
  }
  return { args: { ...base, params: valid.params }, given, clamped: valid.clamped };
}

function failure(reason: string, b: number, o: CarRewardOptions, extra: Record<string, unknown> = {}): RewardResult {
  const crashRmse = o.crashRmse ?? (o.preset === "robotxR1" ? 69 : undefined);
  const driving =
    crashRmse !== undefined ? Math.min(o.clip[1], Math.max(o.clip[0], (b - crashRmse) / b)) : o.crashReward;
  return { score: driving, terms: { driving }, info: { reason, baseline: b, ...extra } };
}

function finish(prep: Exclude<Prepared, { done: RewardResult }>, r: EvalJobResult, o: CarRewardOptions): RewardResult {
  const b = prep.given ?? r.baseline;
  if (b === null || !(b > 0) || !Number.isFinite(b))
    return { score: null, terms: {}, info: { reason: "baseline run failed", baseline: b } };
  if (prep.args.failure !== undefined) return failure(prep.args.failure, b, o);
  const info = { params: prep.args.params, clamped: prep.clamped, meanProgressSpeed: r.meanProgressSpeed };
  if (r.crashed) return failure(`crash (${r.crashReason}) at t=${r.crashTime?.toFixed(2)} s`, b, o, info);
  if (r.stalled) return failure(`stalled: mean progress speed ${r.meanProgressSpeed.toFixed(2)} m/s`, b, o, info);
  const driving = Math.min(o.clip[1], Math.max(o.clip[0], (b - r.metric!) / b));
  return { score: driving, terms: { driving }, info: { ...info, baseline: b, rmse: r.metric } };
}

/** The driving term, simulated in this thread (synchronous). */
export function drivingTerm(completion: string, gold: CarGold, o: CarRewardOptions): RewardResult {
  const prep = prepare(completion, gold, o);
  return "done" in prep ? prep.done : finish(prep, evaluateJob(prep.args), o);
}

const pending = new Map<string, Promise<PoolOutcome<EvalJobResult>>>();

/** The driving term, simulated in the shared reward worker pool when `o.worker` (runs are shared by key). */
export async function drivingTermAsync(completion: string, gold: CarGold, o: CarRewardOptions): Promise<RewardResult> {
  if (!o.worker) return drivingTerm(completion, gold, o);
  const prep = prepare(completion, gold, o);
  if ("done" in prep) return prep.done;
  const key = JSON.stringify(prep.args);
  let job = pending.get(key);
  if (!job) {
    job = sharedPool().run<EvalJobResult>({
      module: moduleUrl("../car/evaluate-job"),
      fn: "evaluateJob",
      args: prep.args,
      wallMs: 120_000,
    });
    if (pending.size >= 256) pending.delete(pending.keys().next().value!);
    pending.set(key, job);
  }
  const out = await job;
  // A worker that times out or dies is our fault, not the model's (D-R3).
  if (!out.ok) {
    pending.delete(key);
    return { score: null, terms: {}, info: { reason: `infrastructure: ${out.kind}: ${out.error}` } };
  }
  return finish(prep, out.value, o);
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

function spec(
  name: string,
  description: string,
  score: (input: RewardInput<CarGold>, o: CarRewardOptions) => RewardResult | Promise<RewardResult>,
): RewardSpec<CarRewardOptions, CarGold> {
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
    (input, o) => drivingTermAsync(input.completion, input.gold, o),
  );
  return rest;
})();

/** The format term. */
export const carFormatReward: RewardSpec<CarRewardOptions, CarGold> = {
  ...spec(
    "mpc-car-format",
    "MPC car: mean over <reasoning> and <answer> of exactly one open and one close tag",
    (input) => {
      const v = (tagScore(input.completion, "reasoning") + tagScore(input.completion, "answer")) / 2;
      return { score: v, terms: { format: v } };
    },
  ),
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
  async (input, o) => {
    const r = await drivingTermAsync(input.completion, input.gold, o);
    if (r.score === null) return r;
    const v = r.score > 0 ? 1 : 0;
    return { score: v, terms: { improved: v }, info: r.info ?? {} };
  },
);

/** Every car reward, in term order. */
export const CAR_REWARDS = [carDrivingReward, carFormatReward, carExtractionReward, carNamesReward, carImprovedReward];

for (const r of CAR_REWARDS) if (!rewards.has(r.name)) rewards.register(r);
