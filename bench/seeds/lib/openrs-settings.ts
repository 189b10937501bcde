/**
 * Settings shared by the `openrs` and `drgrpo` seed systems (bench/seeds/openrs.ts, drgrpo.ts): the one SFT start
 * both RL comparisons begin from, the RL arm's job record, and the sizes (full and smoke).
 *
 * The start is bench:learn's arithmetic SFT job (bench/learn-job.ts, kind "sft": the small char-level GPT trained on
 * gold completions of which half show the working, `11-6=5,5+9=14 \boxed{14}`, and half only the box), cut short at
 * START_SFT_STEPS so that about a third of answers are right and both answer forms (short and long) are in use.
 * Departure from the papers: Open-RS and Dr. GRPO start from pretrained 1.5B models; at our scale a model knows
 * nothing before SFT, so this short SFT run stands in for the pretrained base and the RL recipes add no SFT of
 * their own. One start (seed START_SEED) serves every reported seed, which varies the RL run only (sampling and
 * batch order): the spread over seeds is the RL noise from one start, not the start-to-start spread.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { sourceHash } from "../../harness/source-hash.js";
import { runChildJob } from "../../harness/child-job.js";
import type { JobResult, JobSpec } from "../../learn-settings.js";

const ROOT = resolve(import.meta.dirname, "..", "..", "..");
/** SFT steps of the start (bench:learn's arithmetic start takes 4,000; 2,000 gave 31-38% pass@1 there). */
export const START_SFT_STEPS = 1500;
/** The start's seed (its init and SFT order), fixed: the reported seeds vary the RL runs from it. */
export const START_SEED = 0;
/** Computed once per process, so every system of one bench:seeds run keys its start by the same source. */
const SOURCE = sourceHash(ROOT);

/** The arithmetic task's options of both systems (bench:learn's): working shown in half of the gold completions. */
export const TASK_OPTIONS = { showWork: true, workShare: 0.5 } as const;
/** Completion budget (bench:learn's arithmetic); the longest gold is about 30 characters. */
export const MAX_TOKENS = 40;

/**
 * Where the shared start lives: `runs/bench-seeds/openrs-start/<key>` (next to both systems' work folders, so a
 * `bench:seeds openrs drgrpo` run trains it once), keyed by its settings and the source hash.
 */
export function startDir(workDir: string, smoke: boolean): string {
  const settings = JSON.stringify({
    START_SFT_STEPS,
    START_SEED,
    TASK_OPTIONS,
    smoke,
    job: "learn-job sft arithmetic",
  });
  const key = createHash("sha256").update(settings).update(SOURCE).digest("hex").slice(0, 10);
  return join(workDir, "..", "openrs-start", key);
}

/** Trains the start unless cached (bench/learn-job.ts writes `<dir>/model` and skips training when it exists). */
export async function ensureStart(workDir: string, smoke: boolean): Promise<JobResult> {
  const dir = startDir(workDir, smoke);
  mkdirSync(dir, { recursive: true });
  const spec: JobSpec = { kind: "sft", task: "arithmetic", seed: START_SEED, dir, split: "final" };
  if (reportOnly()) return JSON.parse(readFileSync(join(dir, "sft.json"), "utf8")) as JobResult;
  // learn-settings reads these in the child: the start's SFT steps, and the smoke sizes
  const env: Record<string, string> = { BENCH_LEARN_SFT_STEPS: String(START_SFT_STEPS) };
  if (smoke) env.BENCH_LEARN_SMOKE = "1";
  return runChildJob<JobResult>("bench/learn-job.ts", spec, join(dir, "sft.json"), "openrs start (SFT)", env);
}

/** The RL arm one job runs (bench/seeds/lib/openrs-job.ts). */
export interface ArmSpec {
  /** `openrs`: `cosine` (Open-RS) or `plain` (the same run, plain correctness); `drgrpo`: `grpo` or `drGrpo`. */
  arm: "cosine" | "plain" | "grpo" | "drGrpo";
  seed: number;
  /** The start model folder and this arm's work folder. */
  start: string;
  dir: string;
  preset: "grpo" | "drGrpo";
  /** KL coefficient (GRPO preset only; Dr. GRPO has none). */
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
    : { steps: 80, promptsPerStep: 8, groupSize: 8, evalEvery: 10, evalExamples: 100, finalExamples: 200 };
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

/** Runs one arm in its own process (bench/seeds/lib/openrs-job.ts); its folder is `<workDir>/<arm>-<seed>`. */
export function runArm(spec: Omit<ArmSpec, "dir">, workDir: string): Promise<ArmResult> {
  const dir = join(workDir, `${spec.arm}-${spec.seed}`);
  mkdirSync(dir, { recursive: true });
  const full: ArmSpec = { ...spec, dir };
  if (reportOnly()) return Promise.resolve(JSON.parse(readFileSync(join(dir, "arm.json"), "utf8")) as ArmResult);
  return runChildJob<ArmResult>(
    "bench/seeds/lib/openrs-job.ts",
    full,
    join(dir, "arm.json"),
    `${spec.arm} seed ${spec.seed}`,
  );
}
