/**
 * "arithmetic": short arithmetic word problems with a boxed final answer, e.g.
 * `Ann has 7 pens, gets 5. Total?` → `\boxed{12}`, or with `showWork` the working first:
 * `Bo has 11 cards, loses 6, gets 9. Now?` → `11-6=5,5+9=14 \boxed{14}` (the reasoning-then-answer shape of
 * RLVR completions, in a form a character-level model can learn; only the boxed answer is scored).
 *
 * Prompts stay under about 40 characters so a small character-level model can learn them. A problem is one or
 * two steps of +, −, × or ÷ over whole numbers (every intermediate result a non-negative integer). The split is
 * decided by the arithmetic alone (operation and numbers), not the name or item, so every test problem asks for a
 * computation that never appears in training.
 */
import { z } from "zod";
import type { Rng } from "../util/rng.js";
import { fnv1a, type Drawn } from "./generate.js";
import {
  ANSWER_MAX_TOKENS,
  ANSWER_STOP,
  FORMAT_WEIGHT,
  boxedCompletion,
  formatTerm,
  mathCorrectTerm,
  workingTerm,
} from "./answer-format.js";
import { defineTask } from "./define-task.js";
import type { AnswerGold } from "./addition.js";
import type { WorkingGold } from "../rewards/working-steps.js";
import type { TaskDefinition } from "./registry.js";
import type { RewardTerm, Task } from "./types.js";

const NAMES = [
  "Ann",
  "Bo",
  "Cy",
  "Di",
  "Ed",
  "Flo",
  "Gus",
  "Ivy",
  "Jo",
  "Kim",
  "Lu",
  "Max",
  "Ned",
  "Pam",
  "Sam",
  "Tom",
  "Uma",
  "Zoe",
];
const ITEMS = ["pens", "cats", "eggs", "cups", "toys", "hats", "figs", "keys", "cards", "books"];

/** The operations a problem may use. */
export const ARITHMETIC_OPS = ["add", "sub", "mul", "div"] as const;
/** One arithmetic operation. */
export type ArithmeticOp = (typeof ARITHMETIC_OPS)[number];

/** Difficulty knobs of "arithmetic". */
export const arithmeticOptions = z
  .object({
    maxValue: z.number().int().min(2).max(999).default(20).describe("largest number in a problem"),
    minSteps: z.number().int().min(1).max(2).default(1).describe("fewest operations"),
    maxSteps: z.number().int().min(1).max(2).default(2).describe("most operations"),
    ops: z
      .array(z.enum(ARITHMETIC_OPS))
      .min(1)
      .default([...ARITHMETIC_OPS])
      .describe("operations used"),
    showWork: z.boolean().default(false).describe("gold completions show each step (11-6=5,5+9=14) before the box"),
    workShare: z
      .number()
      .min(0)
      .max(1)
      .default(1)
      .describe(
        "with showWork: the share of problems whose gold shows the working (the rest are just the box), chosen by a hash of the problem",
      ),
    cosineMaxLen: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        "Open-RS: score with the cosine length-scaled correctness (`cosine-length`, weight 1, progress 1 at this many tokens) instead of plain correctness (kept at weight 0: pass@1 and logs)",
      ),
  })
  .strict()
  .refine((o) => o.minSteps <= o.maxSteps, { message: "minSteps must be <= maxSteps", path: ["minSteps"] })
  .refine((o) => o.showWork || o.workShare === 1, { message: "workShare needs showWork: true", path: ["workShare"] });

/** Gold of "arithmetic": the answer, and with `showWork` each step's result (for the weight-0 working term). */
export type ArithmeticGold = AnswerGold & Partial<WorkingGold>;

/** Options of "arithmetic" after defaults. */
export type ArithmeticOptions = z.infer<typeof arithmeticOptions>;

/**
 * The split key of a commutative step: operands in ascending order, so `3+4` and `4+3` (and `3*4`, `4*3`) are one
 * problem and land in the same split. Without it about 9% of held-out questions had their commuted twin in training.
 */
export function commutedKey(a: number, op: "+" | "*", b: number): string {
  return a <= b ? `${a}${op}${b}` : `${b}${op}${a}`;
}

/** One step's numbers and text, given the running total. */
function oneStep(
  rng: Rng,
  op: ArithmeticOp,
  max: number,
  name: string,
  item: string,
): { text: string; value: number; key: string; work: string } {
  switch (op) {
    case "add": {
      const a = rng.intBetween(1, max - 1);
      const b = rng.intBetween(1, max - a);
      return {
        text: `${name} has ${a} ${item}, gets ${b}.`,
        value: a + b,
        key: commutedKey(a, "+", b),
        work: `${a}+${b}=${a + b}`,
      };
    }
    case "sub": {
      const a = rng.intBetween(2, max);
      const b = rng.intBetween(1, a - 1);
      return {
        text: `${name} has ${a} ${item}, loses ${b}.`,
        value: a - b,
        key: `${a}-${b}`,
        work: `${a}-${b}=${a - b}`,
      };
    }
    case "mul": {
      const a = rng.intBetween(2, Math.max(2, Math.floor(Math.sqrt(max * 2))));
      const b = rng.intBetween(2, Math.max(2, Math.floor(max / a)));
      return {
        text: `${name} has ${a} bags of ${b} ${item}.`,
        value: a * b,
        key: commutedKey(a, "*", b),
        work: `${a}*${b}=${a * b}`,
      };
    }
    case "div": {
      const b = rng.intBetween(2, Math.max(2, Math.floor(Math.sqrt(max))));
      const q = rng.intBetween(1, Math.max(1, Math.floor(max / b)));
      return {
        text: `${name} splits ${q * b} ${item} into ${b} bags.`,
        value: q,
        key: `${q * b}/${b}`,
        work: `${q * b}/${b}=${q}`,
      };
    }
  }
}

/** Draws one problem. Two-step problems add or remove a few more items from the first step's total. */
function drawProblem(rng: Rng, o: ArithmeticOptions): Drawn<ArithmeticGold> {
  const name = rng.choice(NAMES);
  const item = rng.choice(ITEMS);
  let steps = rng.intBetween(o.minSteps, o.maxSteps);
  const op = rng.choice(o.ops);
  const first = oneStep(rng, op, o.maxValue, name, item);
  // "splits into bags, then gets 2" would be ambiguous (per bag or in all?), so division stays one step.
  if (op === "div") steps = 1;
  let value = first.value;
  let key = first.key;
  let work = first.work;
  const results = [first.value];
  let prompt: string;
  if (steps === 1) {
    prompt = `${first.text} ${op === "div" ? "Each?" : op === "sub" ? "Left?" : "Total?"}`;
  } else {
    // Second step: gets c more, or loses c (never below zero).
    const gets = value === 0 || rng.random() < 0.5;
    const c = gets
      ? rng.intBetween(1, Math.max(1, o.maxValue - Math.min(value, o.maxValue - 1)))
      : rng.intBetween(1, value);
    work += `,${value}${gets ? "+" : "-"}${c}=${gets ? value + c : value - c}`;
    value = gets ? value + c : value - c;
    results.push(value);
    key = `(${key})${gets ? "+" : "-"}${c}`;
    prompt = `${first.text.slice(0, -1)}, ${gets ? "gets" : "loses"} ${c}. Now?`;
  }
  const answer = String(value);
  const shown = o.showWork && (o.workShare >= 1 || shareHash(key) < o.workShare);
  return {
    key,
    prompt,
    gold: o.showWork ? { answer, steps: results } : { answer },
    goldCompletion: shown ? `${work} ${boxedCompletion(answer)}` : boxedCompletion(answer),
  };
}

/** A fixed number in [0, 1) per problem key, independent of the split's hash (so both splits mix the two forms). */
function shareHash(key: string): number {
  return (Math.imul(fnv1a(`work:${key}`) ^ 0x2545f491, 0x9e3779b1) >>> 0) / 2 ** 32;
}

/** Open-RS's correctness: `cosine-length` carries the score; plain correctness stays, at weight 0, for pass@1. */
function cosineTerms(maxLen: number): RewardTerm[] {
  const correct = mathCorrectTerm();
  const cosine = { name: "cosine", reward: "cosine-length", weight: 1, options: { maxLen, math: correct.options } };
  return [{ ...correct, weight: 0 }, cosine];
}

/** The built task's description: sizes, and where the working shows. */
function describe(o: ArithmeticOptions): string {
  const share = o.workShare < 1 ? ` (in ${Math.round(o.workShare * 100)}% of gold completions)` : "";
  const work = o.showWork ? ` after the working${share}` : "";
  const cosine = o.cosineMaxLen === undefined ? "" : `, cosine length-scaled correctness (maxLen ${o.cosineMaxLen})`;
  return `arithmetic word problems (${o.minSteps}-${o.maxSteps} steps of ${o.ops.join("/")}, numbers <= ${o.maxValue}), answer boxed${work}${cosine}`;
}

const arithmetic = defineTask<ArithmeticGold, ArithmeticOptions>({
  name: "arithmetic",
  summary:
    "short arithmetic word problems (Ann has 7 pens, gets 5. Total?), boxed answer; difficulty: size, steps, ops",
  options: arithmeticOptions,
  build: (o) => ({
    description: describe(o),
    terms: [
      ...(o.cosineMaxLen === undefined ? [mathCorrectTerm()] : cosineTerms(o.cosineMaxLen)),
      formatTerm(FORMAT_WEIGHT, o.showWork),
      ...(o.showWork ? [workingTerm()] : []),
    ],
    correctTerm: "correct",
    stop: ANSWER_STOP,
    maxNewTokens: o.showWork ? ANSWER_MAX_TOKENS + 16 : ANSWER_MAX_TOKENS,
    draw: (rng) => drawProblem(rng, o),
  }),
});

/** Builds the "arithmetic" task for the given difficulty. */
export const createArithmeticTask: (options?: Partial<ArithmeticOptions>) => Task<ArithmeticGold> = arithmetic.create;

/** Registry definition of "arithmetic". */
export const arithmeticTask: TaskDefinition<ArithmeticOptions> = arithmetic.definition;
