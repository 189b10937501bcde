/**
 * Settings shared by the `openrs` and `drgrpo` seed systems (bench/seeds/openrs.ts, drgrpo.ts): each system's one
 * SFT start, the RL arm's job record, and the sizes (full and smoke).
 *
 * A start is bench:learn's SFT job (bench/learn-job.ts, kind "sft", the small char-level GPT trained on the task's
 * gold completions, evaluated at every decoding) for one task and seed:
 * - openrs: arithmetic with the working shown in half of the gold (`11-6=5,5+9=14 \boxed{14}` or `\boxed{14}`),
 *   cut short at 1,500 steps so that both answer forms, short and long, are in use;
 * - drgrpo: countdown (`\boxed{(25-3)*4}`; a wrong expression can grow to the token budget), bench:learn's own
 *   countdown start (2,000 steps, seed 100), so its cache folder there can serve it (BENCH_DRGRPO_START).
 * Departure from the papers: Open-RS and Dr. GRPO start from pretrained 1.5B models; at our scale a model knows
 * nothing before SFT, so this SFT run stands in for the pretrained base and the RL recipes add no SFT of their own.
 * One start serves every reported seed, which varies the RL run only (sampling and batch order): the spread over
 * seeds is the RL noise from one start, not the start-to-start spread.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { sourceHash } from "../../harness/source-hash.js";
import { runChildJob } from "../../harness/child-job.js";
import { TASKS, type JobResult, type JobSpec } from "../../learn-settings.js";

const ROOT = resolve(import.meta.dirname, "..", "..", "..");
/** Computed once per process, so every system of one bench:seeds run keys its start by the same source. */
const SOURCE = sourceHash(ROOT);

/** One system's start: bench:learn's SFT job for `task` and `seed`, with `sftSteps` steps. */
export interface StartSpec {
  task: "arithmetic" | "countdown";
  seed: number;
  sftSteps: number;
  /** The environment variable naming a finished start folder to use instead (its `model/` and `sft.json`). */
  overrideEnv: string;
}

/** openrs's start (bench:learn's arithmetic start takes 4,000 steps; 2,000 gave 31-38% pass@1 there). */
export const OPENRS_START: StartSpec = {
  task: "arithmetic",
  seed: 0,
  sftSteps: 1500,
  overrideEnv: "BENCH_OPENRS_START",
};
/** drgrpo's start: exactly bench:learn's countdown start of seed 100. */
export const DRGRPO_START: StartSpec = {
  task: "countdown",
  seed: 100,
  sftSteps: 2000,
  overrideEnv: "BENCH_DRGRPO_START",
};

/** The task of an arm: bench:learn's options, train size and token budget for it. */
export function taskOf(task: StartSpec["task"]): {
  options: Record<string, unknown>;
  trainExamples: number;
  maxTokens: number;
} {
  const t = TASKS[task]!;
  return { options: t.options, trainExamples: t.trainExamples, maxTokens: t.maxTokens };
}

/**
 * Where a start lives: `runs/bench-seeds/openrs-start/<key>` (next to the systems' work folders), keyed by its
 * settings and the source hash.
 */
export function startDir(workDir: string, smoke: boolean, start: StartSpec = OPENRS_START): string {
  const settings = JSON.stringify({
    task: start.task,
    seed: start.seed,
    sftSteps: start.sftSteps,
    smoke,
    job: "learn-job sft",
  });
  const key = createHash("sha256").update(settings).update(SOURCE).digest("hex").slice(0, 10);
  return join(workDir, "..", "openrs-start", key);
}

/**
 * Trains the start unless cached (bench/learn-job.ts writes `<dir>/model` and skips training when it exists).
 * The start's `overrideEnv` (e.g. BENCH_OPENRS_START=<folder>) uses that finished start whatever the source hash
 * says: for a measurement whose start an earlier checkout trained; the run's log names the folder.
 */
export async function ensureStart(
  workDir: string,
  smoke: boolean,
  start: StartSpec = OPENRS_START,
): Promise<JobResult> {
  const given = process.env[start.overrideEnv];
  if (given) return JSON.parse(readFileSync(join(resolve(given), "sft.json"), "utf8")) as JobResult;
  const dir = startDir(workDir, smoke, start);
  mkdirSync(dir, { recursive: true });
  const spec: JobSpec = { kind: "sft", task: start.task, seed: start.seed, dir, split: "final" };
  if (reportOnly()) return JSON.parse(readFileSync(join(dir, "sft.json"), "utf8")) as JobResult;
  // learn-settings reads these in the child: the start's SFT steps, and the smoke sizes
  const env: Record<string, string> = { BENCH_LEARN_SFT_STEPS: String(start.sftSteps) };
  if (smoke) env.BENCH_LEARN_SMOKE = "1";
  return runChildJob<JobResult>("bench/learn-job.ts", spec, join(dir, "sft.json"), `${start.task} start (SFT)`, env);
}

/** The RL arm one job runs (bench/seeds/lib/openrs-job.ts). */
export interface ArmSpec {
  /** `cosine` (Open-RS), `grpo` (the same run with plain correctness; both systems' baseline) or `drGrpo`. */
  arm: "cosine" | "grpo" | "drGrpo";
  seed: number;
  /** The task (bench:learn's options, train size and token budget: `taskOf`). */
  task: StartSpec["task"];
  /** The start model folder and this arm's work folder. */
  start: string;
  dir: string;
  preset: "grpo" | "drGrpo";
  /** KL coefficient (GRPO preset only; Dr. GRPO has none). Both systems use 0, so their GRPO arms are one run. */
  beta: number;
  /** `cosine-length` with progress 1 at this many tokens; absent: plain correctness. */
  cosineMaxLen?: number;
  steps: number;
  promptsPerStep: number;
  groupSize: number;
  lr: number;
  /** Held-out greedy evaluation every N steps on `evalExamples` test questions (keep-best reads it). */
  evalEvery: number;
  evalExamples: number;
  /** Questions of the `final` held-out half on which the best and the last checkpoints are evaluated. */
  finalExamples: number;
}

/** What an arm job reports. */
export interface ArmResult extends ArmSpec {
  /** Per step: train correctness, mean length of correct and of wrong completions (null when a step had none). */
  steps_: { step: number; correct: number; correctLen: number | null; wrongLen: number | null; len: number }[];
  /** Held-out greedy pass@1 at each evaluation (step 0 is the start). */
  evals: { step: number; pass: number }[];
  /** The checkpoint keep-best kept. */
  best: { step: number; score: number } | null;
  /** Greedy pass@1 on the `final` half: the start, keep-best's checkpoint, the last step. */
  final: { start: number; best: number; last: number };
  trainSeconds: number;
}

/** The sizes of one system's arms (full, or smoke: a tiny plumbing run). */
export function armSizes(smoke: boolean) {
  return smoke
    ? { steps: 3, promptsPerStep: 2, groupSize: 4, evalEvery: 1, evalExamples: 10, finalExamples: 10 }
    : { steps: 60, promptsPerStep: 8, groupSize: 8, evalEvery: 10, evalExamples: 100, finalExamples: 200 };
}

/**
 * BENCH_SEEDS_REPORT_ONLY=1: run nothing, read the start's and every arm's result files of the last run (e.g. to
 * re-print the figures); a missing file is an error naming it.
 */
export function reportOnly(): boolean {
  return process.env.BENCH_SEEDS_REPORT_ONLY === "1";
}

/** Parallel arm jobs: BENCH_SEEDS_JOBS, default 2 (one engine thread each). */
export function parallelJobs(): number {
  const n = Number(process.env.BENCH_SEEDS_JOBS ?? 2);
  if (!(n >= 1)) throw new Error(`BENCH_SEEDS_JOBS: ${process.env.BENCH_SEEDS_JOBS}; a positive integer`);
  return Math.floor(n);
}

/** Arms already started in this process, by their spec: asking twice for one arm runs it once. */
const started = new Map<string, Promise<ArmResult>>();

/** Runs one arm in its own process (bench/seeds/lib/openrs-job.ts), in `<workDir>/<arm>-<seed>`. */
export function runArm(spec: Omit<ArmSpec, "dir">, workDir: string): Promise<ArmResult> {
  const dir = join(workDir, `${spec.arm}-${spec.seed}`);
  const full: ArmSpec = { ...spec, dir };
  const key = JSON.stringify(full);
  const known = started.get(key);
  if (known) return known;
  mkdirSync(dir, { recursive: true });
  const label = `${spec.arm} seed ${spec.seed}`;
  const p = reportOnly()
    ? Promise.resolve().then(() => readArm(full))
    : runChildJob<ArmResult>("bench/seeds/lib/openrs-job.ts", full, join(dir, "arm.json"), label);
  started.set(key, p);
  return p;
}

/** The result file of an arm already run (report-only); one made with other settings is an error naming them. */
function readArm(spec: ArmSpec): ArmResult {
  const path = join(spec.dir, "arm.json");
  const r = JSON.parse(readFileSync(path, "utf8")) as ArmResult;
  const differ = (Object.keys(spec) as (keyof ArmSpec)[]).filter(
    (k) => JSON.stringify(r[k]) !== JSON.stringify(spec[k]),
  );
  if (differ.length > 0) throw new Error(`${path} was made with other settings (${differ.join(", ")}); run the bench`);
  return r;
}
