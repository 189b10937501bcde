/**
 * Settings of the `exgrpo` seed system (bench/seeds/exgrpo.ts): the SFT start, the two RL arms and their sizes, and
 * the job records the system and its jobs (bench/seeds/lib/exgrpo-job.ts) exchange.
 *
 * The setting is chosen for the paper's claim (arXiv 2510.02245 §5.2: on-policy RLVR collapses where replay trains
 * stably): a small char-level GPT on two-digit addition, an SFT start (3,000 steps) that answers 50-75% of the
 * questions at T 1 (above ExGRPO's 35% delayed start, so replay starts after step 1), and RL at lr 2e-4, four times
 * bench:learn's 5e-5, where on-policy updates overshoot: tuned on seeds 10 and 11 (tune split; docs/seed-systems/
 * exgrpo.md has the table: at 5e-4 both arms collapse to under 10%, at 1e-4 neither degrades much). Both arms are the `exgrpo` preset (mean-only advantages, PPO clip 0.2, no KL,
 * tokenMean); `onpolicy` sets `replay: none`, so replay is the only difference. Each reported seed has its own
 * start (init and SFT order), so the spread covers start-to-start variation as well as RL noise.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";

/** The policy: a character-level GPT of about 0.1M parameters (bench:learn's is 0.8M; this one keeps 3 seeds × 2 arms affordable). */
export const MODEL = {
  type: "new" as const,
  arch: "gpt2" as const,
  dModel: 64,
  nLayers: 2,
  nHeads: 4,
  maxSeqLen: 32,
  tokenizer: "char" as const,
};

/** The task: a + b with 1-2 digit operands, answer boxed (`57+8=` → `\boxed{65}`). */
export const TASK = { name: "addition", options: { minDigits: 1, maxDigits: 2 }, trainExamples: 3000 };
/** Completion budget: the longest gold, `\boxed{198}` and its stop, is 11 characters. */
export const MAX_TOKENS = 12;

const num = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);

/** Sizes of the start and of each arm (env overrides are for tuning on other seeds: BENCH_EXGRPO_LR, _STEPS, _SFT_STEPS). */
export function sizes(smoke: boolean) {
  if (smoke) {
    return { sftSteps: 20, steps: 4, promptsPerStep: 4, groupSize: 4, lr: 1e-3, evalEvery: 2, evalExamples: 10 };
  }
  return {
    sftSteps: num("BENCH_EXGRPO_SFT_STEPS", 3000),
    steps: num("BENCH_EXGRPO_STEPS", 60),
    promptsPerStep: 8,
    groupSize: 8,
    lr: num("BENCH_EXGRPO_LR", 2e-4),
    evalEvery: 10,
    evalExamples: 100,
  };
}

/** One job: the SFT start of a seed, or one RL arm from it. */
export interface ExgrpoJob {
  kind: "sft" | "onpolicy" | "exgrpo" | "control";
  seed: number;
  /** This job's folder; the start's model is `<startDir>/model`. */
  dir: string;
  startDir: string;
  split: "tune" | "final";
  sizes: ReturnType<typeof sizes>;
}

/** What a job reports. */
export interface ExgrpoResult extends ExgrpoJob {
  /** Held-out pass@1 of the job's final model (the start for `sft`) at every decoding of bench/harness/decoding.ts. */
  pass: Record<string, number>;
  /** Held-out greedy pass@1 along the run (`eval.every`; step 0 is the start). */
  curve: { step: number; pass: number }[];
  /** Per step: fresh pass rate in training, and replay's share of the step's questions. */
  steps_: { step: number; correct: number; replayFrac: number; retired: number }[];
  /** The step after which replay started (exgrpo), or null. */
  replayStart: number | null;
  /** Mean CPU seconds of a training step, over steps without an evaluation (one engine thread). */
  stepCpuSeconds: number;
  trainSeconds: number;
}

/** The start's folder: `<workDir>/start-<seed>-<key>`, keyed by the settings it depends on and the source hash. */
export function startDirOf(workDir: string, seed: number, smoke: boolean, source: string): string {
  const settings = JSON.stringify({ MODEL, TASK, MAX_TOKENS, sft: sizes(smoke).sftSteps, smoke });
  const key = createHash("sha256").update(settings).update(source).digest("hex").slice(0, 10);
  return join(workDir, `start-${seed}-${key}`);
}
