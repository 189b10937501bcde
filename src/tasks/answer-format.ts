/**
 * The answer format shared by the built-in tasks, kept short for character-level models (every character is a
 * sampled token): the completion is one `\boxed{…}` and nothing else, e.g. `\boxed{357}` (11 characters) or
 * `\boxed{(3+5)*2}` for countdown. Sampling stops at the first `}` (no built-in answer contains a brace).
 *
 * Terms: correctness (weight 1) from the task's checker, and a light format term (weight 0.2), `boxed-format`:
 * exactly one non-empty box with nothing around it. The maths tasks use `math-answer` in strict mode (boxes and
 * answer phrases only), reading the whole completion (there is no think block).
 * Change the reward names or options here and every built-in task follows.
 */
import type { RewardTerm } from "./types.js";
import "../rewards/boxed-format.js"; // registers "boxed-format"
import "../rewards/working-steps.js"; // registers "working-steps"

/** Weight of the format term next to correctness (weight 1). */
export const FORMAT_WEIGHT = 0.2;

/** Stop strings for the built-in tasks: the box's closing brace ends a completion. */
export const ANSWER_STOP = ["}"];

/** Suggested token budget of the built-in tasks (the longest gold is about 20 characters). */
export const ANSWER_MAX_TOKENS = 24;

/** `\boxed{value}`: the built-in tasks' gold completion. */
export function boxedCompletion(value: string | number): string {
  return `\\boxed{${value}}`;
}

/** The format term every built-in task uses; `workBefore` allows working before the box (the tasks' `showWork`). */
export function formatTerm(weight = FORMAT_WEIGHT, workBefore = false): RewardTerm {
  return { name: "format", reward: "boxed-format", weight, options: workBefore ? { workBefore: true } : {} };
}

/** The correctness term of the maths tasks: `math-answer` on the boxed value. */
export function mathCorrectTerm(): RewardTerm {
  return { name: "correct", reward: "math-answer", weight: 1, options: { region: "all" } };
}

/**
 * The working term of `showWork` tasks: `working-steps` at weight 0, so it never changes the score; it is logged
 * (`reward/working/mean`) and reports where the first wrong step ends, which `loss.afterFirstError: "mask"` uses.
 */
export function workingTerm(): RewardTerm {
  return { name: "working", reward: "working-steps", weight: 0 };
}
