/**
 * TRL's GRPOTrainer options (huggingface/trl 1.13, `trl/trainer/grpo_config.py`) as rlvr advantage and loss options.
 * test/algorithms/trl-parity.test.ts checks this mapping against fixtures computed by TRL's own code
 * (scripts/make-trl-fixtures.py); docs/algorithms.md, "TRL and verl option mapping", is the table for readers.
 *
 * TRL's `loss_type` mixes independent choices under paper names (STYLE.md); here each is taken apart:
 * - grpo, bnpo, dr_grpo, dapo all use the PPO clip with ε_low = `epsilon`, ε_high = `epsilon_high` (default
 *   `epsilon`) and δ as the dual clip, and differ only in the aggregation: grpo seqMeanTokenMean, bnpo tokenMean
 *   (over TRL's micro-batch), dr_grpo constantNorm with L_max = `max_completion_length`, dapo tokenMean over the
 *   whole generation batch (rlvr's tokenMean over the optimizer batch).
 * - `scale_rewards`: group = zScore, batch = zScore with stdScope "batch", none = meanOnly.
 * - β > 0 uses k3 in the loss; `use_bias_correction_kl` (TRL default true) is klImportanceWeight.
 * Not offered: cispo, sapo, luspo, vespo (other surrogates), multi_objective_aggregation (the trainer's
 * rewardAggregate), vLLM importance sampling (off-policy.ts), top_entropy_quantile.
 */
import type { AdvantageOptions } from "./advantage-options.js";
import { lossOptionWarnings, resolveLossOptions, type Aggregation, type LossOptions } from "./loss-options.js";

/** The GRPOConfig fields that decide the advantages and the loss, named as TRL names them. */
export interface TrlGrpoOptions {
  loss_type?: "grpo" | "bnpo" | "dr_grpo" | "dapo";
  scale_rewards?: "group" | "batch" | "none" | boolean;
  importance_sampling_level?: "token" | "sequence";
  beta?: number;
  use_bias_correction_kl?: boolean;
  epsilon?: number;
  epsilon_high?: number | null;
  delta?: number | null;
  num_iterations?: number;
  max_completion_length?: number;
}

/** TRL 1.13's defaults for those fields. */
export const TRL_GRPO_DEFAULTS: Readonly<Required<TrlGrpoOptions>> = {
  loss_type: "dapo",
  scale_rewards: "group",
  importance_sampling_level: "token",
  beta: 0,
  use_bias_correction_kl: true,
  epsilon: 0.2,
  epsilon_high: null,
  delta: null,
  num_iterations: 1,
  max_completion_length: 512,
};

/** rlvr's settings for one TRL configuration. */
export interface FromTrl {
  advantage: Partial<AdvantageOptions>;
  loss: Partial<LossOptions>;
  /** TRL `num_iterations` = rlvr `train.innerIterations` (passes over each rollout batch). */
  innerIterations: number;
  /** What TRL would warn about, worded for rlvr (empty when nothing). */
  warnings: string[];
}

const AGGREGATION: Record<NonNullable<TrlGrpoOptions["loss_type"]>, Aggregation> = {
  grpo: "seqMeanTokenMean",
  bnpo: "tokenMean",
  dr_grpo: "constantNorm",
  dapo: "tokenMean",
};

/** Maps TRL GRPOConfig fields (TRL defaults for the rest) to rlvr options; unknown values throw naming the field. */
export function fromTrlGrpo(options: TrlGrpoOptions = {}): FromTrl {
  const t = { ...TRL_GRPO_DEFAULTS, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) };
  const aggregation = AGGREGATION[t.loss_type];
  if (!aggregation) {
    badField("loss_type", t.loss_type, "grpo, bnpo, dr_grpo, dapo");
  }
  const scale = t.scale_rewards === true ? "group" : t.scale_rewards === false ? "none" : t.scale_rewards;
  const advantage: Partial<AdvantageOptions> =
    scale === "group"
      ? { type: "zScore", std: "sample", eps: 1e-4, stdScope: "group" }
      : scale === "batch"
        ? { type: "zScore", std: "sample", eps: 1e-4, stdScope: "batch" }
        : scale === "none"
          ? { type: "meanOnly" }
          : badField("scale_rewards", scale, "group, batch, none");
  if (t.importance_sampling_level !== "token" && t.importance_sampling_level !== "sequence") {
    badField("importance_sampling_level", t.importance_sampling_level, "token, sequence");
  }
  const loss: Partial<LossOptions> = {
    ratio: t.importance_sampling_level,
    clip: { type: "ppo", epsLow: t.epsilon, epsHigh: t.epsilon_high ?? t.epsilon, dualClip: t.delta ?? null },
    beta: t.beta,
    estimator: "k3",
    klImportanceWeight: t.use_bias_correction_kl,
    aggregation,
    entropyCoef: 0,
    ...(aggregation === "constantNorm" ? { maxCompletionTokens: t.max_completion_length } : {}),
  };
  return { advantage, loss, innerIterations: t.num_iterations, warnings: lossOptionWarnings(resolveLossOptions(loss)) };
}

/**
 * The normaliser rlvr needs to reproduce one TRL micro-batch of a gradient-accumulation window exactly: TRL divides
 * grpo/dr_grpo by its micro-batch's sequences × accumulation steps, bnpo by the micro-batch's tokens × accumulation
 * steps, and dapo by the tokens of the whole generation batch (`num_items_in_batch`).
 */
export function trlMicroBatchNormalizer(
  lossType: NonNullable<TrlGrpoOptions["loss_type"]>,
  microMask: readonly (readonly number[])[],
  accumulationSteps: number,
  generationBatchTokens: number,
): { sequences: number; tokens: number } {
  const tokens = microMask.reduce((a, row) => a + row.reduce((b, m) => b + m, 0), 0);
  const sequences = microMask.length * accumulationSteps;
  if (lossType === "dapo") return { sequences, tokens: generationBatchTokens };
  return { sequences, tokens: tokens * accumulationSteps };
}

function badField(field: string, value: unknown, allowed: string): never {
  throw new RangeError(`TRL ${field} ${JSON.stringify(value)} has no rlvr equivalent; allowed: ${allowed}`);
}
