/**
 * The reward of `bench:trl:learn`'s TRL side, computed by rlvr itself so both sides train on the same rule: the
 * Python peer (bench/peers/trl_learn.py) starts this worker once and writes one JSON line per batch,
 * `{"prompts": [...], "completions": [...]}`; the worker answers `{"rewards": [...]}` (null where the task cannot
 * score a completion; TRL counts it as NaN). Each completion is cut after the task's first stop string, as rlvr's
 * sampler cuts its own (TRL's generate has no stop strings; the tokens after still carry TRL's loss).
 * Usage: `tsx bench/trl-score-worker.ts <task> '<options JSON>' <trainExamples>`.
 */
import { createInterface } from "node:readline";
import { getTask } from "../src/tasks/index.js";
import "../src/trainer/builtins.js";
import type { Example, Task } from "../src/tasks/types.js";

/** `text` up to and including the first occurrence of any stop string (unchanged when none occurs). */
export function cutAtStop(text: string, stop: readonly string[]): string {
  let end = text.length;
  for (const s of stop) {
    const i = text.indexOf(s);
    if (i >= 0 && i + s.length < end) end = i + s.length;
  }
  return text.slice(0, end);
}

/** Scores one batch: each completion against the train example with that prompt. */
export async function scoreBatch(
  task: Task,
  byPrompt: ReadonlyMap<string, Example>,
  prompts: readonly string[],
  completions: readonly string[],
): Promise<(number | null)[]> {
  if (prompts.length !== completions.length) {
    throw new Error(`score worker: ${prompts.length} prompts, ${completions.length} completions`);
  }
  return Promise.all(
    prompts.map(async (p, i) => {
      const ex = byPrompt.get(p);
      if (!ex) throw new Error(`score worker: prompt ${JSON.stringify(p)} is not a train prompt of ${task.name}`);
      return (await task.score(ex, cutAtStop(completions[i]!, task.stop ?? []))).score;
    }),
  );
}

async function main(): Promise<void> {
  const [name, options, count] = process.argv.slice(2);
  const task = getTask(name!, JSON.parse(options ?? "{}") as Record<string, unknown>);
  const byPrompt = new Map(task.generate("train", Number(count), 0).map((e) => [e.prompt, e as Example]));
  for await (const line of createInterface({ input: process.stdin })) {
    if (line.trim() === "") continue;
    const req = JSON.parse(line) as { prompts: string[]; completions: string[] };
    const rewards = await scoreBatch(task, byPrompt, req.prompts, req.completions);
    process.stdout.write(JSON.stringify({ rewards }) + "\n");
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
