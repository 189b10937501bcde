/**
 * Options of the policy loss (algorithms spec §2, §3) with the spec's defaults (a bare config is the card's
 * sketch: token ratio, no clip, k3 KL with β 0.04 in the loss, seqMeanTokenMean, no entropy bonus). Field names
 * match the trainer's recipe schema (`algorithm.policy`, `algorithm.kl`, `algorithm.loss`).
 */
import { ALGORITHM_DEFAULTS, PPO_CLIP_DEFAULTS } from "./schema.js";

/** KL estimators of §2.3. */
export type KlEstimator = "k1" | "k2" | "k3" | "k3st";
/** Aggregation modes of §3. */
export type Aggregation = "seqMeanTokenMean" | "tokenMean" | "seqMeanTokenSum" | "constantNorm";
/** Ratio clipping of §2.2. */
export type ClipOptions = { type: "none" } | { type: "ppo"; epsLow: number; epsHigh: number; dualClip: number | null };

/** Every knob of the policy loss. */
export interface LossOptions {
  /** "token" (default) or "sequence" (GSPO; with an aggregation other than seqMeanTokenMean it warns, as TRL does). */
  ratio: "token" | "sequence";
  /** "none" (card sketch, default) or PPO with separate ε_low/ε_high and optional dual clip c. */
  clip: ClipOptions;
  /** β of the KL term in the loss (default 0.04); 0 needs no reference log-probs. */
  beta: number;
  /** KL estimator (default "k3"). */
  estimator: KlEstimator;
  /**
   * Multiply each token's KL term by the importance ratio ρ (the sequence ratio under GSPO), differentiated through
   * ρ: TRL `use_bias_correction_kl` (its default; after DeepSeek-V3.2), which makes the k3 gradient the
   * unbiased reverse-KL gradient. Default false: the card sketch, the GRPO paper and verl's `use_kl_loss` use the
   * plain term, and every existing recipe keeps its numbers (docs/algorithms.md, "TRL and verl option mapping").
   */
  klImportanceWeight?: boolean;
  /** How token losses become one scalar (default "seqMeanTokenMean"). */
  aggregation: Aggregation;
  /** α of the entropy bonus (default 0). */
  entropyCoef: number;
  /** L_max, required by constantNorm. */
  maxCompletionTokens?: number;
  /**
   * Normaliser of the whole optimizer batch when this call sees one micro-batch of it (§3.1): sequences B and
   * masked tokens N_tok. Default: computed from this call's mask.
   */
  normalizer?: { sequences: number; tokens: number };
}

/** The spec's defaults, read from the recipe schema (`schema.ts`). */
export const LOSS_DEFAULTS: Readonly<LossOptions> = {
  ratio: ALGORITHM_DEFAULTS.policy.ratio,
  clip: ALGORITHM_DEFAULTS.policy.clip,
  beta: ALGORITHM_DEFAULTS.kl.beta,
  estimator: ALGORITHM_DEFAULTS.kl.estimator,
  aggregation: ALGORITHM_DEFAULTS.loss.aggregation,
  entropyCoef: ALGORITHM_DEFAULTS.loss.entropyCoef,
  klImportanceWeight: false,
};

/** PPO clip with the spec's defaults filled in (ε 0.2/0.2, no dual clip). */
export function ppoClip(
  epsLow = PPO_CLIP_DEFAULTS.epsLow,
  epsHigh = epsLow,
  dualClip = PPO_CLIP_DEFAULTS.dualClip,
): ClipOptions {
  return { type: "ppo", epsLow, epsHigh, dualClip };
}

/**
 * Fills defaults and validates (§2.2 ranges, §3 constantNorm rule); errors name the field. GSPO with any aggregation
 * is valid (`lossOptionWarnings` says why it may not be meant).
 */
export function resolveLossOptions(options: Partial<LossOptions>): LossOptions {
  const o: LossOptions = {
    ...LOSS_DEFAULTS,
    ...(Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<LossOptions>),
  };
  const bad = (field: string, msg: string) => new RangeError(`loss option ${field}: ${msg}`);
  if (!["token", "sequence"].includes(o.ratio))
    throw bad("ratio", `${JSON.stringify(o.ratio)}; allowed: token, sequence`);
  if (!["k1", "k2", "k3", "k3st"].includes(o.estimator))
    throw bad("estimator", `${JSON.stringify(o.estimator)}; allowed: k1, k2, k3, k3st`);
  if (!["seqMeanTokenMean", "tokenMean", "seqMeanTokenSum", "constantNorm"].includes(o.aggregation)) {
    throw bad(
      "aggregation",
      `${JSON.stringify(o.aggregation)}; allowed: seqMeanTokenMean, tokenMean, seqMeanTokenSum, constantNorm`,
    );
  }
  if (!(o.beta >= 0)) throw bad("beta", `${o.beta}; must be >= 0`);
  if (!(o.entropyCoef >= 0)) throw bad("entropyCoef", `${o.entropyCoef}; must be >= 0`);
  if (o.clip.type === "ppo") {
    const { epsLow, epsHigh, dualClip } = o.clip;
    if (!(epsLow >= 0 && epsLow < 1)) throw bad("clip.epsLow", `${epsLow}; must be in [0, 1)`);
    if (!(epsHigh > 0)) throw bad("clip.epsHigh", `${epsHigh}; must be > 0`);
    if (dualClip !== null && !(dualClip > 1 + epsHigh))
      throw bad("clip.dualClip", `${dualClip}; must be > 1 + epsHigh = ${1 + epsHigh}`);
  } else if (o.clip.type !== "none") {
    throw bad("clip.type", `${JSON.stringify((o.clip as { type: unknown }).type)}; allowed: none, ppo`);
  }
  if (typeof o.klImportanceWeight !== "boolean") {
    throw bad("klImportanceWeight", `${JSON.stringify(o.klImportanceWeight)}; must be a boolean`);
  }
  if (o.aggregation === "constantNorm" && !(o.maxCompletionTokens! > 0))
    throw bad("maxCompletionTokens", "constantNorm needs maxCompletionTokens (L_max) > 0");
  return o;
}

/**
 * Valid but probably unintended combinations, one message each (the trainer prints them). GSPO's sequence ratio
 * with a token-sum aggregation weights each sequence by its length (TRL warns the same for bnpo, dr_grpo, dapo).
 */
export function lossOptionWarnings(o: LossOptions): string[] {
  const w: string[] = [];
  if (o.ratio === "sequence" && o.aggregation !== "seqMeanTokenMean") {
    w.push(
      `ratio "sequence" (GSPO) with aggregation ${o.aggregation} sums per-token terms, so each sequence weighs ` +
        "by its length instead of once; GSPO's paper uses seqMeanTokenMean (TRL loss_type grpo)",
    );
  }
  return w;
}
