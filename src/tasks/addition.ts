/**
 * "addition": multi-digit addition such as `12+345=` → `\boxed{357}`.
 *
 * The smallest task, used by the SFT benchmark and the demo's warm start. Difficulty is the number of operands and
 * the digits per operand; carries make longer operands markedly harder for a small character-level model.
 */
import { z } from "zod";
import { randomWithDigits } from "./generate.js";
import { ANSWER_MAX_TOKENS, ANSWER_STOP, boxedCompletion, formatTerm, mathCorrectTerm } from "./answer-format.js";
import { defineTask } from "./define-task.js";
import type { TaskDefinition } from "./registry.js";
import type { Task } from "./types.js";

/** Gold of a maths task: the final answer as text (what `math-answer` compares against). */
export interface AnswerGold {
  answer: string;
}

/** Difficulty knobs of "addition". */
export const additionOptions = z
  .object({
    minDigits: z.number().int().min(1).max(9).default(1).describe("fewest digits per operand"),
    maxDigits: z.number().int().min(1).max(9).default(3).describe("most digits per operand"),
    operands: z.number().int().min(2).max(5).default(2).describe("numbers to add"),
  })
  .strict()
  .refine((o) => o.minDigits <= o.maxDigits, { message: "minDigits must be <= maxDigits", path: ["minDigits"] });

/** Options of "addition" after defaults. */
export type AdditionOptions = z.infer<typeof additionOptions>;

const addition = defineTask<AnswerGold, AdditionOptions>({
  name: "addition",
  summary: "multi-digit addition (12+345=), boxed answer; difficulty: digits and operands",
  options: additionOptions,
  build: (o) => ({
    description: `add ${o.operands} numbers of ${o.minDigits}-${o.maxDigits} digits, answer boxed`,
    terms: [mathCorrectTerm(), formatTerm()],
    correctTerm: "correct",
    stop: ANSWER_STOP,
    maxNewTokens: ANSWER_MAX_TOKENS,
    draw(rng) {
      const xs = Array.from({ length: o.operands }, () =>
        randomWithDigits(rng, rng.intBetween(o.minDigits, o.maxDigits)),
      );
      const prompt = `${xs.join("+")}=`;
      const answer = String(xs.reduce((a, b) => a + b, 0));
      return { key: prompt, prompt, gold: { answer }, goldCompletion: boxedCompletion(answer) };
    },
  }),
});

/** Builds the "addition" task for the given difficulty. */
export const createAdditionTask: (options?: Partial<AdditionOptions>) => Task<AnswerGold> = addition.create;

/** Registry definition of "addition". */
export const additionTask: TaskDefinition<AdditionOptions> = addition.definition;
