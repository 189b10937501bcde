/**
 * Length-shaped rewards (spec §3): Open-RS's cosine length-scaled correctness ("cosine-length") and DAPO's soft
 * overlong punishment ("overlong"). Lengths come from the sampler's token ids, never from re-tokenising text; with
 * `unit: "chars"` the cosine counts characters as the Open-RS code did. Departure from Open-RS (default only):
 * progress is clamped to [0,1] so long outputs cannot wrap back to the best value; `preset: "openRs"` restores it.
 */
import { z } from "zod";
import { overlongRamp } from "../util/overlong.js";
import { ConfigError } from "../util/index.js";
import type { RewardResult, RewardSpec } from "./types.js";
import { checkMath, mathOptions, type MathGold } from "./math/reward.js";

/** Options of the cosine length-scaled reward. */
export const cosineOptions = z.object({
  unit: z
    .enum(["tokens", "chars"])
    .default("tokens")
    .describe("length unit: the sampler's token count (default) or characters (Open-RS code)"),
  maxLen: z
    .number()
    .positive()
    .default(1000)
    .describe("length at which progress reaches 1; set it to the recipe's max completion tokens"),
  minWrong: z.number().default(-1).describe("value of a wrong answer at length 0"),
  maxWrong: z.number().default(-0.5).describe("value of a wrong answer at maxLen"),
  minCorrect: z.number().default(0.5).describe("value of a correct answer at maxLen"),
  maxCorrect: z.number().default(1).describe("value of a correct answer at length 0"),
  clampProgress: z.boolean().default(true).describe("clamp L/maxLen to [0,1]; without it the cosine wraps"),
  preset: z.enum(["none", "openRs"]).default("none").describe("openRs: chars, script values (minWrong 0), no clamp"),
  math: mathOptions.partial().default({}).describe("options of the maths checker that decides correctness"),
});
/** Parsed cosine options. */
export type CosineOptions = z.output<typeof cosineOptions>;

/** The cosine value for a length and correctness (Open-RS `get_cosine_scaled_reward`). */
export function cosineScaled(
  length: number,
  correct: boolean,
  o: Omit<CosineOptions, "math" | "unit" | "preset">,
): number {
  let p = length / o.maxLen;
  if (o.clampProgress) p = Math.min(1, Math.max(0, p));
  const c = Math.cos(p * Math.PI);
  // Wrong answers swap lo/hi on purpose: a short wrong answer gets the lower value.
  const [lo, hi] = correct ? [o.minCorrect, o.maxCorrect] : [o.maxWrong, o.minWrong];
  return lo + 0.5 * (hi - lo) * (1 + c);
}

function effective(o: CosineOptions): CosineOptions {
  return o.preset === "openRs"
    ? { ...o, unit: "chars", minWrong: 0, maxWrong: -0.5, minCorrect: 0.5, maxCorrect: 1, clampProgress: false }
    : o;
}

/** "cosine-length": replaces the accuracy term (recipes do not add both). */
export const cosineLengthReward: RewardSpec<CosineOptions, MathGold> = {
  name: "cosine-length",
  description:
    "Open-RS cosine length-scaled correctness: short correct answers earn most, long wrong answers are punished least",
  options: cosineOptions,
  exampleGold: "42",
  maxScore: 1,
  score({ completion, gold, tokens, prompt }, options): RewardResult {
    const o = effective(options);
    const res = checkMath(typeof gold === "string" ? gold : gold.answer, completion, o.math, prompt);
    if (res.correct === null) return { score: null, terms: {}, info: res.info };
    if (o.unit === "tokens" && !tokens)
      return { score: null, terms: {}, info: { reason: "unit is tokens but no token ids were given" } };
    const length = o.unit === "tokens" ? tokens!.length : completion.length;
    const cosine = cosineScaled(length, res.correct, o);
    return { score: cosine, terms: { cosine }, info: { ...res.info, length, correct: res.correct } };
  },
  goldCompletion: (gold) => `</think>\\boxed{${typeof gold === "string" ? gold : gold.answer}}`,
};

/** Options of the soft overlong punishment. */
export const overlongOptions = z
  .object({
    maxLen: z.number().int().positive().default(4096).describe("Lmax: generated tokens beyond it earn -1"),
    cache: z
      .number()
      .int()
      .min(0)
      .default(512)
      .describe("Lcache: the linear ramp width before Lmax; 0 is a hard cut-off"),
    factor: z.number().positive().default(1).describe("scale of the penalty (verl's DAPO manager)"),
  })
  .refine((o) => o.cache <= o.maxLen, {
    message: "overlong: cache (Lcache) must not exceed maxLen (Lmax)",
    path: ["cache"],
  });
/** Parsed overlong options. */
export type OverlongOptions = z.output<typeof overlongOptions>;

/** DAPO eq. 13: 0 up to Lmax−Lcache, linear to −1 at Lmax, −1 beyond (times `factor`); the shared `overlongRamp`. */
export function overlongPenalty(length: number, o: OverlongOptions): number {
  if (o.cache > o.maxLen) throw new ConfigError(`overlong: cache ${o.cache} > maxLen ${o.maxLen}`);
  return overlongRamp(length, o);
}

/** "overlong": DAPO's soft overlong punishment on the sampler's token count (full score is 0). */
export const overlongReward: RewardSpec<OverlongOptions, unknown> = {
  name: "overlong",
  description: "DAPO soft overlong punishment: 0 until maxLen-cache tokens, linear down to -1 at maxLen, -1 beyond",
  options: overlongOptions,
  exampleGold: null,
  maxScore: 0,
  score({ tokens }, o): RewardResult {
    if (!tokens) return { score: null, terms: {}, info: { reason: "overlong needs the sampler's token ids" } };
    const overlong = overlongPenalty(tokens.length, o);
    return { score: overlong, terms: { overlong }, info: { length: tokens.length } };
  },
  goldCompletion: () => "short",
};
