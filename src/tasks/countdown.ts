/**
 * "countdown": reach a target from given numbers, e.g. `Use 3,5,2 to make 16.` → `\boxed{(3+5)*2}`.
 *
 * Each problem is made by combining the shuffled numbers with random + − × ÷ (non-negative, exact integer steps,
 * as in the game), so it always has a solution: the gold completion. Any other expression that reaches the target
 * scores too; the `countdown-expression` reward parses and evaluates it (never eval) and requires every given
 * number exactly once. A valid expression with the wrong value earns the reward's 0.1 format credit in the
 * correctness term (TinyZero/wd1 reference), so pass@k counts only exact hits (value 1).
 * The split is decided by the sorted numbers and the target, so a reordered test problem never appears in training.
 * With `showWork`, the gold completion first shows the generator's steps, e.g. `3+5=8,8*2=16 \boxed{(3+5)*2}`; only
 * the boxed expression is scored.
 */
import { z } from "zod";
import type { Rng } from "../util/rng.js";
import { combineExpressions, type CountdownGold } from "../rewards/countdown.js";
import type { Drawn } from "./generate.js";
import { ANSWER_MAX_TOKENS, ANSWER_STOP, FORMAT_WEIGHT, boxedCompletion, formatTerm } from "./answer-format.js";
import { defineTask } from "./define-task.js";
import type { TaskDefinition } from "./registry.js";
import type { RewardTerm, Task } from "./types.js";

const OPS = ["+", "-", "*", "/"] as const;

/** Difficulty knobs of "countdown". */
export const countdownTaskOptions = z
  .object({
    count: z.number().int().min(2).max(5).default(3).describe("numbers given"),
    maxNumber: z.number().int().min(2).max(100).default(12).describe("largest given number (smallest is 1)"),
    maxTarget: z.number().int().min(1).max(10000).default(99).describe("largest target"),
    ops: z
      .array(z.enum(OPS))
      .min(1)
      .default([...OPS])
      .describe("operators the generator combines with"),
    showWork: z.boolean().default(false).describe("gold completions show each step (3+5=8,8*2=16) before the box"),
  })
  .strict();

/** Options of "countdown" after defaults. */
export type CountdownTaskOptions = z.infer<typeof countdownTaskOptions>;

type Built = ReturnType<typeof combineExpressions>;

/**
 * Combines a random pair of the pool until one expression is left, recording each step as `a op b = c`; null if no
 * allowed op fits a pair.
 */
function randomExpression(
  rng: Rng,
  numbers: number[],
  ops: readonly (typeof OPS)[number][],
): (Built & { steps: string[] }) | null {
  let pool: Built[] = numbers.map((n) => ({ value: n, text: String(n), prec: 3 }));
  const steps: string[] = [];
  while (pool.length > 1) {
    const i = rng.int(pool.length);
    let j = rng.int(pool.length - 1);
    if (j >= i) j++;
    let a = pool[i]!;
    let b = pool[j]!;
    const op = rng.choice(ops);
    if (op === "-" && a.value < b.value) [a, b] = [b, a];
    if (op === "/" && (b.value === 0 || a.value % b.value !== 0)) {
      if (b.value !== 0 && b.value % a.value === 0 && a.value !== 0) [a, b] = [b, a];
      else return null;
    }
    pool = pool.filter((_, k) => k !== i && k !== j);
    const c = combineExpressions(a, op, b);
    steps.push(`${a.value}${op}${b.value}=${c.value}`);
    pool.push(c);
  }
  return { ...pool[0]!, steps };
}

function drawProblem(rng: Rng, o: CountdownTaskOptions): Drawn<CountdownGold> {
  for (;;) {
    const numbers = Array.from({ length: o.count }, () => rng.intBetween(1, o.maxNumber));
    const built = randomExpression(rng, numbers, o.ops);
    if (!built || !Number.isInteger(built.value) || built.value < 1 || built.value > o.maxTarget) continue;
    const target = built.value;
    const key = `${[...numbers].sort((x, y) => x - y).join(",")}->${target}`;
    return {
      key,
      prompt: `Use ${numbers.join(",")} to make ${target}.`,
      gold: { numbers, target },
      goldCompletion: o.showWork
        ? `${built.steps.join(",")} ${boxedCompletion(built.text)}`
        : boxedCompletion(built.text),
    };
  }
}

const countdown = defineTask<CountdownGold, CountdownTaskOptions>({
  name: "countdown",
  summary: "reach a target from given numbers (Use 3,5,2 to make 16.); answer an expression, checked by evaluating it",
  options: countdownTaskOptions,
  build: (o) => {
    const correct: RewardTerm = {
      name: "correct",
      reward: "countdown-expression",
      weight: 1,
      options: { region: "boxed" },
    };
    return {
      description: `reach a target <= ${o.maxTarget} from ${o.count} numbers in 1..${o.maxNumber} with ${o.ops.join(" ")}`,
      terms: [correct, formatTerm(FORMAT_WEIGHT, o.showWork)],
      correctTerm: "correct",
      stop: ANSWER_STOP,
      maxNewTokens: o.showWork ? ANSWER_MAX_TOKENS + 12 * (o.count - 1) : ANSWER_MAX_TOKENS,
      draw: (rng) => drawProblem(rng, o),
    };
  },
});

/** Builds the "countdown" task for the given difficulty. */
export const createCountdownTask: (options?: Partial<CountdownTaskOptions>) => Task<CountdownGold> = countdown.create;

/** Registry definition of "countdown". */
export const countdownTask: TaskDefinition<CountdownTaskOptions> = countdown.definition;
