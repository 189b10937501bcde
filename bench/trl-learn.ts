/**
 * `npm run bench:trl:learn`: learning parity with TRL. One SFT start that solves part of a task is trained for the
 * same steps by TRL's GRPOTrainer (bench/peers/trl_learn.py, CPU) and by rlvr, under the same settings: the TRL
 * options below and the rlvr settings `fromTrlGrpo` maps them to (docs/algorithms.md, "TRL and verl option
 * mapping"), the same G, prompts per step, learning rate, β, temperature and completion budget, the same train
 * prompts, and the same reward (the TRL side calls rlvr's scorer, bench/trl-score-worker.ts).
 *
 * Both sides save the policy every `every` steps; each saved policy is evaluated here by one evaluator: greedy
 * pass@1 on the same held-out questions (the `final` half of the task's test split), scored by the task's rule.
 * Per seed (BENCH_SEED_LIST, default 100,101,102) it prints both held-out curves and each side's gain per step
 * (least-squares slope), then PASS when rlvr gains at least as much per step as TRL within the seed spread
 * (bench/trl-learn-gate.ts). BENCH_TRL_SMOKE=1 runs a tiny version (the figures mean nothing).
 *
 * The start: a 4-layer Llama with the parity fixture's BPE tokenizer, SFT'd by rlvr's trainSft on the task's gold
 * completions in chunks until its greedy pass@1 on the `tune` half reaches `sft.targetPass` (or `sft.maxSteps`),
 * written with saveModel (a checkpoint transformers loads), and cached under runs/trl-learn-start/<key>, the key
 * hashing the settings and the source that makes the start (bench/harness/source-hash.ts).
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Rng } from "../src/util/index.js";
import type { TrlGrpoOptions } from "../src/algorithms/trl-options.js";
import { loadModel, saveModel } from "../src/models/checkpoint.js";
import { parseTransformerConfig } from "../src/models/config.js";
import { Transformer } from "../src/models/transformer.js";
import type { Tokenizer } from "../src/models/tokenizer.js";
import { getTask } from "../src/tasks/index.js";
import type { Example, Task } from "../src/tasks/types.js";
import { evaluate } from "../src/trainer/evaluate.js";
import { resolveConfig } from "../src/trainer/recipe.js";
import { jsonlReporter } from "../src/trainer/reporters.js";
import { RunDir } from "../src/trainer/run-dir.js";
import { trainSft } from "../src/trainer/sft.js";
import { train } from "../src/trainer/train.js";
import { benchLine, heldOutExamples, seedsFromEnv, sourceHash, SFT_START_SOURCES } from "./harness/index.js";
import { formatCurve, learningParity, slopePerStep, totalGain, type CurvePoint } from "./trl-learn-gate.js";
import { FIXTURE, haveTrl, jsonLines, PY, ROOT, rlvrSettingsFor, runPython, TSX } from "./trl-shared.js";

const SMOKE = process.env.BENCH_TRL_SMOKE === "1";
const BENCH = "trl_learn";
const PEER = "trl GRPOTrainer (CPU)";

/** The task, the start and the RL run of both sides. */
const FULL = {
  task: { name: "addition", options: { minDigits: 1, maxDigits: 2 }, trainExamples: 4000, evalExamples: 100 },
  model: { dModel: 128, nLayers: 4, nHeads: 4, nKvHeads: 2, dFf: 384, maxSeqLen: 64 },
  sft: { chunk: 100, maxSteps: 3000, batchSize: 32, lr: 2e-3, targetPass: 0.2, tuneExamples: 50 },
  rl: { steps: 80, every: 10, G: 8, Q: 4, lr: 3e-4, beta: 0.04, maxNewTokens: 14, temperature: 1 },
};
type Settings = typeof FULL;
const S: Settings = SMOKE
  ? {
      ...FULL,
      task: { ...FULL.task, evalExamples: 20 },
      sft: { ...FULL.sft, chunk: 20, maxSteps: 40, tuneExamples: 10 },
      rl: { ...FULL.rl, steps: 4, every: 2 },
    }
  : FULL;

/** GRPOConfig fields by TRL's names; bench:trl uses the same ones (plain k3 KL, clip unused on-policy). */
const TRL_OPTIONS: TrlGrpoOptions = {
  loss_type: "grpo",
  scale_rewards: "group",
  importance_sampling_level: "token",
  beta: S.rl.beta,
  use_bias_correction_kl: false,
  epsilon: 0.2,
  num_iterations: 1,
  max_completion_length: S.rl.maxNewTokens,
};

/** The SFT start (cached): its directory, SFT steps and greedy pass@1 on the tune half. */
async function sftStart(task: Task): Promise<{ dir: string; steps: number; tunePass: number }> {
  const key = createHash("sha256")
    .update(JSON.stringify({ task: S.task, model: S.model, sft: S.sft }))
    .update(sourceHash(ROOT, [...SFT_START_SOURCES, "bench/trl-learn.ts"]))
    .digest("hex")
    .slice(0, 16);
  const dir = join(ROOT, "runs", "trl-learn-start", key);
  const record = join(dir, "start.json");
  if (existsSync(record)) {
    return { dir, ...(JSON.parse(readFileSync(record, "utf8")) as { steps: number; tunePass: number }) };
  }
  const { tokenizer } = loadModel(FIXTURE);
  const config = parseTransformerConfig({
    arch: "llama",
    vocabSize: 300,
    tieEmbeddings: false,
    normEps: 1e-6,
    ...S.model,
  });
  const model = new Transformer(config, new Rng(0).split("init"));
  const pairs = task
    .generate("train", S.task.trainExamples, 0)
    .map((e) => ({ prompt: e.prompt, completion: e.goldCompletion }));
  const tune = heldOutExamples(task, "tune", S.sft.tuneExamples);
  let steps = 0;
  let tunePass = 0;
  while (steps < S.sft.maxSteps && tunePass < S.sft.targetPass) {
    // A fresh AdamW per chunk at a constant lr that follows a cosine from lr to lr / 10 over maxSteps, chunk by
    // chunk, so stopping at any chunk leaves no schedule half-done.
    const lr = S.sft.lr * (0.1 + 0.45 * (1 + Math.cos((Math.PI * steps) / S.sft.maxSteps)));
    trainSft(model, tokenizer, pairs, {
      steps: S.sft.chunk,
      batchSize: S.sft.batchSize,
      lr,
      warmupSteps: 0,
      minLrFrac: 1,
      rng: new Rng(0).split(`sft-${steps}`),
    });
    steps += S.sft.chunk;
    tunePass = await greedyPass(model, tokenizer, task, tune);
    console.log(`  SFT start: ${steps} steps, greedy pass@1 on the tune half ${tunePass.toFixed(3)}`);
  }
  mkdirSync(dir, { recursive: true });
  saveModel(dir, model, tokenizer);
  writeFileSync(record, JSON.stringify({ steps, tunePass, settings: S }));
  return { dir, steps, tunePass };
}

/** Greedy held-out pass@1 of a model, scored by the task (the one evaluation both sides get). */
async function greedyPass(
  model: Transformer,
  tokenizer: Tokenizer,
  task: Task,
  examples: readonly Example[],
): Promise<number> {
  const opts = { temperature: 0, k: [1], maxNewTokens: S.rl.maxNewTokens, seed: 0 };
  return (await evaluate(model, tokenizer, task, examples, opts)).metrics[`eval/${task.name}/pass@1`]!;
}

/** The held-out curve of saved policies: step 0 is the start, then the folder `dirOf(step)` every `every` steps. */
async function curveOf(
  task: Task,
  examples: readonly Example[],
  startPass: number,
  dirOf: (step: number) => string,
): Promise<CurvePoint[]> {
  const curve: CurvePoint[] = [{ step: 0, pass: startPass }];
  for (let step = S.rl.every; step <= S.rl.steps; step += S.rl.every) {
    const { model, tokenizer } = loadModel(dirOf(step));
    curve.push({ step, pass: await greedyPass(model, tokenizer, task, examples) });
  }
  return curve;
}

/** TRL's run from the start: the per-step training reward and mean completion length, and its checkpoints' folder. */
async function runTrl(seed: number, start: string, work: string, prompts: readonly string[]) {
  const out = join(work, `trl-${seed}`);
  const settings = {
    model_dir: start,
    out_dir: out,
    seed,
    steps: S.rl.steps,
    save_every: S.rl.every,
    lr: S.rl.lr,
    G: S.rl.G,
    prompts_per_step: S.rl.Q,
    temperature: S.rl.temperature,
    threads: 2,
    trl_options: TRL_OPTIONS,
    prompts,
    task: S.task.name,
    task_options: S.task.options,
    train_examples: S.task.trainExamples,
    tsx: TSX,
    score_worker: join(ROOT, "bench", "trl-score-worker.ts"),
  };
  const path = join(work, `trl-${seed}.json`);
  writeFileSync(path, JSON.stringify(settings));
  const steps = jsonLines(await runPython(join(ROOT, "bench", "peers", "trl_learn.py"), path), "step");
  return { out, reward: steps.map((l) => l.reward!), length: steps.map((l) => l.length!) };
}

/** rlvr's run from the start under the mapped settings: training reward and length per step, checkpoints' folder. */
async function runRlvr(seed: number, start: string, work: string) {
  const mapped = rlvrSettingsFor(TRL_OPTIONS);
  const config = resolveConfig({
    name: `rlvr-${seed}`,
    outDir: work,
    seed,
    preset: "grpo",
    model: { type: "checkpoint", path: start },
    task: { name: S.task.name, options: S.task.options, trainExamples: S.task.trainExamples, testExamples: 8 },
    algorithm: mapped.algorithm, // fromTrlGrpo(TRL_OPTIONS), field by field
    sampler: { type: "builtin", temperature: S.rl.temperature },
    train: {
      steps: S.rl.steps,
      promptsPerStep: S.rl.Q,
      groupSize: S.rl.G,
      maxCompletionTokens: S.rl.maxNewTokens,
      lr: S.rl.lr,
      microBatchSize: S.rl.G * S.rl.Q,
      maxGradNorm: 1,
      innerIterations: mapped.innerIterations,
    },
    eval: { every: 0, atStart: false, examples: 8 },
    checkpoint: { every: S.rl.every, keepBest: false, keepLast: Math.ceil(S.rl.steps / S.rl.every) + 1 },
    log: { sampleGroups: 0, progress: false },
  });
  const run = new RunDir(join(work, `rlvr-${seed}`));
  const res = await train(config, { reporters: [jsonlReporter(run)], resume: false });
  const metrics = run.metrics();
  return {
    out: join(res.runDir, "checkpoints"),
    reward: metrics.map((x) => x["reward/mean"]!),
    length: metrics.map((x) => x["length/mean"]!),
  };
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

async function main(): Promise<void> {
  if (!haveTrl()) {
    console.log(
      `bench:trl:learn skipped: no Python environment with trl at ${PY} ` +
        "(create .venv with torch, transformers, trl)",
    );
    console.log(benchLine(BENCH, "trl_learn.skipped", 1, "bool"));
    return;
  }
  const seeds = seedsFromEnv(process.env.BENCH_SEED_LIST, SMOKE ? [100] : [100, 101, 102]);
  const task = getTask(S.task.name, S.task.options);
  const start = await sftStart(task);
  const heldOut = heldOutExamples(task, "final", S.task.evalExamples);
  const startModel = loadModel(start.dir);
  const startPass = await greedyPass(startModel.model, startModel.tokenizer, task, heldOut);
  console.log(
    `start: ${start.steps} SFT steps; greedy pass@1 ${startPass.toFixed(3)} on ${heldOut.length} held-out ` +
      "questions (final half)",
  );
  console.log(benchLine(BENCH, "trl_learn.start_pass@1", startPass, "pass@1"));
  if (start.tunePass < S.sft.targetPass) {
    console.log(
      `warning: the start stopped at sft.maxSteps ${S.sft.maxSteps} with tune pass@1 ` +
        `${start.tunePass.toFixed(3)}, below the target ${S.sft.targetPass}${SMOKE ? " (expected in smoke mode)" : ""}`,
    );
  }
  const prompts = task.generate("train", S.task.trainExamples, 0).map((e) => e.prompt);
  const work = mkdtempSync(join(tmpdir(), "rlvr-bench-trl-learn-"));
  const rows: { seed: number; rlvr: CurvePoint[]; trl: CurvePoint[] }[] = [];
  try {
    for (const seed of seeds) {
      const trl = await runTrl(seed, start.dir, work, prompts);
      const ours = await runRlvr(seed, start.dir, work);
      const trlCurve = await curveOf(task, heldOut, startPass, (s) => join(trl.out, `step-${s}`));
      const rlvrCurve = await curveOf(task, heldOut, startPass, (s) => join(ours.out, `step-${s}`));
      rows.push({ seed, rlvr: rlvrCurve, trl: trlCurve });
      const [r, t] = [slopePerStep(rlvrCurve), slopePerStep(trlCurve)];
      const line = JSON.parse(benchLine(BENCH, "trl_learn.gain_per_step", r, "pass@1/step", { name: PEER, value: t }));
      console.log(JSON.stringify({ ...line, seed, curve: rlvrCurve, peerCurve: trlCurve }));
      console.log(
        `seed ${seed}: held-out greedy pass@1  rlvr ${formatCurve(rlvrCurve)}  |  ` + `TRL ${formatCurve(trlCurve)}`,
      );
      console.log(
        `  gain/step rlvr ${r.toFixed(5)} TRL ${t.toFixed(5)}; ` +
          `total gain rlvr ${totalGain(rlvrCurve).toFixed(3)} TRL ${totalGain(trlCurve).toFixed(3)}; ` +
          `train reward mean rlvr ${mean(ours.reward).toFixed(3)} ` +
          `TRL ${mean(trl.reward).toFixed(3)}; completion length mean rlvr ${mean(ours.length).toFixed(2)} ` +
          `TRL ${mean(trl.length).toFixed(2)} tokens`,
      );
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const v = learningParity(
    rows.map((x) => slopePerStep(x.rlvr)),
    rows.map((x) => slopePerStep(x.trl)),
  );
  const peer = { name: PEER, value: v.trl.mean };
  console.log(benchLine(BENCH, "trl_learn.mean_gain_per_step", v.rlvr.mean, "pass@1/step", peer));
  console.log(benchLine(BENCH, "trl_learn.pass", v.pass ? 1 : 0, "bool"));
  console.log(
    `${v.verdict}: rlvr gains ${v.rlvr.mean.toFixed(5)} ± ${v.rlvr.std.toFixed(5)} pass@1/step, TRL ` +
      `${v.trl.mean.toFixed(5)} ± ${v.trl.std.toFixed(5)} over seeds ${seeds.join(",")}; ` +
      `margin ${v.margin.toFixed(5)}, spread ${v.spread.toFixed(5)} (PASS needs margin >= -spread and TRL's mean > 0)` +
      (SMOKE ? " [smoke: figures mean nothing]" : ""),
  );
  console.log(`settings: ${JSON.stringify(S.rl)}; TRL options ${JSON.stringify(TRL_OPTIONS)}`);
}

await main();
