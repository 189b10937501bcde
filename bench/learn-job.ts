/**
 * One job of `npm run bench:learn`, run in its own process by bench/learn.ts (so jobs use every core):
 *
 * - `sft`: trains the SFT start of (task, seed) on the task's gold completions, saves it, and evaluates it;
 * - `rl`: GRPO from that start with the task's verifiable rewards, then evaluates the final policy;
 * - `control`: the same run, except that inside each group the verifier's outputs are permuted among the group's
 *   completions (bench/harness/controls.ts), then evaluates the final policy;
 * - `sftMore`: continues SFT from the start for as long as the RL run of the same seed trained (wall clock), at the
 *   learning rate where the start's schedule ended, then evaluates it: the compute-matched alternative to RL.
 *
 * Every evaluation is on the same held-out questions (the `final` half unless BENCH_SPLIT=tune) at every decoding
 * of bench/harness/decoding.ts: greedy, and sampled pass@1 at T 0.3, 0.6 and 1 (mean correctness of n samples
 * per question, the unbiased estimator). The result goes to `<dir>/<kind>.json`.
 * Usage: `tsx bench/learn-job.ts '<JobSpec as JSON>'`.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Rng } from "../src/util/index.js";
import { DECODINGS, heldOutExamples, withinGroupControl } from "./harness/index.js";
import { getTask } from "../src/tasks/index.js";
import { resolveConfig } from "../src/trainer/recipe.js";
import { train } from "../src/trainer/train.js";
import { jsonlReporter } from "../src/trainer/reporters.js";
import { RunDir } from "../src/trainer/run-dir.js";
import { buildModel } from "../src/trainer/model-setup.js";
import { sftWarmStart } from "../src/trainer/warm-start.js";
import { loadModel, saveModel } from "../src/models/checkpoint.js";
import { evaluate } from "../src/trainer/evaluate.js";
import { trainSft } from "../src/trainer/sft.js";
import { MODEL, TASKS, type JobResult, type JobSpec } from "./learn-settings.js";

/** The recipe of a job (the SFT job uses only its task, seed and SFT fields). */
export function jobRecipe(spec: JobSpec, start: string) {
  const s = TASKS[spec.task]!;
  return resolveConfig({
    name: spec.kind,
    outDir: spec.dir,
    seed: spec.seed,
    preset: "grpo",
    model: { type: "checkpoint", path: start },
    task: { name: spec.task, options: s.options, trainExamples: s.trainExamples, testExamples: s.evalExamples },
    algorithm: { kl: { beta: s.rl.beta }, loss: { afterFirstError: s.rl.afterFirstError ?? "train" } },
    sampler: { type: "builtin", temperature: s.temperature },
    train: {
      steps: s.rl.steps,
      promptsPerStep: s.rl.promptsPerStep,
      groupSize: s.rl.groupSize,
      maxCompletionTokens: s.maxTokens,
      lr: s.rl.lr,
      schedule: { type: "linearWarmup", warmupSteps: s.rl.warmupSteps },
      microBatchSize: 64,
    },
    eval: { every: 0, atStart: false, examples: s.evalExamples, temperature: s.temperature, k: [1, s.evalSamples] },
    checkpoint: { every: 0, keepBest: false },
    sft: { enabled: false, steps: s.sft.steps, batchSize: s.sft.batchSize, lr: s.sft.lr },
    log: { sampleGroups: 1, progress: false },
  });
}

/** Held-out pass@1 of a saved model at every decoding, and the share of T 1 samples that show working. */
async function evaluateModel(
  spec: JobSpec,
  modelDir: string,
): Promise<{ pass: Record<string, number>; shown: number }> {
  const s = TASKS[spec.task]!;
  const { model, tokenizer } = loadModel(modelDir);
  const task = getTask(spec.task, s.options);
  const testSet = heldOutExamples(task, spec.split, s.evalExamples);
  const key = `eval/${spec.task}/pass@1`;
  const pass: Record<string, number> = {};
  let shown = 0;
  for (const d of DECODINGS) {
    const k = d.temperature === 0 ? [1] : [1, s.evalSamples];
    const res = await evaluate(model, tokenizer, task, testSet, {
      maxNewTokens: s.maxTokens,
      seed: spec.seed,
      temperature: d.temperature,
      k,
    });
    pass[d.label] = res.metrics[key]!;
    if (d.temperature === 1) {
      // The share of sampled completions that write anything (working) before their box.
      const texts = res.groups.flatMap((g) => g.rollouts.map((r) => r.text.trim()));
      shown = texts.filter((t) => !t.startsWith("\\boxed")).length / Math.max(1, texts.length);
    }
  }
  return { pass, shown };
}

/** CPU seconds (user + system) this process has used. */
function cpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** Continues SFT from the start for `budgetCpuSeconds` of training, at the start's final (floor) learning rate. */
async function sftMore(
  spec: JobSpec,
): Promise<{ modelDir: string; steps: number; seconds: number; cpuSeconds: number }> {
  const s = TASKS[spec.task]!;
  const modelDir = join(spec.dir, "sft-more");
  const { model, tokenizer } = loadModel(spec.start!);
  const train = getTask(spec.task, s.options).generate("train", s.trainExamples, 0);
  const pairs = train.map((e) => ({ prompt: e.prompt, completion: e.goldCompletion }));
  const t0 = performance.now();
  const cpu0 = cpuSeconds();
  const budget = spec.budgetCpuSeconds!;
  const lr = s.sft.lr * 0.1; // trainSft's default cosine floor: where the start's schedule ended
  const history = trainSft(model, tokenizer, pairs, {
    steps: 1e9,
    batchSize: s.sft.batchSize,
    lr,
    warmupSteps: 0,
    minLrFrac: 1,
    rng: new Rng(spec.seed).split("sft-more"),
    until: () => cpuSeconds() - cpu0 >= budget,
  });
  const seconds = (performance.now() - t0) / 1000;
  const used = cpuSeconds() - cpu0;
  saveModel(modelDir, model, tokenizer);
  return { modelDir, steps: history.length, seconds, cpuSeconds: used };
}

async function runJob(spec: JobSpec): Promise<JobResult> {
  const s = TASKS[spec.task]!;
  const t0 = Date.now();
  const elapsed = () => (Date.now() - t0) / 1000;
  if (spec.kind === "sft") {
    const modelDir = join(spec.dir, "model");
    let trainSeconds = 0;
    if (!existsSync(join(modelDir, "model.safetensors"))) {
      const policy = buildModel({ ...MODEL, type: "new" }, spec.seed);
      const config = jobRecipe(spec, modelDir);
      const trainSet = getTask(spec.task, s.options).generate("train", s.trainExamples, 0);
      const t1 = performance.now();
      await sftWarmStart(policy, trainSet, config);
      trainSeconds = (performance.now() - t1) / 1000;
      saveModel(modelDir, policy.model, policy.tokenizer);
    }
    return { ...spec, ...(await evaluateModel(spec, modelDir)), trainSeconds, seconds: elapsed() };
  }
  if (spec.kind === "sftMore") {
    const more = await sftMore(spec);
    const out = await evaluateModel(spec, more.modelDir);
    return {
      ...spec,
      ...out,
      trainSeconds: more.seconds,
      trainCpuSeconds: more.cpuSeconds,
      sftSteps: more.steps,
      seconds: elapsed(),
    };
  }
  const config = jobRecipe(spec, spec.start!);
  const run = new RunDir(join(spec.dir, spec.kind));
  const t1 = performance.now();
  const cpu1 = cpuSeconds();
  const res = await train(config, {
    resume: false,
    overwrite: true, // the bench owns its work folder: a run with changed RL settings replaces the last one
    reporters: [jsonlReporter(run)],
    ...(spec.kind === "control" ? { transformGroups: withinGroupControl(spec.seed) } : {}),
  });
  const trainSeconds = (performance.now() - t1) / 1000;
  const trainCpuSeconds = cpuSeconds() - cpu1;
  const rewards = run.metrics().map((m) => m["reward/correct/mean"] ?? NaN);
  const out = await evaluateModel(spec, join(res.runDir, "checkpoints", `step-${res.step}`));
  return { ...spec, ...out, trainCorrect: rewards, trainSeconds, trainCpuSeconds, seconds: elapsed() };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const spec = JSON.parse(process.argv[2]!) as JobSpec;
  const result = await runJob(spec);
  writeFileSync(join(spec.dir, `${spec.kind}.json`), JSON.stringify(result));
}
