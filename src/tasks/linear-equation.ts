/**
 * "linear-equation": solve a one-variable linear equation, e.g. `Solve 3x+5=20.` → `\boxed{5}`.
 *
 * The fourth built-in task: the answer is not in the prompt's numbers, so it needs an inverse operation
 * (subtract, then divide), a step that addition and the word problems never ask for. Solutions are whole numbers
 * in 0..maxX; the split is decided by the equation itself.
 */
import { z } from "zod";
import { ANSWER_MAX_TOKENS, ANSWER_STOP, boxedCompletion, formatTerm, mathCorrectTerm } from "./answer-format.js";
import { defineTask } from "./define-task.js";
import type { AnswerGold } from "./addition.js";
import type { TaskDefinition } from "./registry.js";
import type { Task } from "./types.js";

/** Difficulty knobs of "linear-equation". */
export const linearEquationOptions = z
  .object({
    maxCoef: z.number().int().min(1).max(99).default(9).describe("largest coefficient a in ax+b=c"),
    maxX: z.number().int().min(1).max(999).default(12).describe("largest solution x"),
    maxOffset: z.number().int().min(0).max(999).default(20).describe("largest offset b"),
  })
  .strict();

/** Options of "linear-equation" after defaults. */
export type LinearEquationOptions = z.infer<typeof linearEquationOptions>;

const linearEquation = defineTask<AnswerGold, LinearEquationOptions>({
  name: "linear-equation",
  summary: "solve a linear equation (Solve 3x+5=20.), boxed whole-number answer; difficulty: coefficient and range",
  options: linearEquationOptions,
  build: (o) => ({
    description: `solve ax+b=c or ax-b=c for whole x <= ${o.maxX} (a <= ${o.maxCoef}), answer boxed`,
    terms: [mathCorrectTerm(), formatTerm()],
    correctTerm: "correct",
    stop: ANSWER_STOP,
    maxNewTokens: ANSWER_MAX_TOKENS,
    draw(rng) {
      const a = rng.intBetween(1, o.maxCoef);
      const x = rng.intBetween(0, o.maxX);
      const b = rng.intBetween(0, o.maxOffset);
      const minus = b > 0 && a * x >= b && rng.random() < 0.5;
      const c = minus ? a * x - b : a * x + b;
      const lhs = `${a === 1 ? "" : a}x${b === 0 ? "" : minus ? `-${b}` : `+${b}`}`;
      const prompt = `Solve ${lhs}=${c}.`;
      const answer = String(x);
      return { key: prompt, prompt, gold: { answer }, goldCompletion: boxedCompletion(answer) };
    },
  }),
});

/** Builds the "linear-equation" task for the given difficulty. */
export const createLinearEquationTask: (options?: Partial<LinearEquationOptions>) => Task<AnswerGold> =
  linearEquation.create;

/** Registry definition of "linear-equation". */
export const linearEquationTask: TaskDefinition<LinearEquationOptions> = linearEquation.definition;
