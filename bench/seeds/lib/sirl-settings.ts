/**
 * Settings of the SIRL seed bench and the job records its orchestrator (bench/seeds/sirl.ts) and its jobs
 * (sirl-job.ts) exchange. The RL algorithm and task options come from recipes/sirl.yaml; these are the bench's sizes
 * and the three KL arms of the paper's comparison.
 */

/** The bench's sizes (smoke: the same jobs, tiny). */
export function SIRL(smoke: boolean) {
  return {
    /** The start's model: a char-level GPT (prompt ~280 + compact completion ~420 characters). */
    model: { arch: "gpt2" as const, dModel: 96, nLayers: 3, nHeads: 4, maxSeqLen: 768, tokenizer: "char" as const },
    trainExamples: smoke ? 20 : 4000,
    evalExamples: smoke ? 1 : 40,
    /** Samples per held-out question at T 1. */
    evalSamples: smoke ? 2 : 4,
    sft: smoke ? { steps: 4, batchSize: 2, lr: 2e-3 } : { steps: 1500, batchSize: 16, lr: 2e-3 },
    rl: smoke
      ? { steps: 2, promptsPerStep: 2, groupSize: 2, maxCompletionTokens: 48 }
      : { steps: 60, promptsPerStep: 8, groupSize: 8, maxCompletionTokens: 460 },
  };
}

/** The RL arms: the recipe (partial KL), full KL, no KL, and the partial-KL control with shuffled rewards. */
export const SIRL_ARMS = ["partial", "full", "none", "control"] as const;
export type SirlArm = (typeof SIRL_ARMS)[number];

/** The `algorithm.kl` override of an arm over recipes/sirl.yaml (partial KL on <model> and <code>). */
export function klOverride(arm: SirlArm): Record<string, unknown> {
  if (arm === "full") return { sections: null };
  if (arm === "none") return { beta: 0, sections: null };
  return {};
}

/** One job. */
export interface SirlJob {
  kind: "sft" | SirlArm;
  seed: number;
  dir: string;
  /** The start model folder (the RL arms). */
  start?: string;
  split: "tune" | "final";
  smoke: boolean;
}

/** What a job reports. */
export interface SirlResult extends SirlJob {
  /** Solver-correct rate (the objective term is 1) per decoding label. */
  correct: Record<string, number>;
  /** Share of completions whose program ran and was accepted by HiGHS, per decoding label. */
  runs: Record<string, number>;
  /** Share in the required format, per decoding label. */
  format: Record<string, number>;
  /** Mean training reward and mean k1 KL to the reference per RL step. */
  trainReward?: number[];
  trainKl?: number[];
  trainSeconds?: number;
  seconds: number;
}
