/**
 * Options of the advantage estimators (algorithms spec §1, §1.6, §1.7, §2.4) with the spec's defaults. The field
 * names match the trainer's recipe schema (`algorithm.advantage`, `algorithm.zeroStd.policy`, `algorithm.nulls`).
 */
import { ALGORITHM_DEFAULTS, BATCH_ADVANTAGE_DEFAULTS } from "./schema.js";

/** Estimator names (§1.1–1.5). */
export type AdvantageType = "zScore" | "meanOnly" | "batchNorm" | "rloo" | "reinforcePlusPlusBaseline";

/** KL placed in the reward (§2.4): β and k1(i,t) = lp_old − lp_ref per model token, already multiplied by m·s. */
export interface KlInReward {
  beta: number;
  /** k1[g][i][t]. */
  k1: readonly (readonly (readonly number[])[])[];
}

/** Every knob of `computeAdvantages`. */
export interface AdvantageOptions {
  /** Estimator (default "zScore"). */
  type: AdvantageType;
  /** zScore: "sample" (Bessel, default; TRL, verl) or "population". */
  std: "sample" | "population";
  /** zScore: ε added to σ_g outside the square root (default 1e-4, TRL and the card papers' code). */
  eps: number;
  /**
   * zScore: the σ divided out is each group's ("group", default) or the whole batch's over every scored completion
   * ("batch", TRL `scale_rewards="batch"`); the group mean is subtracted either way (§1.1).
   */
  stdScope?: "group" | "batch";
  /** Batch estimators: whitening weights per "token" (default, verl) or per "sequence". */
  weighting: "token" | "sequence";
  /** Batch estimators: discount of the per-token returns (default 1). */
  gamma: number;
  /** Zero-std groups (group estimators): "keep" (A = 0, default), "drop", or "resample" (drop; the trainer refills). */
  zeroStd: "keep" | "drop" | "resample";
  /** "exclude" (default) or "error" at the first null reward. */
  onNull: "exclude" | "error";
  /** Stop when more than this share of the step's completions are null (default 0.5). */
  maxNullFrac: number;
  /** Model tokens with m = 1 per completion, lengths[g][i]; needed by batch estimators with token weighting. */
  lengths?: readonly (readonly number[])[];
  /**
   * KL in the reward (§2.4): group estimators subtract β Σ_t k1; batch estimators add −β k1 per token and return
   * `tokenAdvantages[g][i][t]` aligned with `k1[g][i]` (one entry per completion token).
   */
  klInReward?: KlInReward;
  /** m(i,t) per completion token, aligned with `klInReward.k1`: the whitening weights of the per-token form (default 1). */
  tokenMasks?: readonly (readonly (readonly number[])[])[];
  /** Named in error messages (task, step, checker). */
  context?: string;
}

/** The spec's defaults (a bare config is the grpo preset), read from the recipe schema (`schema.ts`). */
export const ADVANTAGE_DEFAULTS: Readonly<Omit<AdvantageOptions, "lengths" | "klInReward" | "tokenMasks" | "context">> =
  {
    ...(ALGORITHM_DEFAULTS.advantage as { type: "zScore"; std: "sample" | "population"; eps: number }),
    weighting: BATCH_ADVANTAGE_DEFAULTS.weighting,
    gamma: BATCH_ADVANTAGE_DEFAULTS.gamma,
    zeroStd: ALGORITHM_DEFAULTS.zeroStd.policy,
    onNull: ALGORITHM_DEFAULTS.nulls.onNull,
    maxNullFrac: ALGORITHM_DEFAULTS.nulls.maxNullFrac,
    stdScope: "group",
  };

const TYPES: readonly AdvantageType[] = ["zScore", "meanOnly", "batchNorm", "rloo", "reinforcePlusPlusBaseline"];

/** Fills defaults and checks each field, naming it and the allowed values on error. */
export function resolveAdvantageOptions(options: Partial<AdvantageOptions>): AdvantageOptions {
  const o = { ...ADVANTAGE_DEFAULTS, ...dropUndefined(options) } as AdvantageOptions;
  const oneOf = (field: string, v: unknown, allowed: readonly unknown[]) => {
    if (!allowed.includes(v))
      throw new RangeError(`advantage option ${field} = ${JSON.stringify(v)}; allowed: ${allowed.join(", ")}`);
  };
  oneOf("type", o.type, TYPES);
  oneOf("std", o.std, ["sample", "population"]);
  oneOf("stdScope", o.stdScope, ["group", "batch"]);
  oneOf("weighting", o.weighting, ["token", "sequence"]);
  oneOf("zeroStd", o.zeroStd, ["keep", "drop", "resample"]);
  oneOf("onNull", o.onNull, ["exclude", "error"]);
  if (!(o.eps >= 0)) throw new RangeError(`advantage option eps = ${o.eps}; must be >= 0`);
  if (!(o.gamma >= 0 && o.gamma <= 1)) throw new RangeError(`advantage option gamma = ${o.gamma}; must be in [0, 1]`);
  if (!(o.maxNullFrac >= 0 && o.maxNullFrac <= 1))
    throw new RangeError(`advantage option maxNullFrac = ${o.maxNullFrac}; must be in [0, 1]`);
  return o;
}

function dropUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
