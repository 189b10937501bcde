/**
 * Off-policy pieces as pure functions (algorithms spec §5, §6, §7): the train/inference importance-sampling
 * corrections and their recipe section (`algorithm.offPolicy`: where lp_old comes from, w_IS, staleness), ExGRPO's
 * shaped ratio for replayed samples, and wd1's group weights. The corrections serve a remote sampler
 * (docs/remote-sampler.md; the built-in sampler's log-probs are exact, so it needs none); wd1's are read through
 * `algorithm.diffusion` (wd1.ts). All are exercised by the spec's §11.5 fixtures.
 *
 * Departure from §5: with asynchronous generation (`maxStaleness` > 0), `recompute` computes lp_old with the
 * trainer's weights at the start of the update, not with the older weights that sampled the batch (which rlvr does
 * not keep). w_IS = π_trainer / π_inference then corrects staleness and numerical mismatch together, as AReaL's
 * decoupled PPO does; with `maxStaleness` 0 the two readings are the same weights.
 */
import { z } from "zod";

/** `algorithm.offPolicy` (spec §5): names follow the spec; docs/remote-sampler.md maps them to verl and TRL. */
export const OffPolicySchema = z.strictObject({
  oldLogprobs: z
    .enum(["auto", "sampler", "recompute"])
    .default("auto")
    .describe(
      "lp_old: the sampler's log-probs, or recomputed by the trainer before the update (then w_IS corrects the " +
        "sampler/trainer mismatch); auto = sampler for the built-in sampler, recompute for a remote one (§5)",
    ),
  correction: z
    .enum(["tokenTruncate", "tokenMask", "sequenceTruncate", "sequenceMask", "none"])
    .default("tokenTruncate")
    .describe(
      "w_IS with recomputed lp_old (verl rollout_is / TRL vllm_importance_sampling_mode): min(e^δ, cap) per token, " +
        "e^δ masked outside [capMin, capMax], the same on the sequence's exp(Σδ), or none (§5)",
    ),
  cap: z.number().gt(1).default(2).describe("C of the truncate modes (verl rollout_is_threshold, TRL ..._cap)"),
  capMin: z.number().min(0).default(0.5).describe("C_min of the mask modes: e^δ below it gives w_IS = 0"),
  capMax: z.number().gt(1).default(2).describe("C_max of the mask modes: e^δ above it gives w_IS = 0"),
  maxStaleness: z
    .number()
    .int()
    .min(0)
    .max(1)
    .default(0)
    .describe(
      "0: synchronous; 1: a remote sampler generates the next step's batch while this one trains, and rollouts " +
        "more than this many policy versions behind the trainer are dropped (mismatch/staleDroppedFrac)",
    ),
});

/** The `algorithm.offPolicy` section, defaults filled in. */
export type OffPolicyConfig = z.infer<typeof OffPolicySchema>;

/** Where lp_old comes from for this sampler: `auto` is the sampler's own for the built-in one, else recomputed. */
export function resolveOldLogprobs(c: Pick<OffPolicyConfig, "oldLogprobs">, remote: boolean): "sampler" | "recompute" {
  if (c.oldLogprobs !== "auto") return c.oldLogprobs;
  return remote ? "recompute" : "sampler";
}

/** Correction modes of §5. */
export type IsCorrection = "tokenTruncate" | "tokenMask" | "sequenceTruncate" | "sequenceMask" | "none";

/**
 * w_IS per token for one completion from δ(t) = lp_old − lp_inf (stop-gradient; multiplies pg only):
 * tokenTruncate min(e^δ, C); tokenMask e^δ inside [C_min, C_max] else 0; sequenceTruncate min(exp(Σ m δ), C) on
 * every token; sequenceMask exp(Σ m δ) inside [C_min, C_max] else 0; none 1.
 */
export function isWeights(
  delta: readonly number[],
  mode: IsCorrection,
  opts: { cap?: number; capMin?: number; capMax?: number; mask?: readonly number[] } = {},
): number[] {
  const C = opts.cap ?? 2; // the spec's defaults (§5), as in OffPolicySchema
  const lo = opts.capMin ?? 0.5;
  const hi = opts.capMax ?? 2;
  const m = (t: number) => opts.mask?.[t] ?? 1;
  switch (mode) {
    case "none":
      return delta.map(() => 1);
    case "tokenTruncate":
      return delta.map((d) => Math.min(Math.exp(d), C));
    case "tokenMask":
      return delta.map((d) => (Math.exp(d) >= lo && Math.exp(d) <= hi ? Math.exp(d) : 0));
    case "sequenceTruncate":
    case "sequenceMask": {
      const w = Math.exp(delta.reduce((a, d, t) => a + m(t) * d, 0));
      const v = mode === "sequenceTruncate" ? Math.min(w, C) : w >= lo && w <= hi ? w : 0;
      return delta.map(() => v);
    }
  }
}

/**
 * ExGRPO's shaped ratio for replayed tokens (§6.8): f(w) = w/(w + 0.1) = sigmoid(log w − log 0.1), and
 * ∂f/∂lp = 0.1·w/(w + 0.1)².
 */
export function exgrpoShape(w: number): { value: number; dLogp: number } {
  return { value: w / (w + 0.1), dLogp: (0.1 * w) / (w + 0.1) ** 2 };
}

/**
 * wd1 group weights and loss (§7): w⁺ = softmax(ψA), w⁻ = softmax(−ψA), L_g = −Σ (w⁺ − w⁻)·ℓ_i,
 * ∂L_g/∂ℓ_i = −(w⁺_i − w⁻_i).
 * `ell` holds each completion's summed masked log-likelihood estimate.
 */
export function wd1GroupLoss(
  advantages: readonly number[],
  ell: readonly number[],
  psi = 1,
): { wPlus: number[]; wMinus: number[]; loss: number; grad: number[] } {
  const softmax = (xs: number[]) => {
    const mx = Math.max(...xs);
    const e = xs.map((x) => Math.exp(x - mx));
    const s = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / s);
  };
  const wPlus = softmax(advantages.map((a) => psi * a));
  const wMinus = softmax(advantages.map((a) => -psi * a));
  const grad = wPlus.map((p, i) => -(p - wMinus[i]!));
  return { wPlus, wMinus, loss: grad.reduce((a, g, i) => a + g * ell[i]!, 0), grad };
}

/** w_IS of a batch and the `mismatch/*` metrics of §9. */
export interface Correction {
  /** w_IS per token, one row per completion (1 where the row has no inference log-probs). */
  weights: number[][];
  metrics: Record<string, number>;
}

/**
 * w_IS for a batch (§5): δ = lp_old − lp_inf per token under `c.correction`; a row whose `lpInf` is null (its
 * inference log-probs could not be aligned with its tokens) gets w = 1. Metrics over tokens with m = 1 and inference
 * log-probs: `mismatch/logpDiffMean|Max` of |δ|, `mismatch/isMean|Min|Max`, `mismatch/isZeroedFrac`.
 */
export function correctionWeights(
  lpOld: readonly (readonly number[])[],
  lpInf: readonly (readonly number[] | null)[],
  mask: readonly (readonly number[])[],
  c: Pick<OffPolicyConfig, "correction" | "cap" | "capMin" | "capMax">,
): Correction {
  let n = 0,
    diffSum = 0,
    diffMax = 0,
    wSum = 0,
    zeroed = 0,
    wMin = Infinity,
    wMax = -Infinity;
  const weights = lpOld.map((old, i) => {
    const inf = lpInf[i];
    if (!inf) return old.map(() => 1);
    if (inf.length !== old.length) {
      throw new RangeError(
        `correctionWeights: row ${i} has ${inf.length} inference log-probs for ${old.length} tokens`,
      );
    }
    const delta = old.map((o, t) => o - inf[t]!);
    const w = isWeights(delta, c.correction, { cap: c.cap, capMin: c.capMin, capMax: c.capMax, mask: mask[i]! });
    delta.forEach((d, t) => {
      if (!mask[i]![t]) return;
      n++;
      diffSum += Math.abs(d);
      diffMax = Math.max(diffMax, Math.abs(d));
      wSum += w[t]!;
      wMin = Math.min(wMin, w[t]!);
      wMax = Math.max(wMax, w[t]!);
      if (w[t] === 0) zeroed++;
    });
    return w;
  });
  const metrics: Record<string, number> =
    n === 0
      ? {}
      : {
          "mismatch/logpDiffMean": diffSum / n,
          "mismatch/logpDiffMax": diffMax,
          "mismatch/isMean": wSum / n,
          "mismatch/isMin": wMin,
          "mismatch/isMax": wMax,
          "mismatch/isZeroedFrac": zeroed / n,
        };
  return { weights, metrics };
}

/** Whether a rollout sampled by `policyVersion` is too stale for a trainer at `trainerVersion` (§5). */
export function isStale(policyVersion: number, trainerVersion: number, maxStaleness: number): boolean {
  return trainerVersion - policyVersion > maxStaleness;
}
