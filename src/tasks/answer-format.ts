/**
 * The answer format shared by the built-in maths tasks, kept short for character-level models:
 * `<answer>\boxed{357}</answer>` (27 characters for a 3-digit answer).
 *
 * Correctness is the `math-answer` reward on the boxed value (strict mode reads `\boxed{}`; `region: "answerTag"`
 * makes the single `<answer>` block the graded region, rewards spec G3), and a light format term is `format-tags` with the one
 * tag `answer` (exactly one block, non-empty, nothing outside it but whitespace; rewards spec §2.2).
 * Change the reward names or options here and every built-in task follows.
 */
import type { RewardTerm } from "./types.js";

/** Weight of the format term next to correctness (weight 1). */
export const FORMAT_WEIGHT = 0.2;

/** Stop strings for the built-in tasks: the closing tag ends a completion. */
export const ANSWER_STOP = ["</answer>"];

/** Wraps a final answer as the built-in tasks' gold completion. */
export function answerCompletion(inner: string): string {
  return `<answer>${inner}</answer>`;
}

/** `<answer>\boxed{value}</answer>`. */
export function boxedCompletion(value: string | number): string {
  return answerCompletion(`\\boxed{${value}}`);
}

/** The format term every built-in task uses. */
export function formatTerm(weight = FORMAT_WEIGHT): RewardTerm {
  return { name: "format", reward: "format-tags", weight, options: { tags: ["answer"] } };
}

/** The correctness term of the maths tasks: `math-answer` on the boxed value. */
export function mathCorrectTerm(): RewardTerm {
  return { name: "correct", reward: "math-answer", weight: 1, options: { region: "answerTag" } };
}
