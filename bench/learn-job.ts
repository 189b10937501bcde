/**
 * One job of `npm run bench:learn`, run in its own process by bench/learn.ts (so jobs use every core):
 *
 * - `sft`: trains the SFT start of (task, seed) on the task's gold completions, saves it, and evaluates it;
 * - `rl`: GRPO from that start with the task's verifiable rewards, then evaluates the final policy;
 * - `control`: the same run, except that each step's rewards are shuffled across its completions (same reward
 *   distribution, no link to what was written), then evaluates the final policy.
 *
 * Every evaluation is on the same held-out questions: pass@1 at the sampling temperature (mean correctness of n
 * samples per question, the unbiased estimator) and greedy pass@1. The result goes to `<dir>/<kind>.json`.
 * Usage: `tsx bench/learn-job.ts '<JobSpec as JSON>'`.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Rng } from "../src/util/index.js";
import { getTask } from "../src/tasks/index.js";
import { resolveConfig } from "../src/trainer/recipe.js";
import { train } from "../src/trainer/train.js";
import { jsonlReporter } from "../src/trainer/reporters.js";
import { RunDir } from "../src/trainer/run-dir.js";
import { buildModel } from "../src/trainer/model-setup.js";
import { sftWarmStart } from "../src/trainer/warm-start.js";
import { loadModel, saveModel } from "../src/models/checkpoint.js";
import { evaluate } from "../src/trainer/evaluate.js";
import type { RolloutGroup } from "../src/rollout/types.js";
import { MODEL, TASKS, type JobResult, type JobSpec } from "./learn-settings.js";

/** The recipe of a job (the SFT job uses only its task, seed and SFT fields). */
export function jobRecipe(spec: JobSpec, start: string) {
  const s = TASKS[spec.task]!;
  return resolveConfig({
    name: spec.kind, outDir: spec.dir, seed: spec.seed, preset: "grpo",
    model: { type: "checkpoint", path: start },
    task: { name: spec.task, options: s.options, trainExamples: s.trainExamples, testExamples: s.evalExamples },
    algorithm: { kl: { beta: s.rl.beta }, loss: { afterFirstError: s.rl.afterFirstError ?? "train" } },
    sampler: { type: "builtin", temperature: s.temperature },
    train: {
      steps: s.rl.steps, promptsPerStep: s.rl.promptsPerStep, groupSize: s.rl.groupSize, maxCompletionTokens: s.maxTokens,
      lr: s.rl.lr, schedule: { type: "linearWarmup", warmupSteps: s.rl.warmupSteps }, microBatchSize: 64,
    },
    eval: { every: 0, atStart: false, examples: s.evalExamples, temperature: s.temperature, k: [1, s.evalSamples] },
    checkpoint: { every: 0, keepBest: false },
    sft: { enabled: false, steps: s.sft.steps, batchSize: s.sft.batchSize, lr: s.sft.lr },
    log: { sampleGroups: 1, progress: false },
  });
}

/** Held-out pass@1 of a saved model: sampled (n per question at the task's temperature) and greedy. */
async function evaluateModel(spec: JobSpec, modelDir: string): Promise<{ sampled: number; greedy: number; shown: number }> {
  const s = TASKS[spec.task]!;
  const { model, tokenizer } = loadModel(modelDir);
  const task = getTask(spec.task, s.options);
  const testSet = task.generate("test", s.evalExamples, 0);
  const key = `eval/${spec.task}/pass@1`;
  const common = { maxNewTokens: s.maxTokens, seed: spec.seed };
  const sampled = await evaluate(model, tokenizer, task, testSet, { ...common, temperature: s.temperature, k: [1, s.evalSamples] });
  const greedy = await evaluate(model, tokenizer, task, testSet, { ...common, temperature: 0, k: [1] });
  // The share of sampled completions that write anything (working) before their box.
  const texts = sampled.groups.flatMap((g) => g.rollouts.map((r) => r.text.trim()));
  const shown = texts.filter((t) => !t.startsWith("\\boxed")).length / Math.max(1, texts.length);
  return { sampled: sampled.metrics[key]!, greedy: greedy.metrics[key]!, shown };
}

/** Shuffles rewards (and their terms) across all completions of the step: the control. */
function shuffleRewards(seed: number) {
  return (groups: RolloutGroup[], step: number) => {
    const all = groups.flatMap((g) => g.rollouts);
    const perm = new Rng(seed).split("control").split(step).shuffle(all.map((_, i) => i));
    const values = perm.map((i) => ({ reward: all[i]!.reward, terms: { ...all[i]!.terms } }));
    all.forEach((r, i) => Object.assign(r, values[i]));
  };
}

async function runJob(spec: JobSpec): Promise<JobResult> {
  const s = TASKS[spec.task]!;
  const t0 = Date.now();
  if (spec.kind === "sft") {
    const modelDir = join(spec.dir, "model");
    if (!existsSync(join(modelDir, "model.safetensors"))) {
      const policy = buildModel({ ...MODEL, type: "new" }, spec.seed);
      const config = jobRecipe(spec, modelDir);
      const trainSet = getTask(spec.task, s.options).generate("train", s.trainExamples, 0);
      await sftWarmStart(policy, trainSet, config);
      saveModel(modelDir, policy.model, policy.tokenizer);
    }
    return { ...spec, ...(await evaluateModel(spec, modelDir)), seconds: (Date.now() - t0) / 1000 };
  }
  const config = jobRecipe(spec, spec.start!);
  const run = new RunDir(join(spec.dir, spec.kind));
  const res = await train(config, {
    resume: false,
    reporters: [jsonlReporter(run)],
    ...(spec.kind === "control" ? { transformGroups: shuffleRewards(spec.seed) } : {}),
  });
  const rewards = run.metrics().map((m) => m["reward/correct/mean"] ?? NaN);
  const out = await evaluateModel(spec, join(res.runDir, "checkpoints", `step-${res.step}`));
  return { ...spec, ...out, trainCorrect: rewards, seconds: (Date.now() - t0) / 1000 };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const spec = JSON.parse(process.argv[2]!) as JobSpec;
  const result = await runJob(spec);
  writeFileSync(join(spec.dir, `${spec.kind}.json`), JSON.stringify(result));
}
