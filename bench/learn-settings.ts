/**
 * Settings of `npm run bench:learn`: the model, the per-task SFT start and RL run, and the job records the
 * orchestrator (bench/learn.ts) and its jobs (bench/learn-job.ts) exchange. Every number here is quoted in
 * docs/training.md with the figures it gave.
 */

/** The policy: a small character-level GPT (about 0.8M parameters), trained from scratch by the SFT job. */
export const MODEL = {
  arch: "gpt2" as const,
  dModel: 128,
  nLayers: 4,
  nHeads: 4,
  maxSeqLen: 96,
  tokenizer: "char" as const,
};

/** Per-task settings. */
export interface TaskSettings {
  /** Task difficulty options. */
  options: Record<string, unknown>;
  /** Train examples (distinct problems; SFT and RL prompts both come from them). */
  trainExamples: number;
  /** Held-out questions, and samples per question for sampled pass@1. */
  evalExamples: number;
  evalSamples: number;
  /** Completion budget in tokens, and the sampling (and evaluation) temperature. */
  maxTokens: number;
  temperature: number;
  /** The SFT start: a deliberately short supervised run, so there is room to improve. */
  sft: { steps: number; batchSize: number; lr: number };
  /** The RL run (GRPO, the concept card's sketch). */
  rl: {
    steps: number;
    promptsPerStep: number;
    groupSize: number;
    lr: number;
    warmupSteps: number;
    beta: number;
    afterFirstError?: "train" | "mask";
  };
}

/** The RL run both tasks use: GRPO with the card's loss, small lr and many steps (docs/training.md says why). */
const GRPO_RUN: TaskSettings["rl"] = {
  steps: 300,
  promptsPerStep: 8,
  groupSize: 16,
  lr: 5e-5,
  warmupSteps: 10,
  beta: 0.04,
};

const TUNED: Record<string, TaskSettings> = {
  countdown: {
    options: {},
    trainExamples: 4000,
    evalExamples: 200,
    evalSamples: 4,
    maxTokens: 24,
    temperature: 1,
    sft: { steps: 2000, batchSize: 32, lr: 1e-3 },
    rl: GRPO_RUN,
  },
  // Half the gold completions show the working (`11-6=5,5+9=14 \boxed{14}`), half only the box: the SFT start uses
  // both forms, and the verifiable reward finds that the working is right far more often (docs/training.md).
  arithmetic: {
    options: { showWork: true, workShare: 0.5 },
    trainExamples: 7000,
    evalExamples: 200,
    evalSamples: 4,
    maxTokens: 40,
    temperature: 1,
    sft: { steps: 4000, batchSize: 32, lr: 1e-3 },
    rl: GRPO_RUN,
  },
};

/** `BENCH_LEARN_SMOKE=1`: the same jobs at a tiny size (checks the plumbing in a minute; the figures mean nothing). */
const smoke = (s: TaskSettings): TaskSettings => ({
  ...s,
  evalExamples: 20,
  sft: { ...s.sft, steps: 20 },
  rl: { ...s.rl, steps: 3, promptsPerStep: 2, groupSize: 4, warmupSteps: 0 },
});

/** Overrides from the environment (BENCH_LEARN_LR, _STEPS, _BETA, _CREDIT for RL; BENCH_LEARN_SFT_STEPS), for experiments. */
function overridden(s: TaskSettings): TaskSettings {
  const num = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
  const c = process.env.BENCH_LEARN_CREDIT;
  if (c !== undefined && c !== "train" && c !== "mask")
    throw new Error(`BENCH_LEARN_CREDIT: ${JSON.stringify(c)}; allowed: train, mask`);
  const credit = c ? { afterFirstError: c as "train" | "mask" } : {};
  return {
    ...s,
    sft: { ...s.sft, steps: num("BENCH_LEARN_SFT_STEPS", s.sft.steps) },
    rl: {
      ...s.rl,
      lr: num("BENCH_LEARN_LR", s.rl.lr),
      steps: num("BENCH_LEARN_STEPS", s.rl.steps),
      beta: num("BENCH_LEARN_BETA", s.rl.beta),
      ...credit,
    },
  };
}

/** The settings in effect. */
export const TASKS: Record<string, TaskSettings> = Object.fromEntries(
  Object.entries(TUNED).map(([name, s]) => [
    name,
    process.env.BENCH_LEARN_SMOKE ? smoke(overridden(s)) : overridden(s),
  ]),
);

/** One job: the SFT start of (task, seed), the RL or control run from it, or the compute-matched SFT arm. */
export interface JobSpec {
  kind: "sft" | "rl" | "control" | "sftMore";
  task: string;
  seed: number;
  /** The job's folder (one per task and seed, shared by its jobs). */
  dir: string;
  /** The SFT start model folder (rl, control and sftMore). */
  start?: string;
  /**
   * sftMore: CPU seconds of continued SFT (the RL run's training CPU time on the same seed). CPU time of these
   * one-thread jobs is what wall-clock time is on a quiet machine, and a busy neighbour does not stretch it.
   */
  budgetCpuSeconds?: number;
  /** The held-out half its evaluations use (bench/harness/splits.ts). */
  split: "tune" | "final";
}

/** What a job reports: held-out pass@1 of its model at every decoding of bench/harness/decoding.ts. */
export interface JobResult extends JobSpec {
  /** pass@1 by decoding label (T0 greedy; T0.3, T0.6, T1 sampled, n = evalSamples per question). */
  pass: Record<string, number>;
  /** Share of the sampled (T 1) held-out completions that show working before the box. */
  shown: number;
  /** Training correctness (mean of the correctness term) per RL step. */
  trainCorrect?: number[];
  /** Seconds spent training (RL steps, or continued SFT), evaluation excluded. */
  trainSeconds: number;
  /** CPU seconds of this process spent training (user + system), evaluation excluded. */
  trainCpuSeconds?: number;
  /** sftMore: continued SFT steps taken in the budget. */
  sftSteps?: number;
  seconds: number;
}

/** Seeds of the reported run when BENCH_SEED_LIST is unset: never used while tuning (tuning used 0, 1, 2). */
export const REPORTED_SEEDS = [100, 101, 102];
