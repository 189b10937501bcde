/**
 * Reward shaping before the estimator (algorithms spec §4, §8.4): DAPO's soft overlong punishment, added as a term
 * named "overlong" with weight 1 [arXiv 2503.14476 §3.4], and the policy for completions cut at the token budget
 * (`truncated`: keep, mask, zeroReward). Pure functions over one completion's numbers; the trainer applies the
 * result to its rollout records.
 *
 * Departure: L_c is `bufferFrac · L_max` (DAPO gives 4096 of 20480) rather than a token count. The reward checker
 * "overlong" in src/rewards/length.ts exposes the same ramp to external trainers; both call the one formula,
 * `overlongRamp` in src/util/overlong.ts (rewards may not import this layer, nor this layer rewards).
 */
import { overlongRamp, type OverlongRamp } from "../util/overlong.js";

/** Lengths of the overlong ramp in tokens: L_max (`maxLen`), L_c (`cache`), and a scale (`factor`, default 1). */
export type OverlongLengths = OverlongRamp;

/**
 * DAPO soft overlong punishment (§8.4, DAPO eq. 13): 0 up to L_max − L_c, then linear to −factor at L_max, −factor
 * beyond; L_c = 0 is a hard cut-off. Same name, signature and values as the "overlong" reward checker.
 */
export function overlongPenalty(length: number, o: OverlongLengths): number {
  return overlongRamp(length, o);
}

/** What reward shaping reads of one completion. */
export interface ShapeInput {
  /** Weighted reward (null = unscorable, left null). */
  reward: number | null;
  /** Unweighted terms by name. */
  terms: Readonly<Record<string, number>>;
  /** Completion tokens generated. */
  length: number;
  /** Whether it was cut at the token budget (finish reason "length"). */
  truncated: boolean;
}

/** The shaped completion: new reward and terms, and whether every token leaves the loss (`truncated: mask`). */
export interface Shaped {
  reward: number | null;
  terms: Record<string, number>;
  maskAll: boolean;
}

/** Options of `shapeReward`, in the recipe's shape. */
export interface ShapeOptions {
  overlong: { enabled: boolean; bufferFrac: number };
  truncated: "keep" | "mask" | "zeroReward";
  maxCompletionTokens: number;
}

/** Applies the overlong term, then the truncation policy (§4: `zeroReward` zeroes every term, overlong too). */
export function shapeReward(c: ShapeInput, o: ShapeOptions): Shaped {
  let reward = c.reward;
  const terms = { ...c.terms };
  if (o.overlong.enabled) {
    const maxLen = o.maxCompletionTokens;
    const pen = overlongPenalty(c.length, { maxLen, cache: o.overlong.bufferFrac * maxLen });
    terms.overlong = pen;
    if (reward !== null) reward += pen;
  }
  if (c.truncated && o.truncated === "zeroReward" && reward !== null) {
    reward = 0;
    for (const k of Object.keys(terms)) terms[k] = 0;
  }
  return { reward, terms, maskAll: c.truncated && o.truncated === "mask" };
}
