/**
 * Algorithm presets (spec §10) as partial recipes: small compositions of the named pieces in config.ts. A recipe
 * names one with `preset:` and its own fields win over the preset's. Fields not listed keep the section-0 defaults.
 *
 * Departure: `dapo`'s soft overlong punishment (§8.4) is `algorithm.overlong`, a reward term the trainer adds.
 */
import type { TrainConfigInput } from "./config.js";

/** Preset names, as `preset:` in a recipe accepts them. */
export type PresetName = "grpo" | "drGrpo" | "dapo" | "reinforcePlusPlus" | "reinforcePlusPlusBaseline" | "rloo";

const ppo = (epsHigh = 0.2) => ({ type: "ppo" as const, epsLow: 0.2, epsHigh });

/** Each preset's fields (spec §10 table). */
export const PRESETS: Record<PresetName, Partial<TrainConfigInput>> = {
  // The card's sketch: z-score, token ratio without clip, k3 KL in the loss with β 0.04 (arXiv 2503.01785 §3.1).
  grpo: { algorithm: { advantage: { type: "zScore", std: "sample", eps: 1e-4 }, policy: { clip: { type: "none" } }, kl: { beta: 0.04, estimator: "k3" }, loss: { aggregation: "seqMeanTokenMean" } }, train: { groupSize: 8 } },
  // Dr. GRPO (arXiv 2503.20783 §3.2): no std division, constant normaliser B·L_max.
  drGrpo: { algorithm: { advantage: { type: "meanOnly" }, policy: { clip: ppo() }, kl: { beta: 0 }, loss: { aggregation: "constantNorm" } } },
  // DAPO (arXiv 2503.14476 §3.1-3.4): clip-higher, token mean, dynamic sampling, overlong shaping, G 16.
  dapo: {
    algorithm: { advantage: { type: "zScore" }, policy: { clip: ppo(0.28) }, kl: { beta: 0 }, loss: { aggregation: "tokenMean" }, zeroStd: { policy: "resample", maxGenBatches: 10 }, overlong: { enabled: true, bufferFrac: 0.2 } },
    train: { groupSize: 16 },
  },
  // REINFORCE++ (arXiv 2501.03262; verl reinforce_plus_plus): batch whitening, k1 KL in the reward with β 0.01.
  reinforcePlusPlus: { algorithm: { advantage: { type: "batchNorm", weighting: "token", gamma: 1 }, policy: { clip: ppo() }, kl: { beta: 0.01, estimator: "k1", placement: "reward" }, loss: { aggregation: "tokenMean" } } },
  // verl reinforce_plus_plus_baseline: group mean subtracted, then batch whitening.
  reinforcePlusPlusBaseline: { algorithm: { advantage: { type: "reinforcePlusPlusBaseline", weighting: "token", gamma: 1 }, policy: { clip: ppo() }, kl: { beta: 0.01, estimator: "k1", placement: "reward" }, loss: { aggregation: "tokenMean" } } },
  // RLOO (arXiv 2402.14740): leave-one-out baseline, β 0 as RLVR practice.
  rloo: { algorithm: { advantage: { type: "rloo" }, policy: { clip: ppo() }, kl: { beta: 0 }, loss: { aggregation: "tokenMean" } } },
};

/** Deep-merges `over` onto `base`; a union member whose `type` changes is replaced, not merged. Arrays replace. */
export function mergeRecipe(base: unknown, over: unknown): unknown {
  if (!isPlain(base) || !isPlain(over)) return over === undefined ? base : over;
  if ("type" in over && "type" in base && over.type !== base.type) return over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = k in base ? mergeRecipe(base[k], v) : v;
  return out;
}

function isPlain(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}
