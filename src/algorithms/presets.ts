/**
 * Algorithm presets (algorithms spec §10): small compositions of the named pieces, exported as plain objects in the
 * shape of a recipe's `algorithm` section (plus the group size G where the source fixes it), so `AlgorithmSchema`
 * validates them and `preset:` in a recipe accepts exactly these names. Pieces are named by what they do; only
 * presets are named after papers (STYLE.md).
 *
 * Not here: `openRs` (a reward-term mix, set in the task),
 * and wd1 and d1, which need a masked-diffusion model and are recipes (recipes/wd1.yaml, recipes/d1.yaml, through
 * `algorithm.diffusion`). The pure pieces live in `off-policy.ts`, `wd1.ts` and `diffusion-loss.ts`.
 */
import type { Aggregation, ClipOptions, KlEstimator } from "./loss-options.js";
import { ADVANTAGE_DEFAULTS } from "./advantage-options.js";
import { ALGORITHM_DEFAULTS, PPO_CLIP_DEFAULTS, ReplaySchema } from "./schema.js";

/** The `algorithm` fields a preset sets, in the recipe's shape. */
export interface AlgorithmPresetFields {
  advantage:
    | { type: "zScore"; std: "sample" | "population"; eps: number }
    | { type: "meanOnly" }
    | { type: "rloo" }
    | { type: "batchNorm" | "reinforcePlusPlusBaseline"; weighting: "token" | "sequence"; gamma: number };
  policy: { ratio: "token" | "sequence"; clip: ClipOptions };
  kl: { beta: number; estimator: KlEstimator; placement: "loss" | "reward"; sections?: string[] | null };
  loss: { aggregation: Aggregation; entropyCoef: number };
  zeroStd?: { policy: "keep" | "drop" | "resample"; maxGenBatches: number };
  overlong?: { enabled: boolean; bufferFrac: number };
  replay?: ReturnType<typeof exgrpoReplay>;
}

/** A preset: its algorithm fields, the group size its source uses, and where it comes from. */
export interface AlgorithmPreset {
  algorithm: AlgorithmPresetFields;
  groupSize?: number;
  source: string;
}

// ---- named pieces ----

/** Group z-score with the spec's defaults (sample std, ε 1e-4). */
export const zScoreAdvantage = { type: "zScore" as const, std: ADVANTAGE_DEFAULTS.std, eps: ADVANTAGE_DEFAULTS.eps };
/** Mean-only baseline (no std division). */
export const meanOnlyAdvantage = { type: "meanOnly" } as const;
/** Leave-one-out baseline. */
export const rlooAdvantage = { type: "rloo" } as const;
/** Batch whitening per token, γ = 1 (REINFORCE++). */
export const batchNormAdvantage = {
  type: "batchNorm" as const,
  weighting: ADVANTAGE_DEFAULTS.weighting,
  gamma: ADVANTAGE_DEFAULTS.gamma,
};
/** Group mean, then batch whitening (REINFORCE++-baseline). */
export const batchNormBaselineAdvantage = { ...batchNormAdvantage, type: "reinforcePlusPlusBaseline" as const };
/** Token ratio without clipping (exact at μ = 1; the card's sketch). */
export const noClip = { ratio: "token", clip: { type: "none" } } as const;
/** Token ratio with PPO clipping at 1 − ε_low and 1 + ε_high. */
export const clipRatio = (epsLow = PPO_CLIP_DEFAULTS.epsLow, epsHigh = epsLow) => ({
  ratio: "token" as const,
  clip: { type: "ppo" as const, epsLow, epsHigh, dualClip: PPO_CLIP_DEFAULTS.dualClip },
});
/** k3 KL in the loss. */
export const klK3 = (beta: number) => ({ beta, estimator: "k3" as const, placement: "loss" as const });
/** k1 KL subtracted from the reward. */
export const klK1InReward = (beta: number, sections: string[] | null = null) => ({
  beta,
  estimator: "k1" as const,
  placement: "reward" as const,
  sections,
});
/** No KL and no reference model. */
export const noKl = { beta: 0, estimator: "k3", placement: "loss" } as const;
/** ExGRPO's experience replay with the spec's §6 settings (ρ 0.5, start above pass rate 0.35, f(w) = w/(w + 0.1)). */
export const exgrpoReplay = () =>
  ReplaySchema.parse({ type: "exgrpo" }) as Extract<ReturnType<typeof ReplaySchema.parse>, { type: "exgrpo" }>;
/** Aggregation mode with no entropy bonus. */
export const aggregate = (aggregation: Aggregation) => ({ aggregation, entropyCoef: 0 });

/** The presets of spec §10 that the built-in trainer runs. */
export const PRESETS = {
  grpo: {
    // The spec's defaults are this preset (a bare config is grpo): its β and aggregation are read from the schema.
    algorithm: {
      advantage: zScoreAdvantage,
      policy: noClip,
      kl: klK3(ALGORITHM_DEFAULTS.kl.beta),
      loss: aggregate(ALGORITHM_DEFAULTS.loss.aggregation),
    },
    groupSize: 8,
    source: "concept card sketch; arXiv 2503.01785 §3.1 eq. 4; arXiv 2504.06958 §3.1; GRPO arXiv 2402.03300 §4.1",
  },
  drGrpo: {
    algorithm: { advantage: meanOnlyAdvantage, policy: clipRatio(0.2), kl: noKl, loss: aggregate("constantNorm") },
    source: "Dr. GRPO arXiv 2503.20783 §3.2; TRL loss_type dr_grpo",
  },
  dapo: {
    algorithm: {
      advantage: zScoreAdvantage,
      policy: clipRatio(0.2, 0.28),
      kl: noKl,
      loss: aggregate("tokenMean"),
      zeroStd: { policy: "resample", maxGenBatches: 10 },
      overlong: { enabled: true, bufferFrac: 0.2 },
    },
    groupSize: 16,
    source: "DAPO arXiv 2503.14476 §3.1-3.4; verl DAPO recipe",
  },
  reinforcePlusPlus: {
    algorithm: {
      advantage: batchNormAdvantage,
      policy: clipRatio(0.2),
      kl: klK1InReward(0.01),
      loss: aggregate("tokenMean"),
    },
    source: "REINFORCE++ arXiv 2501.03262; verl reinforce_plus_plus; OpenRLHF reinforce (init_kl_coef 0.01)",
  },
  reinforcePlusPlusBaseline: {
    algorithm: {
      advantage: batchNormBaselineAdvantage,
      policy: clipRatio(0.2),
      kl: klK1InReward(0.01),
      loss: aggregate("tokenMean"),
    },
    source: "verl reinforce_plus_plus_baseline; OpenRLHF reinforce_baseline",
  },
  rloo: {
    algorithm: { advantage: rlooAdvantage, policy: clipRatio(0.2), kl: noKl, loss: aggregate("tokenMean") },
    source: "RLOO arXiv 2402.14740; verl rloo; TRL RLOOTrainer (β 0 as RLVR practice)",
  },
  exgrpo: {
    algorithm: {
      advantage: meanOnlyAdvantage,
      policy: clipRatio(0.2),
      kl: noKl,
      loss: aggregate("tokenMean"),
      replay: exgrpoReplay(),
    },
    source: "ExGRPO arXiv 2510.02245 §3.1, §4.1, §4.2, app. E (tokenMean and maxPerQuestion 4 are our choices)",
  },
  sirl: {
    algorithm: {
      advantage: batchNormAdvantage,
      policy: clipRatio(0.2, 0.3),
      kl: klK1InReward(0.0005, ["model", "python"]),
      loss: aggregate("tokenMean"),
    },
    groupSize: 16,
    source:
      "SIRL arXiv 2505.11792 eq. 4-5, §3.2; Cardinal-Operations/SIRL run_partialKL.sh (kl_coef 0.0005, rollout.n 16)",
  },
} satisfies Record<string, AlgorithmPreset>;

/** Preset names. */
export type AlgorithmPresetName = keyof typeof PRESETS;
