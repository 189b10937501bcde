/**
 * Settings of the RobotxR1 seed system (bench/seeds/robotxr1.ts): the task (mpc-car with held-out paraphrases on a
 * track not trained on), the model, the three training stages, and the recipe each RL job runs. Every number is
 * quoted in docs/seed-systems/robotxr1.md with the figures it gave; the smoke settings only check the plumbing.
 *
 * Departure from the paper (RobotxR1: Qwen2.5 1.5B/3B, LoRA SFT on distilled answers, then LoRA GRPO in the
 * closed loop): no pretrained LLM runs on 2 CPU cores, so the "base" is a small character-level GPT given a short
 * full-weight SFT on the train split (one base for every seed, as the paper's seeds share one pretrained model);
 * the recipe's two stages, LoRA SFT and LoRA GRPO, then run on it per seed.
 */
import { resolveConfig } from "../../../src/trainer/recipe.js";
import type { TrainConfig } from "../../../src/trainer/config.js";

/** The task: prompts without the parameter table, the last 6 of 22 paraphrases per behaviour held out for test. */
export const TASK_OPTIONS = { heldOutParaphrases: 6, prompt: "brief", trainTrack: "circle", testTrack: "F" } as const;

/**
 * The policy's shape (0.30M parameters). Llama-shaped (RoPE): with GPT-2's learned absolute positions the
 * answer starts at a different position in every prompt, and after 300 SFT steps the base still stuttered
 * ("<reasoninini</reasong>", 0% success, format 0.08 on the test split).
 */
export const MODEL = {
  type: "new" as const,
  arch: "llama" as const,
  dModel: 96,
  nLayers: 2,
  nHeads: 4,
  maxSeqLen: 480,
  tokenizer: "char" as const,
};

/** LoRA on every projection of attention and MLP. */
export const LORA = {
  rank: 8,
  alpha: 16,
  dropout: 0,
  targets: ["qProj", "kProj", "vProj", "oProj", "upProj", "downProj"],
};

/** One size of the whole system. */
export interface RobotSettings {
  /** Train examples (distinct prompts cycle: 4 × 16 + 8 speeds × 16 = 192 on the circle). */
  trainExamples: number;
  /** Held-out questions (the F track, held-out paraphrases: 12 behaviours × 6 = 72 distinct), samples per question. */
  evalExamples: number;
  evalSamples: number;
  /** Completion budget (the longest brief gold answer is 163 characters, the longest brief prompt 258). */
  maxTokens: number;
  /** The shared base: full-weight SFT from scratch, seeded with `seed` (not a reported seed). */
  base: { seed: number; steps: number; batchSize: number; lr: number };
  /** The recipe's SFT stage, on a LoRA adapter merged into the start. */
  sft: { steps: number; batchSize: number; lr: number };
  /** The recipe's GRPO stage, on a fresh LoRA adapter. */
  rl: { steps: number; promptsPerStep: number; groupSize: number; lr: number; temperature: number; beta: number };
}

/** The reported run. */
export const FULL: RobotSettings = {
  trainExamples: 2000,
  evalExamples: 72,
  evalSamples: 2,
  maxTokens: 192,
  base: { seed: 1000, steps: 300, batchSize: 8, lr: 3e-3 },
  sft: { steps: 30, batchSize: 8, lr: 3e-3 },
  rl: { steps: 24, promptsPerStep: 4, groupSize: 8, lr: 2e-3, temperature: 1, beta: 0 },
};

/** BENCH_SEEDS_SMOKE=1: the same jobs at a size that only checks the plumbing. */
export const SMOKE: RobotSettings = {
  trainExamples: 40,
  evalExamples: 4,
  evalSamples: 1,
  maxTokens: 24,
  base: { seed: 1000, steps: 2, batchSize: 2, lr: 3e-3 },
  sft: { steps: 2, batchSize: 2, lr: 3e-3 },
  rl: { steps: 2, promptsPerStep: 2, groupSize: 2, lr: 2e-3, temperature: 1, beta: 0 },
};

/** The recipe of one stage-2/3 job: LoRA SFT from the base (`sft.enabled`), then LoRA GRPO, as recipes/robotxr1.yaml. */
export function robotRecipe(
  s: RobotSettings,
  o: { name: string; outDir: string; seed: number; base: string },
): TrainConfig {
  return resolveConfig({
    name: o.name,
    outDir: o.outDir,
    seed: o.seed,
    preset: "grpo",
    model: { type: "checkpoint", path: o.base },
    lora: LORA,
    task: { name: "mpc-car", options: TASK_OPTIONS, trainExamples: s.trainExamples, testExamples: s.evalExamples },
    sft: { enabled: true, ...s.sft },
    algorithm: { kl: { beta: s.rl.beta } },
    sampler: { type: "builtin", temperature: s.rl.temperature },
    train: {
      steps: s.rl.steps,
      promptsPerStep: s.rl.promptsPerStep,
      groupSize: s.rl.groupSize,
      maxCompletionTokens: s.maxTokens,
      lr: s.rl.lr,
      microBatchSize: 16,
    },
    eval: { every: 0, atStart: false, examples: s.evalExamples, temperature: 0, k: [1] },
    checkpoint: { every: 0, keepBest: false, keepLast: 1 },
    log: { sampleGroups: 1, progress: false },
  });
}
