/**
 * The parts every effect bench's job script repeats: the recipe of an RL arm from a cached start, training the arm
 * (or its within-group shuffled-reward control), training a start once, the start's cache key, running a job script
 * as a child process, and the job script's entry point. The
 * multi-turn benches (bench/sake/job.ts, bench/sima/job.ts) use them.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { resolveConfig } from "../../src/trainer/recipe.js";
import { train } from "../../src/trainer/train.js";
import { jsonlReporter } from "../../src/trainer/reporters.js";
import { RunDir } from "../../src/trainer/run-dir.js";
import { saveModel } from "../../src/models/checkpoint.js";
import type { Transformer } from "../../src/models/transformer.js";
import type { Tokenizer } from "../../src/models/tokenizer.js";
import { runChildJob } from "./child-job.js";
import { withinGroupControl } from "./controls.js";

/** An RL arm's sizes. */
export interface ArmSizes {
  steps: number;
  promptsPerStep: number;
  groupSize: number;
  lr: number;
}

/**
 * The recipe of an RL arm from `<startDir>/model`: the `grpo` preset, the built-in sampler at T 1, no evaluation
 * (the job evaluates the final model itself), and a checkpoint every 50 steps (only the newest kept), from which a
 * killed arm resumes under `trainArm`'s `resume`.
 */
export function armRecipe(arm: {
  kind: string;
  dir: string;
  seed: number;
  startDir: string;
  task: { name: string; options: unknown; trainExamples: number };
  sizes: ArmSizes;
  maxTokens: number;
}) {
  const s = arm.sizes;
  return resolveConfig({
    name: arm.kind,
    outDir: arm.dir,
    seed: arm.seed,
    preset: "grpo",
    model: { type: "checkpoint", path: join(arm.startDir, "model") },
    task: { ...arm.task, testExamples: 8 },
    sampler: { type: "builtin", temperature: 1 },
    train: {
      steps: s.steps,
      promptsPerStep: s.promptsPerStep,
      groupSize: s.groupSize,
      maxCompletionTokens: arm.maxTokens,
      lr: s.lr,
      microBatchSize: 16,
    },
    eval: { every: 0, atStart: false, examples: 8, temperature: 0, k: [1] },
    checkpoint: { every: 50, keepLast: 1, keepBest: false },
    log: { sampleGroups: 1, progress: false },
  });
}

/**
 * Trains an arm (`control`: verifier outputs permuted within each group); returns its final checkpoint folder. With
 * `resume` (the benches' REUSE flag), a folder holding a run of exactly this recipe, the step count included,
 * continues from its newest checkpoint (every random stream is keyed by (seed, step), so the result is the same run);
 * anything else in the folder is deleted and the arm starts over.
 */
export async function trainArm(
  config: ReturnType<typeof armRecipe>,
  control: boolean,
  opts: { resume?: boolean } = {},
): Promise<string> {
  const run = new RunDir(join(config.outDir, config.name));
  const res = await train(config, {
    resume: opts.resume === true && sameRun(run, config),
    overwrite: true,
    reporters: [jsonlReporter(run)],
    warn: () => {},
    ...(control ? { transformGroups: withinGroupControl(config.seed) } : {}),
  });
  return join(res.runDir, "checkpoints", `step-${res.step}`);
}

/** True when `run` was started with exactly `config`: the same recipe and the same step count. */
export function sameRun(run: RunDir, config: ReturnType<typeof resolveConfig>): boolean {
  if (!run.exists() || !run.sameRecipe(config)) return false;
  const saved = run.readConfig() as { train?: { steps?: number } };
  return saved.train?.steps === config.train.steps;
}

/** Makes a start once: runs `make` and saves its model unless `<startDir>/model` holds one; returns that folder. */
export async function cachedStart(
  startDir: string,
  make: () => Promise<{ model: Transformer; tokenizer: Tokenizer }>,
): Promise<string> {
  const modelDir = join(startDir, "model");
  if (!existsSync(join(modelDir, "model.safetensors"))) {
    const { model, tokenizer } = await make();
    saveModel(modelDir, model, tokenizer);
  }
  return modelDir;
}

/** A job script's entry: when run directly, parses the job from argv and writes `<job.dir>/result.json`. */
export async function jobEntry<J extends { dir: string }>(metaUrl: string, run: (job: J) => Promise<unknown>) {
  if (metaUrl !== `file://${process.argv[1]}`) return;
  const job = JSON.parse(process.argv[2]!) as J;
  writeFileSync(join(job.dir, "result.json"), JSON.stringify(await run(job)));
}

/** A cached start's key: the settings it depends on and the source that makes it, hashed (10 hex digits). */
export function startKey(settings: unknown, source: string): string {
  return createHash("sha256").update(JSON.stringify(settings)).update(source).digest("hex").slice(0, 10);
}

/**
 * A job's earlier result, `<job.dir>/result.json`, when it was made by the same job (equal as JSON on `keys`); else
 * null. The benches' REUSE flags use it (`runOrReuse`), so seeds can run in separate sessions and be reported together.
 */
export function reusableResult<J extends { dir: string }>(job: J, keys: readonly (keyof J)[]): J | null {
  const file = join(job.dir, "result.json");
  if (!existsSync(file)) return null;
  const old = JSON.parse(readFileSync(file, "utf8")) as J;
  return keys.every((k) => JSON.stringify(old[k]) === JSON.stringify(job[k])) ? old : null;
}

/** Runs a job script in a child process (its folder and its start's folder made first); resolves to its result. */
export function runArmJob<R>(script: string, job: { dir: string; startDir: string }, label: string): Promise<R> {
  mkdirSync(job.dir, { recursive: true });
  mkdirSync(job.startDir, { recursive: true });
  return runChildJob<R>(script, job, join(job.dir, "result.json"), label);
}

/**
 * Runs a job script unless `reuse.on` (the bench's REUSE flag, named `reuse.flag`) and its folder holds the result of
 * the same job, compared on `reuse.keys` (`reusableResult`); that result is then returned and named on the console.
 */
export function runOrReuse<J extends { dir: string; startDir: string }, R>(
  script: string,
  job: J,
  label: string,
  reuse: { on: boolean; flag: string; keys: readonly (keyof J)[] },
): Promise<R> {
  const done = reuse.on ? reusableResult(job, reuse.keys) : null;
  if (done) {
    console.log(`${label}: reusing ${join(job.dir, "result.json")} (${reuse.flag}=1)`);
    return Promise.resolve(done as unknown as R);
  }
  return runArmJob<R>(script, job, label);
}
