/**
 * `npm run bench:learn`: does RL make the model better, and is it the reward that does it?
 *
 * On countdown and on arithmetic, over 3 seeds: an SFT start (a small char-level transformer trained briefly on
 * the task's gold completions), then GRPO from it (Q 8, G 16, lr 3e-5, β 0.04 KL to the start, T 1). The target:
 * held-out pass@1 after RL at least the start + 10 points. pass@1 is the unbiased estimate at the training
 * temperature (mean correctness of n = 4 samples per question, 200 questions); greedy pass@1 of the same start and
 * final checkpoints is reported alongside. A control run is identical except that each step's rewards are shuffled
 * across its completions (same reward distribution, no link to the completion), and must not improve. Prints the
 * mean and spread over seeds, one JSON line per metric ({"bench","metric","value","unit"}), and a readable summary;
 * each run's metrics.jsonl is written under the work folder.
 *
 * Environment: BENCH_LEARN_TASKS (comma list), BENCH_LEARN_SEEDS (count), BENCH_LEARN_STEPS (RL steps), BENCH_LEARN_LR,
 * BENCH_LEARN_BETA (KL β), BENCH_LEARN_G (group size), BENCH_LEARN_T (sampling and evaluation temperature),
 * BENCH_LEARN_OUT (work folder, default runs/bench-learn).
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { Rng } from "../src/util/index.js";
import { getTask } from "../src/tasks/index.js";
import { resolveConfig } from "../src/trainer/recipe.js";
import { train } from "../src/trainer/train.js";
import { consoleReporter, jsonlReporter } from "../src/trainer/reporters.js";
import { RunDir } from "../src/trainer/run-dir.js";
import { buildModel } from "../src/trainer/model-setup.js";
import { sftWarmStart } from "../src/trainer/warm-start.js";
import { saveModel } from "../src/models/checkpoint.js";
import type { RolloutGroup } from "../src/rollout/types.js";
import { evaluate } from "../src/trainer/evaluate.js";

const ROOT = resolve(import.meta.dirname, "..");
const OUT = resolve(process.env.BENCH_LEARN_OUT ?? join(ROOT, "runs", "bench-learn"));
const TASKS = (process.env.BENCH_LEARN_TASKS ?? "countdown,arithmetic").split(",");
const SEEDS = Array.from({ length: Number(process.env.BENCH_LEARN_SEEDS ?? 3) }, (_, i) => i);
const STEPS = Number(process.env.BENCH_LEARN_STEPS ?? 50);
const LR = process.env.BENCH_LEARN_LR ? Number(process.env.BENCH_LEARN_LR) : null;
const TEMPERATURE = Number(process.env.BENCH_LEARN_T ?? 1);
const BETA = Number(process.env.BENCH_LEARN_BETA ?? 0.04);
const GROUP = Number(process.env.BENCH_LEARN_G ?? 16);

/** Per-task settings: the SFT start is deliberately short so that there is room to improve. */
const SETTINGS: Record<string, { options: Record<string, unknown>; sftSteps: number; lr: number; maxTokens: number }> = {
  countdown: { options: {}, sftSteps: 300, lr: 3e-5, maxTokens: 24 },
  arithmetic: { options: {}, sftSteps: 300, lr: 3e-5, maxTokens: 20 },
};
const MODEL = { type: "new" as const, arch: "gpt2" as const, dModel: 128, nLayers: 4, nHeads: 4, maxSeqLen: 96, tokenizer: "char" as const };

function line(metric: string, value: number, unit: string): void {
  console.log(JSON.stringify({ bench: "learn", metric, value: +value.toFixed(4), unit }));
}

/** The SFT start checkpoint of (task, seed), made once and reused. */
async function sftStart(task: string, seed: number): Promise<string> {
  const dir = join(OUT, `sft-${task}-${seed}`);
  if (existsSync(join(dir, "model.safetensors"))) return dir;
  const s = SETTINGS[task]!;
  const config = recipe(task, seed, dir, "sft");
  const policy = buildModel(MODEL, seed);
  const trainSet = getTask(task, s.options).generate("train", config.task.trainExamples, 0);
  const t0 = Date.now();
  console.error(`${task} seed ${seed}: SFT start, ${s.sftSteps} steps`);
  await sftWarmStart(policy, trainSet, { ...config, sft: { enabled: true, steps: s.sftSteps, batchSize: 32, lr: 1e-3 } });
  saveModel(dir, policy.model, policy.tokenizer);
  console.error(`${task} seed ${seed}: SFT done in ${((Date.now() - t0) / 1000).toFixed(0)}s`);
  return dir;
}

function recipe(task: string, seed: number, start: string, name: string) {
  const s = SETTINGS[task]!;
  return resolveConfig({
    name, outDir: OUT, seed, preset: "grpo",
    model: { type: "checkpoint", path: start },
    task: { name: task, options: s.options, trainExamples: 2000, testExamples: 200 },
    algorithm: { kl: { beta: BETA } },
    sampler: { type: "builtin", temperature: TEMPERATURE },
    train: { steps: STEPS, promptsPerStep: 8, groupSize: GROUP, maxCompletionTokens: s.maxTokens, lr: LR ?? s.lr, microBatchSize: 64 },
    eval: { every: 0, examples: 200, temperature: TEMPERATURE, k: [1, 4] },
    checkpoint: { every: 0, keepBest: false },
    log: { sampleGroups: 1, progress: false },
  });
}

/** Shuffles rewards (and their terms) across all completions of the step: the control. */
function shuffleRewards(seed: number) {
  return (groups: RolloutGroup[], step: number) => {
    const all = groups.flatMap((g) => g.rollouts);
    const perm = new Rng(seed).split("control").split(step).shuffle(all.map((_, i) => i));
    const values = perm.map((i) => ({ reward: all[i]!.reward, terms: all[i]!.terms }));
    all.forEach((r, i) => Object.assign(r, values[i]));
  };
}

/** Greedy pass@1 on the same held-out examples of a saved model (reported alongside the sampled pass@1). */
async function greedyPass1(task: string, seed: number, dir: string): Promise<number> {
  const config = recipe(task, seed, dir, "greedy");
  const { model, tokenizer } = buildModel({ type: "checkpoint", path: dir }, seed);
  const t = getTask(task, SETTINGS[task]!.options);
  const testSet = t.generate("test", config.task.testExamples, config.task.seed).slice(0, config.eval.examples);
  const res = await evaluate(model, tokenizer, t, testSet, { temperature: 0, k: [1], maxNewTokens: config.train.maxCompletionTokens, seed });
  return res.metrics[`eval/${task}/pass@1`]!;
}

const stats = (xs: number[]) => {
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  return { mean: m, std: Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / Math.max(1, xs.length - 1)) };
};

async function main(): Promise<void> {
  const summary: string[] = [];
  for (const task of TASKS) {
    const gains: number[] = [];
    const controls: number[] = [];
    const starts: number[] = [];
    const afters: number[] = [];
    const greedyGains: number[] = [];
    const greedyControls: number[] = [];
    for (const seed of SEEDS) {
      const start = await sftStart(task, seed);
      const key = `eval/${task}/pass@1`;
      const t0 = Date.now();
      const reporters = (name: string) => [consoleReporter(), jsonlReporter(new RunDir(join(OUT, name)))];
      const rl = await train(recipe(task, seed, start, `rl-${task}-${seed}`), { resume: false, reporters: reporters(`rl-${task}-${seed}`) });
      const ctl = await train(recipe(task, seed, start, `control-${task}-${seed}`), { resume: false, reporters: reporters(`control-${task}-${seed}`), transformGroups: shuffleRewards(seed) });
      const last = `checkpoints/step-${STEPS}`;
      const greedy = { start: await greedyPass1(task, seed, start), rl: await greedyPass1(task, seed, join(rl.runDir, last)), ctl: await greedyPass1(task, seed, join(ctl.runDir, last)) };
      greedyGains.push(greedy.rl - greedy.start);
      greedyControls.push(greedy.ctl - greedy.start);
      const before = rl.startEval![key]!;
      starts.push(before);
      afters.push(rl.finalEval![key]!);
      gains.push(rl.finalEval![key]! - before);
      controls.push(ctl.finalEval![key]! - ctl.startEval![key]!);
      console.error(`${task} seed ${seed}: pass@1 ${before.toFixed(3)} -> ${rl.finalEval![key]!.toFixed(3)} (RL), ${ctl.finalEval![key]!.toFixed(3)} (control); greedy ${greedy.start.toFixed(3)} -> ${greedy.rl.toFixed(3)} (RL), ${greedy.ctl.toFixed(3)} (control) in ${((Date.now() - t0) / 1000).toFixed(0)}s`);
    }
    const g = stats(gains);
    const c = stats(controls);
    line(`learn.${task}.pass1_start`, stats(starts).mean, "pass@1");
    line(`learn.${task}.pass1_after`, stats(afters).mean, "pass@1");
    line(`learn.${task}.pass1_gain`, g.mean, "points/100");
    line(`learn.${task}.pass1_gain_std`, g.std, "points/100");
    line(`learn.${task}.pass1_gain_min`, Math.min(...gains), "points/100");
    line(`learn.${task}.control_gain`, c.mean, "points/100");
    line(`learn.${task}.control_gain_std`, c.std, "points/100");
    line(`learn.${task}.greedy_pass1_gain`, stats(greedyGains).mean, "points/100");
    line(`learn.${task}.greedy_control_gain`, stats(greedyControls).mean, "points/100");
    const ok = Math.min(...gains) >= 0.1 && c.mean <= 0.02;
    summary.push(`${task}: gain ${(g.mean * 100).toFixed(1)} ± ${(g.std * 100).toFixed(1)} points over ${SEEDS.length} seeds (min ${(Math.min(...gains) * 100).toFixed(1)}; target >= 10), control ${(c.mean * 100).toFixed(1)} ± ${(c.std * 100).toFixed(1)}: ${ok ? "PASS" : "FAIL"}`);
  }
  for (const s of summary) console.log(s);
}

await main();
