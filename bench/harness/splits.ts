/**
 * Three-way data splits for effect benches: the task's train split, and its held-out split cut in two by a
 * second, independent hash of each question: `tune` (for choosing settings) and `final` (used only by the
 * reported run). Settings tuned on the questions that produce the reported figures do not carry over, so the
 * figures a bench quotes come from `final`, and `BENCH_SPLIT=tune` is what tuning runs use.
 */
import { fnv1a } from "../../src/tasks/generate.js";
import type { Example, Task } from "../../src/tasks/types.js";

/** The held-out half a question belongs to (salted so it is independent of the train/test hash). */
export function heldOutHalf(prompt: string): "tune" | "final" {
  const h = Math.imul(fnv1a(`heldout:${prompt}`) ^ 0x9e3779b9, 0x85ebca6b) >>> 0;
  return h % 2 === 0 ? "tune" : "final";
}

/** The split named by BENCH_SPLIT (default `final`); anything else is an error. */
export function splitFromEnv(value: string | undefined): "tune" | "final" {
  const v = value ?? "final";
  if (v !== "tune" && v !== "final") throw new Error(`BENCH_SPLIT: ${JSON.stringify(v)}; allowed: tune, final`);
  return v;
}

/**
 * The first `count` held-out questions of `half`, in the task's own test order (seed 0). Draws test questions in
 * growing batches until enough fall in the half; the task errors if its held-out space is too small.
 */
export function heldOutExamples<G>(task: Task<G>, half: "tune" | "final", count: number): Example<G>[] {
  for (let pool = count * 2 + 16; ; pool *= 2) {
    const chosen = task.generate("test", pool, 0).filter((e) => heldOutHalf(e.prompt) === half);
    if (chosen.length >= count) return chosen.slice(0, count);
  }
}
