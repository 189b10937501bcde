/**
 * "working-steps": checks the working a completion shows before its boxed answer, step by step, against the gold's
 * intermediate results, and says where the first wrong step ends. The working is comma-separated equations
 * `a op b = c` (op one of + - * /), as the arithmetic task's `showWork` gold writes it: `11-6=5,5+9=14 \boxed{14}`.
 *
 * Step k is right when its equation is true over whole numbers, it chains (for k ≥ 2 one operand is step k − 1's
 * result), and its result equals gold step k's. The score is the fraction of gold steps matched before the first
 * wrong step (partial credit; 1 only when every gold step is right and no extra step follows).
 *
 * `firstErrorEnd` (see RewardResult) is the character offset where the first wrong step ends: everything after it
 * follows from a wrong premise. With `algorithm.loss.afterFirstError: "mask"` the trainer gives those tokens no
 * credit, so an outcome reward never pushes down a correct later step (`6+13=19` after `3+2=6`) only because it
 * continued a wrong one. Tasks add this reward as a weight-0 term, so it shapes credit and is logged but never
 * changes the score; weighted, it is a process reward whose adversarial cases are in its tests.
 */
import { z } from "zod";
import { rewards } from "./registry.js";
import type { RewardResult, RewardSpec } from "./types.js";

/** Gold of "working-steps": the intermediate result of each step, in order (the last is the answer). */
export interface WorkingGold {
  steps: readonly number[];
}

/** Options of "working-steps" (none yet; strict so a typo fails at load). */
export const workingStepsOptions = z.object({}).strict();

/** Longest working read (characters); a longer one is read up to here (a 1 MB completion is not a reason to hang). */
export const MAX_WORK_CHARS = 4096;
const EQUATION = /^\s*(\d{1,12})\s*([-+*/])\s*(\d{1,12})\s*=\s*(\d{1,12})\s*$/;

/** One step of the working as written: its span in the completion and, when it parses, its numbers. */
interface Step {
  end: number;
  eq: { a: number; op: string; b: number; c: number } | null;
}

/** The comma-separated steps before the first `\boxed` (or the whole text when there is none). */
function stepsOf(completion: string): Step[] {
  const box = completion.indexOf("\\boxed");
  const work = completion.slice(0, Math.min(box < 0 ? completion.length : box, MAX_WORK_CHARS));
  if (work.trim() === "") return [];
  const out: Step[] = [];
  let start = 0;
  for (const part of work.split(",")) {
    const m = EQUATION.exec(part);
    // The step's span ends at its last non-space character (an empty step at its separator, so it is never empty).
    const end = Math.max(start + part.trimEnd().length, start + 1);
    out.push({ end, eq: m ? { a: Number(m[1]), op: m[2]!, b: Number(m[3]), c: Number(m[4]) } : null });
    start += part.length + 1;
  }
  return out;
}

/** The value of `a op b` over whole numbers, or null when it is not one (negative or inexact division). */
function evaluate(a: number, op: string, b: number): number | null {
  const v = op === "+" ? a + b : op === "-" ? a - b : op === "*" ? a * b : b === 0 || a % b !== 0 ? null : a / b;
  return v !== null && v >= 0 && Number.isSafeInteger(v) ? v : null;
}

/** Scores the working of `completion` against `steps`; see the file comment. */
export function checkWorking(
  completion: string,
  steps: readonly number[],
): { score: number; right: number; firstErrorEnd?: number; reason?: string } {
  const written = stepsOf(completion);
  let right = 0;
  for (let k = 0; k < written.length; k++) {
    const s = written[k]!;
    const why = (reason: string) => ({
      score: right / steps.length,
      right,
      firstErrorEnd: s.end,
      reason: `step ${k + 1}: ${reason}`,
    });
    if (!s.eq) return why("not an equation a op b = c");
    if (k >= steps.length) return why("more steps than the problem needs");
    if (evaluate(s.eq.a, s.eq.op, s.eq.b) !== s.eq.c) return why("false");
    if (k > 0 && s.eq.a !== steps[k - 1] && s.eq.b !== steps[k - 1]) return why("does not use the previous result");
    if (s.eq.c !== steps[k]) return why("wrong intermediate result");
    right++;
  }
  if (right < steps.length)
    return { score: right / steps.length, right, reason: `${steps.length - right} step(s) missing` };
  return { score: 1, right };
}

/** A true equation from `prev` to `c` (for the gold completion the registry-wide test scores). */
function goldStep(prev: number, c: number): string {
  return c >= prev ? `${prev}+${c - prev}=${c}` : `${prev}-${prev - c}=${c}`;
}

/** The registered reward spec. */
export const workingStepsReward: RewardSpec<z.infer<typeof workingStepsOptions>, WorkingGold> = {
  name: "working-steps",
  description:
    "process term: the working's equations (a op b = c, comma-separated) are true, chain, and hit the gold's intermediate results; reports where the first wrong step ends",
  options: workingStepsOptions,
  score: ({ completion, gold }): RewardResult => {
    if (
      !gold ||
      !Array.isArray(gold.steps) ||
      gold.steps.length === 0 ||
      !gold.steps.every((x) => Number.isSafeInteger(x) && x >= 0)
    ) {
      return {
        score: null,
        terms: {},
        info: { error: "gold has no steps (expected { steps: number[] } of whole numbers)" },
      };
    }
    const r = checkWorking(completion, gold.steps);
    return {
      score: r.score,
      terms: { working: r.score },
      info: { right: r.right, ...(r.reason ? { reason: r.reason } : {}) },
      ...(r.firstErrorEnd !== undefined ? { firstErrorEnd: r.firstErrorEnd } : {}),
    };
  },
  goldCompletion: (gold) =>
    `${gold.steps.map((c, k) => goldStep(k === 0 ? 0 : gold.steps[k - 1]!, c)).join(",")} \\boxed{${gold.steps.at(-1)}}`,
  exampleGold: { steps: [5, 14] },
  maxScore: 1,
};

if (!rewards.has(workingStepsReward.name)) rewards.register(workingStepsReward);
