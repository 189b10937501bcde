/**
 * bench:conductor's worker pool (bench/conductor.ts): one small built-in worker per skill plus a weak generalist,
 * trained by SFT on the step prompts of gold chains and cached under the work folder (keyed by their settings and
 * the source hash); the check that the pool can carry out the gold plans at all; and the best single worker.
 *
 * The check exists because a pool that cannot do its own steps makes the bench's claim untestable: with the first
 * pool (Llama shape, d 96, 3 layers, 1,500 SFT steps on 4,000 pairs, free-width formats) the gold plans were right on
 * 0 of 200 questions (docs/conductor.md), so the planner's start solved nothing and RL had no signal. The workers are
 * now GPT-2-shaped (learned positions) and the formats fixed-width (src/tasks/conductor-skills.ts).
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { loadModel } from "../../src/models/index.js";
import { promptIds } from "../../src/rollout/groups.js";
import { sample } from "../../src/sampling/sample.js";
import { planText, skillPairs, SKILL_DESCRIPTIONS, type SkillName } from "../../src/tasks/conductor-skills.js";
import type { WorkerOptions } from "../../src/tasks/conductor.js";
import type { Example, Task } from "../../src/tasks/types.js";
import { Rng } from "../../src/util/index.js";
import { runChildJob, runPool } from "../harness/child-job.js";
import { sourceHash } from "../harness/index.js";
import type { PoolJob } from "./pool-job.js";

const JOB = "bench/conductor/pool-job.ts";

/**
 * The source a worker depends on, hashed into the pool's cache key: the engine, models and SFT trainer, the skills'
 * data, and the job itself. Narrower than the SFT starts' `SFT_START_SOURCES` (which holds every task), so an edit to
 * an unrelated task does not retrain the pool (35 CPU-minutes).
 */
export const POOL_SOURCES = [
  "src/models",
  "src/engine",
  "native",
  "src/util",
  "src/trainer/sft.ts",
  "src/tasks/conductor-skills.ts",
  "src/tasks/generate.ts",
  "src/tasks/types.ts",
  JOB,
];

/** The pool's sizes. */
export interface PoolSizes {
  workerSteps: number;
  workerD: number;
  workerLayers: number;
}

/** The shared cap on worker tokens per question. */
export const CAP = 64;

const SKILLS: readonly SkillName[] = ["read", "multiply", "add", "generalist"];
const IDS: Record<SkillName, string> = {
  read: "reader",
  multiply: "multiplier",
  add: "adder",
  generalist: "generalist",
};

/** The pool's worker folders under the work folder (keyed by the sizes and the source), and whether all are made. */
function poolFolders(ROOT: string, OUT: string, S: PoolSizes) {
  const settings = { steps: S.workerSteps, d: S.workerD, layers: S.workerLayers, pairs: 50_000, batch: 64, v: 2 };
  const key = createHash("sha256")
    .update(JSON.stringify(settings))
    .update(sourceHash(ROOT, POOL_SOURCES))
    .digest("hex")
    .slice(0, 16);
  const dirs = SKILLS.map((skill) => join(OUT, "pool", key, skill));
  return { settings, dirs, built: dirs.every((dir) => existsSync(join(dir, "config.json"))) };
}

/** The pool's worker options (their folders whether made or not), and whether every worker is made. */
export function skillPool(ROOT: string, OUT: string, S: PoolSizes): { workers: WorkerOptions[]; built: boolean } {
  const { dirs, built } = poolFolders(ROOT, OUT, S);
  const workers = SKILLS.map((skill, i) => {
    const w: WorkerOptions = {
      id: IDS[skill],
      description: SKILL_DESCRIPTIONS[skill],
      maxTokens: 24,
      cost: 1,
      source: { type: "checkpoint", path: dirs[i]!, temperature: 0 },
    };
    return skill === "generalist" ? w : { ...w, skill };
  });
  return { workers, built };
}

/**
 * Trains (or reuses) one small worker per skill; returns the pool's worker options. Missing workers train in child
 * processes (bench/conductor/pool-job.ts, one engine thread each), `parallel` at a time: the workers are independent,
 * so on 2 cores the pool takes half the wall time of training them in turn.
 */
export async function buildSkillPool(
  ROOT: string,
  OUT: string,
  S: PoolSizes,
  parallel = Math.min(2, cpus().length),
): Promise<WorkerOptions[]> {
  const { settings, dirs } = poolFolders(ROOT, OUT, S);
  const jobs = SKILLS.flatMap((skill, index) => {
    const dir = dirs[index]!;
    if (existsSync(join(dir, "config.json"))) return [];
    const job: PoolJob = { skill, index, ...settings, dir, result: `${dir}.json` };
    mkdirSync(dirname(dir), { recursive: true });
    return [() => runChildJob<{ seconds: number }>(JOB, job, job.result, `worker ${skill}`)];
  });
  await runPool(jobs, parallel);
  return skillPool(ROOT, OUT, S).workers;
}

/** What the pool can do: each skill worker's exact match on fresh pairs of its skill, and the gold plans' accuracy. */
export interface PoolCheck {
  exact: Partial<Record<SkillName, number>>;
  goldPlans: number;
}

/**
 * Greedy exact match of each skill worker on `n` fresh pairs of its own skill (a stream the training pairs did not
 * use), and the accuracy of the gold plans of `examples` executed by the pool.
 */
export async function checkPool(
  workers: WorkerOptions[],
  task: Task,
  examples: Example[],
  n: number,
): Promise<PoolCheck> {
  const exact: PoolCheck["exact"] = {};
  for (const w of workers) {
    const skill = (w as { skill?: SkillName }).skill;
    if (!skill || w.source.type !== "checkpoint") continue;
    const { model, tokenizer } = loadModel(w.source.path);
    const pairs = skillPairs(skill, n, new Rng(9_000));
    const outs = sample(
      model,
      tokenizer,
      pairs.map((p) => promptIds(tokenizer, p.prompt)), // bos first, as in SFT and the executor
      { maxNewTokens: w.maxTokens, temperature: 0, rng: new Rng(1) },
    );
    exact[skill] = pairs.filter((p, i) => outs[i]!.text.trim() === p.completion.trim()).length / pairs.length;
  }
  let ok = 0;
  for (const e of examples) if ((await task.score(e, e.goldCompletion)).terms[task.correctTerm] === 1) ok++;
  return { exact, goldPlans: ok / examples.length };
}

/** Each worker given the whole question as a one-step plan: the best worker's accuracy, and under the cap. */
export async function bestSingleWorker(task: Task, examples: Example[], workers: number) {
  let best = { acc: 0, cap: 0, worker: -1 };
  for (let w = 0; w < workers; w++) {
    let acc = 0;
    let cap = 0;
    for (const ex of examples) {
      const q = ex.prompt.split("Question: ")[1]!.split("\n")[0]!;
      const res = await task.score(ex, planText({ modelIds: [w], subtasks: [q], accessList: [[]] }));
      const chain = res.info?.chain as { workerTokens: number } | undefined;
      if (res.terms[task.correctTerm] === 1) {
        acc++;
        if ((chain?.workerTokens ?? 0) <= CAP) cap++;
      }
    }
    if (acc / examples.length > best.acc || best.worker < 0)
      best = { acc: acc / examples.length, cap: cap / examples.length, worker: w };
  }
  return best;
}
