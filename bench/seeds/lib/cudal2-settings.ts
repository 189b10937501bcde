/**
 * Settings of the CUDA-L2 seed bench and the job records its orchestrator (bench/seeds/cudal2.ts) and its jobs
 * (cudal2-job.ts) exchange. The RL algorithm, task options and model shape come from recipes/cuda-l2.yaml; these are
 * the bench's sizes.
 */

/** The bench's sizes (smoke: the same jobs, tiny). The start's cache key covers `model`, `sftShapes` and `sft`. */
export function CUDAL2(smoke: boolean) {
  return {
    /** The start's model (a char-level GPT; the recipe's shape). */
    model: { arch: "gpt2" as const, dModel: 64, nLayers: 2, nHeads: 4, maxSeqLen: 576, tokenizer: "char" as const },
    /** Distinct training shapes the start is taught on. */
    sftShapes: smoke ? 4 : 12,
    evalShapes: smoke ? 2 : 4,
    /** Samples per held-out shape at T 1. */
    evalSamples: smoke ? 2 : 2,
    sft: smoke
      ? { examples: 40, steps: 5, batchSize: 4, lr: 2e-3 }
      : { examples: 400, steps: 600, batchSize: 8, lr: 2e-3 },
    /**
     * The RL arms' size. `shapes`: distinct training shapes (the first of the start's), few, so that every (kernel,
     * shape) pair is timed once and then served by the reward's memo (64 entries): one timing takes 3 s on a quiet
     * core and 40 s at load 20.
     */
    rl: smoke
      ? { shapes: 2, steps: 2, promptsPerStep: 2, groupSize: 2 }
      : { shapes: 4, steps: 20, promptsPerStep: 2, groupSize: 8 },
  };
}

/** One job. */
export interface Cudal2Job {
  kind: "sft" | "rl" | "control";
  seed: number;
  /** The seed's folder (shared by its jobs). */
  dir: string;
  /** The start model folder (rl, control). */
  start?: string;
  split: "tune" | "final";
  smoke: boolean;
}

/** What a job reports. */
export interface Cudal2Result extends Cudal2Job {
  /** Mean counted speed-up (S, or 0 on a failed gate) per decoding label. */
  speedup: Record<string, number>;
  /** Gate-pass rate per decoding label. */
  correct: Record<string, number>;
  /** Share of each taught kernel per decoding label. */
  mix: Record<string, Record<string, number>>;
  /** Mean training reward per step (rl, control). */
  trainReward?: number[];
  trainSeconds?: number;
  /** rl: rewarded training kernels rerun with fresh inputs, and how many the rerun rejected. */
  audit?: { rerun: number; rejected: number };
  seconds: number;
}
