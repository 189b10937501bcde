/**
 * `npm run bench:conductor` (issue 13, docs/conductor.md): does RL make a planner's chains over a pool of small
 * workers beat every single worker, and is it the reward that does it? On the shared harness (bench/harness/,
 * docs/benchmarks.md), per seed from `BENCH_SEED_LIST` (default 0,1,2):
 *
 * - the pool: one small built-in worker per skill (read, multiply, add) and a weak generalist, each trained by SFT on
 *   `skillPairs` (the step prompts it sees in gold chains), built once and cached under the work folder, keyed by
 *   its settings and `sourceHash` (like the SFT starts);
 * - the best single worker: every worker given the whole question as a one-step plan; the best one's accuracy;
 * - the planner's SFT start, at every decoding (greedy; sampled at T 0.3, 0.6, 1); its best decoding is the baseline
 *   of the gains. Its SFT target (BENCH_CONDUCTOR_WARM) is by default a random well-formed plan per question
 *   (`warmStart: "format"`: the grammar, the question copied into the first subtask, random workers in random order),
 *   so the routing is what RL must find, as the paper's conductor learns it by RL alone; `gold` trains on gold plans,
 *   which leaves RL nothing to add beyond the pool's own accuracy;
 * - RL (recipes/conductor.yaml's settings, KL weight 0), the control (rewards permuted inside each group), and one RL
 *   run with self-calls allowed, all with the same steps. The self arm has its own SFT start, made as the main one but
 *   with the planner listed as a fifth worker in every prompt (a planner that never saw that line writes garbage
 *   for it: the first self run, from the main start, earned 0 reward on every sample of its first 29 steps); that
 *   start's frozen copy answers the self-calls, and the arm's gain is over that start.
 *
 * Accuracy is held-out final-answer accuracy of the executed chains. Prints JSON lines: conductor.gain_over_best_worker,
 * conductor.gain_over_start, conductor.gain_min (worst seed, over the best worker), conductor.control_gain (points),
 * conductor.steps_mean, conductor.worker_tokens_mean (greedy RL chains), conductor.cap_accuracy and
 * conductor.best_worker_cap_accuracy (correct with at most CAP worker tokens per question), conductor.self_gain_over_start.
 * Targets: RL over the best worker ≥ 10 points and over the start ≥ 10 points on every seed; RL − control ≥ 10.
 * The paper reports about three steps per question and 72.35 against 64.14 for the best single model under a shared
 * cap (arXiv 2512.04388 tab. 7, §4.3); we state what we see.
 *
 * Environment: BENCH_SEED_LIST, BENCH_SPLIT (final | tune), BENCH_CONDUCTOR_WARM (format | gold), the RL arms'
 * BENCH_CONDUCTOR_RL_LR (default 2e-4), BENCH_CONDUCTOR_RL_STEPS (400) and BENCH_CONDUCTOR_GROUP (16; lr and group
 * tuned on `tune`, seed 0, 2026-12-07; 400 steps since seed 1's 200-step run stayed flat, docs/conductor.md),
 * BENCH_CONDUCTOR_OUT (work folder, default runs/bench-conductor), BENCH_CONDUCTOR_SMOKE=1 (a plumbing run on one
 * seed with tiny models: the figures mean nothing), BENCH_CONDUCTOR_EVAL=<checkpoint dir> (score that planner alone at
 * every decoding on the split's held-out questions, seeded by the first of BENCH_SEED_LIST; RL runs keep a checkpoint
 * every 50 steps under `<work folder>/<run>/checkpoints/step-N`, so a long run can be scored mid-way).
 *
 * Records (bench/harness/seed-cache.ts): the best single worker and every arm of every seed (start, rl, control,
 * self) are written to `<work folder>/rec-<split>-...json` as they finish. BENCH_CONDUCTOR_REUSE=1 reports a record
 * with the same settings instead of rerunning it (the work folder first, then bench/results/conductor/); an RL arm's
 * settings hold its start's figures, so it is reused only beside the same start. BENCH_CONDUCTOR_ARMS (default
 * start,rl,control,self) says which arms this run may measure; the others are reported from records, or reported
 * missing. So a seed's arms can run in separate processes or sessions, e.g. `BENCH_CONDUCTOR_REUSE=1
 * BENCH_SEED_LIST=0 BENCH_CONDUCTOR_ARMS=rl` beside `... BENCH_CONDUCTOR_ARMS=control`, and a run with
 * BENCH_CONDUCTOR_ARMS= (empty) and REUSE only reports. Records name the workers by their weights' hash, not
 * their folder, and the checkpoints a run trains (the start, each RL arm's last step) are recorded too
 * (`made-<run>.json`, bench/conductor/records.ts): under REUSE, one trained with the same settings is used as it is,
 * so the other split, or a new arm beside an old start, costs an evaluation, not the training. An RL arm with
 * other than the default lr, steps or group has them in its run and record names
 * (`rec-tune-0-rl-lr0.0003-s100.json`), so tuning runs can share the work folder and run side by side. Under REUSE
 * an RL arm continues the longest made run of its settings with fewer steps, and a killed arm resumes
 * (`prepareRun`).
 */
import { existsSync, mkdirSync } from "node:fs";
import { nativeInfo } from "../src/engine/backends/native.js";
import { join, resolve } from "node:path";
import { Rng } from "../src/util/index.js";
import { loadModel } from "../src/models/index.js";
import { resolveConfig } from "../src/trainer/recipe.js";
import { train } from "../src/trainer/train.js";
import { jsonlReporter } from "../src/trainer/reporters.js";
import { RunDir } from "../src/trainer/run-dir.js";
import { sampleGroups, scoreGroups } from "../src/rollout/groups.js";
import { createConductor } from "../src/rollout/conductor/index.js";
import { CAP, bestSingleWorker, buildSkillPool, checkPool, skillPool } from "./conductor/pool.js";
import { madeCheckpoint, prepareRun, recordedOptions, unweighedOptions, weightsHash } from "./conductor/records.js";
import type { ConductorInput, WorkerOptions } from "../src/tasks/conductor.js";
import type { Example, Task } from "../src/tasks/types.js";
import {
  DECODINGS,
  benchLine,
  comparativeGate,
  gainOverBest,
  heldOutExamples,
  seedResult,
  countFromEnv,
  seedsFromEnv,
  storedRecords,
  storedResult,
  sourceHash,
  splitFromEnv,
  summarize,
  withinGroupControl,
  type PassByDecoding,
} from "./harness/index.js";

const ROOT = resolve(import.meta.dirname, "..");
const SMOKE = process.env.BENCH_CONDUCTOR_SMOKE === "1";
const OUT = resolve(
  process.env.BENCH_CONDUCTOR_OUT ?? join(ROOT, "runs", SMOKE ? "bench-conductor-smoke" : "bench-conductor"),
);
const SEEDS = seedsFromEnv(process.env.BENCH_SEED_LIST, SMOKE ? [0] : [0, 1, 2]);
const SPLIT = splitFromEnv(process.env.BENCH_SPLIT);
const REUSE = process.env.BENCH_CONDUCTOR_REUSE === "1";
const KEPT = join(ROOT, "bench", "results", "conductor");
const ARM_NAMES = ["start", "rl", "control", "self"] as const;
type ArmName = (typeof ARM_NAMES)[number];
const ARMS = armsFromEnv(process.env.BENCH_CONDUCTOR_ARMS);
/** The RL arms' learning rate (BENCH_CONDUCTOR_RL_LR; tune it on BENCH_SPLIT=tune); part of each RL record's settings. */
const RL_LR = Number(process.env.BENCH_CONDUCTOR_RL_LR ?? 2e-4);
if (!(RL_LR > 0 && RL_LR < 1)) throw new Error(`BENCH_CONDUCTOR_RL_LR: a learning rate in (0, 1), not ${RL_LR}`);
/** The RL arms' steps and group size (BENCH_CONDUCTOR_RL_STEPS, BENCH_CONDUCTOR_GROUP); part of each RL record's settings. */
const RL_STEPS = countFromEnv("BENCH_CONDUCTOR_RL_STEPS", SMOKE ? 2 : 400);
const GROUP = countFromEnv("BENCH_CONDUCTOR_GROUP", SMOKE ? 8 : 16);
/** The RL settings that differ from the defaults, in run and record names (so tuning runs can share a work folder). */
const RL_TAG =
  (RL_LR === 2e-4 ? "" : `-lr${RL_LR}`) +
  (RL_STEPS === (SMOKE ? 2 : 400) ? "" : `-s${RL_STEPS}`) +
  (GROUP === (SMOKE ? 8 : 16) ? "" : `-g${GROUP}`);
/** The planner start's SFT target: random well-formed plans (default; routing left to RL) or the gold plans. */
const WARM = (process.env.BENCH_CONDUCTOR_WARM ?? "format") as "format" | "gold";
if (WARM !== "format" && WARM !== "gold") throw new Error(`BENCH_CONDUCTOR_WARM: "format" or "gold", not "${WARM}"`);
const TARGET = 0.1;
/** A checkpoint to score alone (BENCH_CONDUCTOR_EVAL), e.g. an RL run's `checkpoints/step-250` while it goes on. */
const EVAL_DIR = process.env.BENCH_CONDUCTOR_EVAL;
/** The gold plans' accuracy below which the pool cannot carry the claim, and the run stops (BENCH_CONDUCTOR_FORCE=1 goes on). */
const POOL_MIN = 0.5;

const S = SMOKE
  ? {
      workerSteps: 20,
      workerD: 32,
      workerLayers: 1,
      plannerD: 32,
      layers: 1,
      sftSteps: 20,
      sftExamples: 200,
      evalExamples: 6,
      prompts: 2,
    }
  : {
      workerSteps: 1500,
      workerD: 128,
      workerLayers: 4,
      plannerD: 96,
      layers: 4,
      sftSteps: 2000,
      sftExamples: 50_000,
      evalExamples: 200,
      prompts: 8,
    };

type Recipe = Parameters<typeof resolveConfig>[0];

function recipe(name: string, seed: number, options: ConductorInput, model: object, sft: boolean) {
  return resolveConfig({
    name,
    seed,
    outDir: OUT,
    preset: "grpo",
    model,
    task: { name: "conductor", options, trainExamples: S.sftExamples, testExamples: 100, seed: 0 },
    sft: { enabled: sft, steps: S.sftSteps, batchSize: 16, lr: 0.002 },
    algorithm: { kl: { beta: 0 } },
    train: { steps: RL_STEPS, promptsPerStep: S.prompts, groupSize: GROUP, maxCompletionTokens: 200, lr: RL_LR },
    eval: { every: 0, atStart: false, examples: 1 },
    // RL runs keep a checkpoint every 50 steps, so a long tuning run can be scored mid-way (BENCH_CONDUCTOR_EVAL)
    checkpoint: sft ? { every: 0, keepLast: 1 } : { every: 50, keepLast: 20 },
    log: { progress: false },
  } as Recipe);
}

/** Held-out chain accuracy of a planner at one decoding, with steps, worker tokens and accuracy under the cap. */
async function chainEval(dir: string, task: Task, examples: Example[], temperature: number, seed: number) {
  const { model, tokenizer } = loadModel(dir);
  const groups = await sampleGroups(model, tokenizer, task, examples, {
    groupSize: 1,
    maxNewTokens: 200,
    temperature,
    rng: new Rng(seed).split("eval"),
    policyVersion: -1,
    idPrefix: "eval",
    maxRows: 16,
  });
  await scoreGroups(task, new Map(examples.map((e) => [e.id, e])), groups);
  const rs = groups.flatMap((g) => g.rollouts);
  const chains = rs.map((r) => r.rewardInfo?.chain as { steps: unknown[]; workerTokens: number } | undefined);
  const ok = rs.map((r) => r.terms[task.correctTerm] === 1);
  const steps = chains.map((c) => (c?.steps ?? []) as { worker?: string }[]);
  return {
    acc: mean(ok.map(Number)),
    cap: mean(ok.map((o, i) => Number(o && (chains[i]?.workerTokens ?? 0) <= CAP))),
    steps: mean(steps.map((c) => c.length)),
    tokens: mean(chains.map((c) => c?.workerTokens ?? 0)),
    /** Steps per question that call the planner itself (0 unless self-calls are on). */
    selfCalls: mean(steps.map((c) => c.filter((x) => x.worker === "self").length)),
  };
}

async function atDecodings(dir: string, task: Task, examples: Example[], seed: number) {
  const pass: PassByDecoding = {};
  let greedy = { acc: 0, cap: 0, steps: 0, tokens: 0, selfCalls: 0 };
  for (const d of DECODINGS) {
    const r = await chainEval(dir, task, examples, d.temperature, seed);
    pass[d.label] = r.acc;
    if (d.temperature === 0) greedy = r;
  }
  return { pass, greedy };
}

/** A made checkpoint's record options (bench/conductor/records.ts): reused under BENCH_CONDUCTOR_REUSE=1. */
const made = (name: string, settings: unknown, source: string) => ({
  out: OUT,
  name,
  settings,
  source,
  reuse: REUSE,
  machine: nativeInfo(),
});

/** An RL arm's last checkpoint from `start`: trained, or reused when made with the same `settings`. */
async function rlArm(
  name: string,
  seed: number,
  options: ConductorInput,
  start: string,
  settings: { rlSteps: number; start: string },
  source: string,
) {
  const run = `${name}-${seed}${RL_TAG}`;
  const ckpt = await madeCheckpoint(made(run, settings, source), async () => {
    const config = recipe(run, seed, options, { type: "checkpoint", path: start }, false);
    // under reuse, a killed run resumes and a shorter made run of the same settings is continued
    if (REUSE) console.error(`${run}: ${prepareRun(OUT, join(OUT, run), settings, config)}`);
    const res = await train(config, {
      resume: REUSE,
      overwrite: true,
      // metrics.jsonl in the run folder: rewards, conductor/stepsMean and conductor/workerTokensMean per step
      reporters: [jsonlReporter(new RunDir(join(OUT, run)))],
      ...(name === "control" ? { transformGroups: withinGroupControl(seed) } : {}),
    });
    return join(res.runDir, "checkpoints", `step-${res.step}`);
  });
  return ckpt.dir;
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
const line = (metric: string, value: number, unit: string) => console.log(benchLine("conductor", metric, value, unit));
const pts = (x: number) => (100 * x).toFixed(1);

/** BENCH_CONDUCTOR_ARMS: the arms this run may measure (default all; empty = none, report records only). */
function armsFromEnv(value: string | undefined): Set<ArmName> {
  if (value === undefined) return new Set(ARM_NAMES);
  const names = value
    .split(",")
    .map((a) => a.trim())
    .filter(Boolean);
  for (const n of names)
    if (!(ARM_NAMES as readonly string[]).includes(n))
      throw new Error(`BENCH_CONDUCTOR_ARMS: unknown arm "${n}" (known: ${ARM_NAMES.join(", ")})`);
  return new Set(names as ArmName[]);
}

/** The task and its held-out questions. */
interface Held {
  task: Task;
  examples: Example[];
}

/** One arm's held-out figures: pass@1 at every decoding, and the greedy chains' steps, tokens and capped accuracy. */
type ArmResult = Awaited<ReturnType<typeof atDecodings>> & {
  /** The self arm: its own start's figures (the start with the planner listed as a worker). */
  selfStart?: Awaited<ReturnType<typeof atDecodings>>;
};

/** The options with self-calls on (depth 1), answered by the frozen planner at `planner`. */
const withSelf = (options: ConductorInput, planner: string): ConductorInput => ({
  ...options,
  selfCalls: { maxDepth: 1, planner: { type: "checkpoint", path: planner } },
});

/**
 * A record (bench/harness/seed-cache.ts) under the work folder, or kept in bench/results/conductor/: reused with
 * BENCH_CONDUCTOR_REUSE=1 and equal settings; else `run` when `measure` is set (and the result stored), else null.
 */
async function record<R>(file: string, settings: unknown, source: string, measure: boolean, run: () => Promise<R>) {
  const opts = {
    file: join(OUT, file),
    kept: [join(KEPT, file)],
    settings,
    source,
    reuse: REUSE,
    machine: nativeInfo(),
  };
  const rec = measure ? await seedResult(opts, run) : storedResult<R>(opts);
  if (rec?.reused) {
    const when = rec.finishedAt ? `${rec.madeAt} to ${rec.finishedAt}` : rec.madeAt;
    console.error(`${file}: reused ${rec.from} (made ${when}, source ${rec.source.slice(0, 10)})`);
  }
  return rec;
}

/** One seed: its start (made only when an arm of it must be measured) and every arm, measured or from records. */
async function seedArms(
  seed: number,
  options: ConductorInput,
  recorded: unknown,
  held: () => Held,
  model: object,
  source: string,
) {
  const base = { seed, sizes: S, options: recorded, split: SPLIT, examples: S.evalExamples, v: 1 };
  // what a made checkpoint was trained with: never the held-out split (training reads only train questions)
  const trained = { seed, sizes: S, options: recorded, model, warm: WARM, v: 1 };
  const file = (arm: ArmName) => `rec-${SPLIT}-${seed}-${arm}${arm === "start" ? "" : RL_TAG}.json`;
  /** An SFT start: one this work folder already made with these settings is used as it is (no second SFT run). */
  const sftStart = async (name: string, arm: string, sftOptions: ConductorInput): Promise<string> => {
    const { dir } = await madeCheckpoint(made(name, { ...trained, arm }, source), async () => {
      const run = await train(recipe(name, seed, sftOptions, model, true), {
        resume: false,
        overwrite: true,
        stopAfter: 0,
        reporters: [],
      });
      return join(run.runDir, "checkpoints", "start");
    });
    return dir;
  };
  let startDir: string | null = null;
  let recordedHash: string | null = null; // the weights' hash in a reused start record
  const start = async (): Promise<string> => {
    if (startDir) return startDir;
    const dir = await sftStart(`start-${seed}`, "start", options);
    if (recordedHash !== null && weightsHash(dir) !== recordedHash)
      throw new Error(
        `bench:conductor seed ${seed}: the start made now differs from the recorded one (${file("start")}; the code ` +
          "changed): measure the start again (BENCH_CONDUCTOR_ARMS with start, without BENCH_CONDUCTOR_REUSE)",
      );
    return (startDir = dir);
  };
  // the self arm's start: the same SFT with the planner listed as a worker in every prompt (see the file comment);
  // SFT runs no chain, so the self planner is loaded but never called: any checkpoint serves, here a worker's
  const selfStart = () =>
    sftStart(
      `start-self-${seed}`,
      "start-self",
      withSelf(options, (options.workers![0]!.source as { path: string }).path),
    );
  const s = await record(file("start"), { ...base, arm: "start" }, source, ARMS.has("start"), async () => {
    const dir = await start();
    const { task, examples } = held();
    return { ...(await atDecodings(dir, task, examples, seed)), weights: weightsHash(dir) };
  });
  if (!s) return { seed, start: null, arms: {} as Partial<Record<ArmName, ArmResult>> };
  if (s.reused) recordedHash = s.result.weights;
  const arms: Partial<Record<ArmName, ArmResult>> = {};
  for (const arm of ["rl", "control", "self"] as const) {
    const settings = { ...base, arm, start: s.result.pass, rlLr: RL_LR, rlSteps: RL_STEPS, group: GROUP };
    const rec = await record(
      file(arm),
      arm === "self" ? { ...settings, selfStart: 1 } : settings,
      source,
      ARMS.has(arm),
      async (): Promise<ArmResult> => {
        const dir = arm === "self" ? await selfStart() : await start();
        const armTrained = { ...trained, arm, start: weightsHash(dir), rlLr: RL_LR, rlSteps: RL_STEPS, group: GROUP };
        if (arm !== "self") {
          const { task, examples } = held();
          return atDecodings(await rlArm(arm, seed, options, dir, armTrained, source), task, examples, seed);
        }
        // self-calls answered by the self start's frozen copy; the same held-out questions, prompts listing "self"
        const selfOptions = withSelf(options, dir);
        const selfTask = createConductor(selfOptions);
        const examples = heldOutExamples(selfTask, SPLIT, S.evalExamples);
        const selfStartResult = await atDecodings(dir, selfTask, examples, seed);
        const trainedDir = await rlArm("self", seed, selfOptions, dir, armTrained, source);
        return { ...(await atDecodings(trainedDir, selfTask, examples, seed)), selfStart: selfStartResult };
      },
    );
    if (rec) arms[arm] = rec.result;
  }
  return { seed, start: s.result, arms };
}

/** BENCH_CONDUCTOR_EVAL=<checkpoint dir>: that planner's held-out pass@1 at every decoding (no record, no gate). */
async function evalOnly(dir: string, task: Task, examples: Example[], seed: number): Promise<void> {
  if (!existsSync(join(dir, "model.safetensors"))) throw new Error(`BENCH_CONDUCTOR_EVAL: no checkpoint at ${dir}`);
  const r = await atDecodings(dir, task, examples, seed);
  console.error(
    `${dir}: pass@1 ${JSON.stringify(r.pass)}; greedy chains: ${r.greedy.steps.toFixed(2)} steps, ` +
      `${r.greedy.tokens.toFixed(1)} worker tokens`,
  );
  for (const [label, acc] of Object.entries(r.pass)) line(`conductor.eval.${label}`, 100 * acc, "percent");
}

/**
 * A report-only run without the pool (BENCH_CONDUCTOR_ARMS= and REUSE in a work folder that has not made it, as in a
 * fresh clone): the recorded options of the first pool record, in the work folder or kept, whose settings equal this
 * run's but for the workers' weights. The records are then reported as made, without rebuilding the pool (about 20
 * minutes on 2 cores) to check that it hashes the same; the report says so.
 */
function reportedOptions(options: ConductorInput): unknown {
  const wanted = { sizes: S, options: unweighedOptions(options), split: SPLIT, examples: S.evalExamples, v: 2 };
  const file = `rec-${SPLIT}-pool.json`;
  const rec = storedRecords<unknown>([join(OUT, file), join(KEPT, file)]).find((r) => {
    const settings = r.settings as { options: unknown };
    return JSON.stringify({ ...settings, options: unweighedOptions(settings.options) }) === JSON.stringify(wanted);
  });
  if (!rec)
    throw new Error(`bench:conductor: no record of the pool (${file}) to report from; run with an arm to measure`);
  console.error(
    `the pool is not made in ${OUT}: reporting the records made with the pool of ${rec.from} (${rec.madeAt}), ` +
      "whose workers are named by their weights' hash; the pool is not rebuilt to check them",
  );
  return (rec.settings as { options: unknown }).options;
}

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  console.error(
    `bench:conductor seeds ${SEEDS.join(",")} split ${SPLIT}, ` +
      (EVAL_DIR ? `scoring ${EVAL_DIR} alone` : `measuring ${[...ARMS].join(",") || "nothing"}`) +
      `${REUSE ? " (BENCH_CONDUCTOR_REUSE=1: records with the same settings are reported, not rerun)" : ""}` +
      `${SMOKE ? " (smoke: the figures mean nothing)" : ""}`,
  );
  const source = sourceHash(ROOT);
  // only reporting, with no pool made here (a fresh clone): the records are matched but for the workers' weights
  const pool = skillPool(ROOT, OUT, S);
  const reportOnly = ARMS.size === 0 && REUSE && !EVAL_DIR && !pool.built;
  const workers = reportOnly ? pool.workers : await buildSkillPool(ROOT, OUT, S);
  const options: ConductorInput = {
    workers,
    kinds: ["word", "expr", "word-add"],
    digits: 2,
    maxSteps: 4,
    warmStart: WARM,
  };
  // the task loads its workers, so it is made on first use: a report-only run never makes it
  let madeHeld: Held | null = null;
  const held = (): Held => {
    if (madeHeld) return madeHeld;
    const task = createConductor(options);
    return (madeHeld = { task, examples: heldOutExamples(task, SPLIT, S.evalExamples) });
  };
  if (EVAL_DIR) return evalOnly(resolve(EVAL_DIR), held().task, held().examples, SEEDS[0]!);
  const recorded = reportOnly ? reportedOptions(options) : recordedOptions(options);
  const poolSettings = { sizes: S, options: recorded, split: SPLIT, examples: S.evalExamples, v: 2 };
  const poolRec = await record(`rec-${SPLIT}-pool.json`, poolSettings, source, ARMS.size > 0, async () => ({
    ...(await bestSingleWorker(held().task, held().examples, workers.length)),
    // the same questions with their gold plans (warmStart only changes the SFT target)
    check: await checkPool(
      workers,
      held().task,
      heldOutExamples(createConductor({ ...options, warmStart: "gold" }), SPLIT, S.evalExamples),
      50,
    ),
  }));
  if (!poolRec) throw new Error("bench:conductor: no record of the pool; run with an arm to measure");
  const { check, ...single } = poolRec.result;
  const exact = Object.entries(check.exact).map(([k, v]) => `${k} ${pts(v)}`);
  console.error(
    `pool: exact match on fresh pairs of each worker's own skill: ${exact.join(", ")}; gold plans executed by the ` +
      `pool: ${pts(check.goldPlans)}; best single worker: ${workers[single.worker]!.id} ${pts(single.acc)} ` +
      `(under cap ${pts(single.cap)})`,
  );
  for (const [k, v] of Object.entries(check.exact)) line(`conductor.pool.${k}_exact`, 100 * v, "percent");
  line("conductor.pool.gold_plan_accuracy", 100 * check.goldPlans, "percent");
  if (!SMOKE && check.goldPlans < POOL_MIN && process.env.BENCH_CONDUCTOR_FORCE !== "1") {
    console.error(
      `the pool carries out only ${pts(check.goldPlans)}% of the gold plans (below ${pts(POOL_MIN)}): a planner ` +
        "cannot beat the workers with workers that cannot do their steps, so no planner is trained " +
        "(BENCH_CONDUCTOR_FORCE=1 trains anyway); see docs/conductor.md",
    );
    return;
  }
  // GPT-2 shape (learned positions): the planner must copy the ~60-character question into its first subtask, which
  // a Llama-shaped d 64 planner did not learn in 1,500 SFT steps and this one does between steps 1,000 and 1,250 of
  // a 2,000-step schedule (docs/conductor.md)
  const model = {
    type: "new",
    arch: "gpt2",
    dModel: S.plannerD,
    nLayers: S.layers,
    nHeads: 4,
    nKvHeads: 4,
    dFf: 4 * S.plannerD, // tied embeddings (the default)
    maxSeqLen: 640, // prompt (331 characters at most) + 200 completion tokens
  };
  const rows = [];
  const missing: string[] = [];
  for (const seed of SEEDS) {
    const { start: s, arms } = await seedArms(seed, options, recorded, held, model, source);
    const show = (r: ArmResult | undefined) => (r ? JSON.stringify(r.pass) : "missing");
    console.error(
      `seed ${seed}: start ${show(s ?? undefined)} rl ${show(arms.rl)} control ${show(arms.control)} self ${show(arms.self)}` +
        (arms.rl
          ? `; greedy RL chains: ${arms.rl.greedy.steps.toFixed(2)} steps, ${arms.rl.greedy.tokens.toFixed(1)} worker tokens`
          : ""),
    );
    if (arms.self?.selfStart)
      console.error(
        `seed ${seed} self arm: its start ${show(arms.self.selfStart)} → ${show(arms.self)}; greedy chains: ` +
          `${arms.self.greedy.steps.toFixed(2)} steps, ${arms.self.greedy.selfCalls.toFixed(2)} self-calls, ` +
          `${arms.self.greedy.tokens.toFixed(1)} worker tokens per question`,
      );
    if (!s || !arms.rl || !arms.control) {
      missing.push(
        `seed ${seed}: ${[!s && "start", !arms.rl && "rl", !arms.control && "control"].filter(Boolean).join(", ")}`,
      );
      continue;
    }
    const rl = gainOverBest(s.pass, arms.rl.pass);
    rows.push({
      seed,
      rl: rl.atStartBest,
      control: gainOverBest(s.pass, arms.control.pass).atStartBest,
      overWorker: arms.rl.pass[rl.decoding]! - single.acc,
      self: arms.self?.selfStart ? gainOverBest(arms.self.selfStart.pass, arms.self.pass).atStartBest : null,
      greedy: arms.rl.greedy,
    });
  }
  if (rows.length === 0) {
    console.error(`no seed has every arm (${missing.join("; ")}): no metrics, no gate`);
    return;
  }
  line("conductor.gain_over_best_worker", 100 * summarize(rows.map((r) => r.overWorker)).mean, "points");
  line("conductor.gain_over_start", 100 * summarize(rows.map((r) => r.rl)).mean, "points");
  line("conductor.gain_min", 100 * summarize(rows.map((r) => r.overWorker)).min, "points");
  line("conductor.control_gain", 100 * summarize(rows.map((r) => r.control)).mean, "points");
  line("conductor.steps_mean", mean(rows.map((r) => r.greedy.steps)), "steps");
  line("conductor.worker_tokens_mean", mean(rows.map((r) => r.greedy.tokens)), "tokens");
  line("conductor.cap_accuracy", 100 * mean(rows.map((r) => r.greedy.cap)), "percent");
  line("conductor.best_worker_cap_accuracy", 100 * single.cap, "percent");
  const selfGains = rows.flatMap((r) => (r.self === null ? [] : [r.self]));
  if (selfGains.length) line("conductor.self_gain_over_start", 100 * summarize(selfGains).mean, "points");
  const verdict = comparativeGate(rows, TARGET);
  const pass = missing.length === 0 && verdict.pass && rows.every((r) => r.rl >= TARGET && r.overWorker >= TARGET);
  console.error(
    `gate (over the best worker ≥ ${100 * TARGET}, over the start ≥ ${100 * TARGET}, RL − control ≥ ${100 * TARGET} ` +
      `on every seed): ${pass ? "PASS" : "FAIL"}; margins ${verdict.margins.map(pts).join(", ")}` +
      (missing.length ? `; incomplete (${missing.join("; ")})` : ""),
  );
}

await main();
