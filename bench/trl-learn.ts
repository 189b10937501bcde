/**
 * `npm run bench:trl:learn`: learning parity with TRL. One SFT start that solves part of a task
 * (bench/trl-learn-start.ts) is trained for the same steps by TRL's GRPOTrainer (bench/peers/trl_learn.py, CPU) and
 * by rlvr, under the same settings (bench/trl-learn-settings.ts): the TRL options below and the rlvr settings
 * `fromTrlGrpo` maps them to (docs/algorithms.md, "TRL and verl option mapping"), the same G, prompts per step,
 * learning rate, β, temperature and completion budget, the same train prompts, and the same reward (the TRL side
 * calls rlvr's scorer, bench/trl-score-worker.ts).
 *
 * Both sides save the policy every `every` steps; each saved policy is evaluated here by one evaluator on the same
 * held-out questions (the `final` half of the task's test split), scored by the task's rule: sampled pass@1 at the
 * training temperature (the mean over `evalSamples` samples per question, the objective both trainers ascend, and
 * the curve the gate reads) and greedy pass@1 (printed beside it). Per seed (BENCH_SEED_LIST, default 103,104,105,
 * seeds no tuning probe used) it prints both sides' curves and gains per step (least-squares slope), then PASS when
 * rlvr gains at least as much per step as TRL within the seed spread (bench/trl-learn-gate.ts). Each seed's result
 * is kept under runs/trl-learn/<key> (the key hashes the settings, the start and the source), so an interrupted run,
 * or one split over sessions, resumes at its first missing seed. BENCH_TRL_SMOKE=1 runs a tiny version (never
 * cached; the figures mean nothing). BENCH_TRL_LEARN_PROBE=1 runs the tuning probe instead (rlvr only, `tune` half).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadModel } from "../src/models/checkpoint.js";
import { getTask } from "../src/tasks/index.js";
import type { Example, Task } from "../src/tasks/types.js";
import { resolveConfig } from "../src/trainer/recipe.js";
import { jsonlReporter } from "../src/trainer/reporters.js";
import { RunDir } from "../src/trainer/run-dir.js";
import { train } from "../src/trainer/train.js";
import { benchLine, heldOutExamples, seedsFromEnv } from "./harness/index.js";
import { formatCurve, learningParity, slopePerStep, totalGain, type CurvePoint } from "./trl-learn-gate.js";
import { heldOutPass, sftStart } from "./trl-learn-start.js";
import { PROBE, resultsKey, S, SMOKE, TRL_OPTIONS } from "./trl-learn-settings.js";
import { haveTrl, jsonLines, PY, ROOT, rlvrSettingsFor, runPython, TSX } from "./trl-shared.js";

const BENCH = "trl_learn";
const PEER = "trl GRPOTrainer (CPU)";

/** A run's held-out curves: sampled pass@1 at the training temperature (the gated one) and greedy pass@1. */
interface Curves {
  sampled: CurvePoint[];
  greedy: CurvePoint[];
}

/** Both held-out curves of a run whose policy at step s is saved in `dirOf(s)` (step 0 is the start). */
async function curvesOf(task: Task, examples: readonly Example[], dirOf: (step: number) => string): Promise<Curves> {
  const curves: Curves = { sampled: [], greedy: [] };
  for (let step = 0; step <= S.rl.steps; step += S.rl.every) {
    const { model, tokenizer } = loadModel(dirOf(step));
    curves.sampled.push({ step, pass: await heldOutPass(model, tokenizer, task, examples, S.rl.temperature) });
    curves.greedy.push({ step, pass: await heldOutPass(model, tokenizer, task, examples) });
  }
  return curves;
}

/** Where a run's policy at `step` is saved: the start at step 0, else `<out>/step-<step>`. */
const stepDirs = (startDir: string, out: string) => (step: number) =>
  step === 0 ? startDir : join(out, `step-${step}`);

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

/** One seed's outcome: both sides' held-out curves and their mean training reward and completion length. */
interface SeedResult {
  seed: number;
  rlvr: Curves;
  trl: Curves;
  rlvrTrain: { reward: number; length: number };
  trlTrain: { reward: number; length: number };
}

/** A seed's result: read from `resultsDir` when there, else both runs, their curves, and the file written. */
async function seedResult(
  seed: number,
  task: Task,
  heldOut: readonly Example[],
  startDir: string,
  prompts: readonly string[],
  resultsDir: string,
): Promise<SeedResult> {
  const file = join(resultsDir, `seed-${seed}.json`);
  if (!SMOKE && existsSync(file)) return JSON.parse(readFileSync(file, "utf8")) as SeedResult;
  const work = mkdtempSync(join(tmpdir(), "rlvr-bench-trl-learn-"));
  try {
    const trl = await runTrl(seed, startDir, work, prompts);
    const ours = await runRlvr(seed, startDir, work);
    const result: SeedResult = {
      seed,
      rlvr: await curvesOf(task, heldOut, stepDirs(startDir, ours.out)),
      trl: await curvesOf(task, heldOut, stepDirs(startDir, trl.out)),
      rlvrTrain: { reward: mean(ours.reward), length: mean(ours.length) },
      trlTrain: { reward: mean(trl.reward), length: mean(trl.length) },
    };
    mkdirSync(resultsDir, { recursive: true });
    writeFileSync(file, JSON.stringify(result));
    return result;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * A tuning probe (BENCH_TRL_LEARN_PROBE=1): rlvr's run only, per seed, evaluated on the `tune` half, so settings are
 * chosen without looking at the `final` questions or at TRL. Nothing is cached and nothing is gated.
 */
async function probe(task: Task, seeds: readonly number[], startDir: string): Promise<void> {
  const tune = heldOutExamples(task, "tune", S.task.evalExamples);
  console.log(`probe: rlvr only, ${tune.length} questions of the tune half; settings ${JSON.stringify(S.rl)}`);
  for (const seed of seeds) {
    const work = mkdtempSync(join(tmpdir(), "rlvr-bench-trl-learn-probe-"));
    try {
      const ours = await runRlvr(seed, startDir, work);
      const curves = await curvesOf(task, tune, stepDirs(startDir, ours.out));
      const [r, rg] = [slopePerStep(curves.sampled), slopePerStep(curves.greedy)];
      console.log(
        JSON.stringify({ ...JSON.parse(benchLine(BENCH, "trl_learn.probe_gain_per_step", r, "pass@1/step")), seed }),
      );
      console.log(
        `probe seed ${seed}: tune pass@1 sampled ${formatCurve(curves.sampled)}; greedy ${formatCurve(curves.greedy)}; ` +
          `gain/step sampled ${r.toFixed(5)} greedy ${rg.toFixed(5)}; train reward mean ${mean(ours.reward).toFixed(3)}`,
      );
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
}

async function main(): Promise<void> {
  if (PROBE) {
    const seeds = seedsFromEnv(process.env.BENCH_SEED_LIST, [0, 1]);
    const task = getTask(S.task.name, S.task.options);
    await probe(task, seeds, (await sftStart(task)).dir);
    return;
  }
  if (!haveTrl()) {
    console.log(
      `bench:trl:learn skipped: no Python environment with trl at ${PY} ` +
        "(create .venv with torch, transformers, trl)",
    );
    console.log(benchLine(BENCH, "trl_learn.skipped", 1, "bool"));
    return;
  }
  const seeds = seedsFromEnv(process.env.BENCH_SEED_LIST, SMOKE ? [100] : [103, 104, 105]);
  const task = getTask(S.task.name, S.task.options);
  const start = await sftStart(task);
  const heldOut = heldOutExamples(task, "final", S.task.evalExamples);
  const startModel = loadModel(start.dir);
  const startSampled = await heldOutPass(startModel.model, startModel.tokenizer, task, heldOut, S.rl.temperature);
  const startGreedy = await heldOutPass(startModel.model, startModel.tokenizer, task, heldOut);
  console.log(
    `start: ${start.steps} SFT steps; on ${heldOut.length} held-out questions (final half) pass@1 ` +
      `${startSampled.toFixed(3)} sampled at T ${S.rl.temperature} (${S.evalSamples} per question), ` +
      `${startGreedy.toFixed(3)} greedy`,
  );
  console.log(benchLine(BENCH, "trl_learn.start_pass@1", startSampled, "pass@1"));
  console.log(benchLine(BENCH, "trl_learn.start_greedy_pass@1", startGreedy, "pass@1"));
  if (start.tunePass < S.sft.targetPass) {
    console.log(
      `warning: the start stopped at sft.maxSteps ${S.sft.maxSteps} with tune pass@1 ` +
        `${start.tunePass.toFixed(3)}, below the target ${S.sft.targetPass}${SMOKE ? " (expected in smoke mode)" : ""}`,
    );
  }
  const prompts = task.generate("train", S.task.trainExamples, 0).map((e) => e.prompt);
  const resultsDir = join(ROOT, "runs", "trl-learn", resultsKey(start.dir));
  console.log(`per-seed results: ${resultsDir} (a seed found there is not run again)`);
  const rows: SeedResult[] = [];
  for (const seed of seeds) {
    const row = await seedResult(seed, task, heldOut, start.dir, prompts, resultsDir);
    rows.push(row);
    const [r, t] = [slopePerStep(row.rlvr.sampled), slopePerStep(row.trl.sampled)];
    const [rg, tg] = [slopePerStep(row.rlvr.greedy), slopePerStep(row.trl.greedy)];
    const line = JSON.parse(benchLine(BENCH, "trl_learn.gain_per_step", r, "pass@1/step", { name: PEER, value: t }));
    console.log(JSON.stringify({ ...line, seed, curve: row.rlvr.sampled, peerCurve: row.trl.sampled }));
    const greedyLine = benchLine(BENCH, "trl_learn.greedy_gain_per_step", rg, "pass@1/step", { name: PEER, value: tg });
    console.log(JSON.stringify({ ...JSON.parse(greedyLine), seed, curve: row.rlvr.greedy, peerCurve: row.trl.greedy }));
    console.log(
      `seed ${seed}: held-out pass@1 sampled  rlvr ${formatCurve(row.rlvr.sampled)}  |  ` +
        `TRL ${formatCurve(row.trl.sampled)}`,
    );
    console.log(`  greedy  rlvr ${formatCurve(row.rlvr.greedy)}  |  TRL ${formatCurve(row.trl.greedy)}`);
    console.log(
      `  gain/step sampled rlvr ${r.toFixed(5)} TRL ${t.toFixed(5)}, greedy rlvr ${rg.toFixed(5)} ` +
        `TRL ${tg.toFixed(5)}; total sampled gain rlvr ${totalGain(row.rlvr.sampled).toFixed(3)} ` +
        `TRL ${totalGain(row.trl.sampled).toFixed(3)}; train reward mean rlvr ${row.rlvrTrain.reward.toFixed(3)} ` +
        `TRL ${row.trlTrain.reward.toFixed(3)}; completion length mean rlvr ${row.rlvrTrain.length.toFixed(2)} ` +
        `TRL ${row.trlTrain.length.toFixed(2)} tokens`,
    );
  }
  const g = learningParity(
    rows.map((x) => slopePerStep(x.rlvr.greedy)),
    rows.map((x) => slopePerStep(x.trl.greedy)),
  );
  console.log(
    `greedy (not gated): rlvr ${g.rlvr.mean.toFixed(5)} ± ${g.rlvr.std.toFixed(5)} pass@1/step, TRL ` +
      `${g.trl.mean.toFixed(5)} ± ${g.trl.std.toFixed(5)} (${g.verdict} if it were)`,
  );
  const v = learningParity(
    rows.map((x) => slopePerStep(x.rlvr.sampled)),
    rows.map((x) => slopePerStep(x.trl.sampled)),
  );
  const peer = { name: PEER, value: v.trl.mean };
  console.log(benchLine(BENCH, "trl_learn.mean_gain_per_step", v.rlvr.mean, "pass@1/step", peer));
  console.log(benchLine(BENCH, "trl_learn.pass", v.pass ? 1 : 0, "bool"));
  console.log(
    `${v.verdict}: sampled pass@1, rlvr gains ${v.rlvr.mean.toFixed(5)} ± ${v.rlvr.std.toFixed(5)} pass@1/step, TRL ` +
      `${v.trl.mean.toFixed(5)} ± ${v.trl.std.toFixed(5)} over seeds ${seeds.join(",")}; ` +
      `margin ${v.margin.toFixed(5)}, spread ${v.spread.toFixed(5)} (PASS needs margin >= -spread and TRL's mean > 0)` +
      (SMOKE ? " [smoke: figures mean nothing]" : ""),
  );
  console.log(
    `settings: ${JSON.stringify(S.rl)}, ${S.evalSamples} samples per question; TRL options ${JSON.stringify(TRL_OPTIONS)}`,
  );
}

await main();
