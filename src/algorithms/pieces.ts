/**
 * The named per-token pieces of the policy loss (algorithms spec §2), each a value and its derivative with
 * respect to lp_θ, side by side (STYLE.md: operations and gradients together). Scalars in float64; the array loss
 * and the tensor loss are both built from these definitions.
 */
import type { Aggregation, ClipOptions, KlEstimator } from "./loss-options.js";

/** Log-ratio clamp of the token ratio (verl clamps the same way). */
export const LOG_RATIO_CLAMP = 20;
/** GSPO caps the mean log-ratio of a sequence at this value. */
export const SEQ_LOG_RATIO_CAP = 10;

/** ρ = exp(clamp(lp − lp_old, ±20)); dρ/dlp = ρ inside the clamp, 0 outside (§2.1). */
export function tokenRatio(lp: number, old: number): { value: number; grad: number } {
  const d = lp - old;
  const c = Math.min(LOG_RATIO_CLAMP, Math.max(-LOG_RATIO_CLAMP, d));
  const value = Math.exp(c);
  return { value, grad: c === d ? value : 0 };
}

/**
 * GSPO sequence ratio s_i = exp(min(10, Σ_t m(lp − old)/L_i)); as a per-token ratio its value is s_i and
 * dρ/dlp(i,t) = s_i (§2.1).
 */
export function sequenceRatio(lp: readonly number[], old: readonly number[], mask: readonly number[]): number {
  let s = 0;
  let L = 0;
  for (let t = 0; t < lp.length; t++) {
    if (!mask[t]) continue;
    s += mask[t]! * (lp[t]! - old[t]!);
    L += mask[t]!;
  }
  return Math.exp(Math.min(SEQ_LOG_RATIO_CAP, s / Math.max(1, L)));
}

/** Which branch the clipped objective took at one token. */
export type ClipBranch = "none" | "low" | "high" | "dual";

/**
 * Policy-gradient term pg(ρ, A) and ∂pg/∂ρ (§2.2). Multiply by dρ/dlp for ∂pg/∂lp.
 * none: −ρA. ppo: −min(ρA, clip(ρ)A), gradient 0 when the clipped branch is taken. dual (A < 0): capped at −cA.
 */
export function policyGradientTerm(
  ratio: number,
  adv: number,
  clip: ClipOptions,
): { value: number; dRatio: number; branch: ClipBranch } {
  const unclipped = -ratio * adv;
  if (clip.type === "none") return { value: unclipped, dRatio: -adv, branch: "none" };
  const clipped = -Math.min(Math.max(ratio, 1 - clip.epsLow), 1 + clip.epsHigh) * adv;
  let value = unclipped;
  let dRatio = -adv;
  let branch: ClipBranch = "none";
  if (clipped > unclipped) {
    value = clipped;
    dRatio = 0;
    branch = adv < 0 ? "low" : "high";
  }
  if (clip.dualClip !== null && adv < 0 && -clip.dualClip * adv < value) {
    value = -clip.dualClip * adv;
    dRatio = 0;
    branch = "dual";
  }
  return { value, dRatio, branch };
}

/** KL estimator k(lp, lp_ref) and ∂k/∂lp with Δ = clamp(lp_ref − lp, ±20) (§2.3). */
export function klTerm(lp: number, ref: number, estimator: KlEstimator): { value: number; grad: number } {
  const raw = ref - lp;
  const delta = Math.min(LOG_RATIO_CLAMP, Math.max(-LOG_RATIO_CLAMP, raw));
  const inClamp = delta === raw ? 1 : 0;
  switch (estimator) {
    case "k1": // k1 = −Δ = lp − ref; dk1/dlp = 1
      return { value: -delta, grad: inClamp };
    case "k2": // k2 = ½Δ²; dk2/dlp = −Δ = lp − ref
      return { value: 0.5 * delta * delta, grad: -delta * inClamp };
    case "k3": {
      // k3 = clamp(e^Δ − Δ − 1, ±10); dk3/dlp = 1 − e^Δ (0 where the value clamp binds)
      const v = Math.exp(delta) - delta - 1;
      const value = Math.min(10, Math.max(-10, v));
      return { value, grad: value === v ? (1 - Math.exp(delta)) * inClamp : 0 };
    }
    case "k3st": {
      // value of k3, gradient of k2 (straight-through, verl "k3+")
      const v = Math.exp(delta) - delta - 1;
      return { value: Math.min(10, Math.max(-10, v)), grad: -delta * inClamp };
    }
  }
}

/** k3 value alone, for the `kl/refK3` metric that is comparable across runs. */
export function k3Value(lp: number, ref: number): number {
  return klTerm(lp, ref, "k3").value;
}

/**
 * Weight of one token of a sequence with L_i masked tokens in the aggregated loss (§3):
 * seqMeanTokenMean 1/(B·max(1, L_i)), tokenMean 1/N_tok, seqMeanTokenSum 1/B, constantNorm 1/(B·L_max).
 */
export function tokenWeight(
  aggregation: Aggregation,
  seqTokens: number,
  norm: { sequences: number; tokens: number },
  maxCompletionTokens?: number,
): number {
  const B = Math.max(1, norm.sequences);
  switch (aggregation) {
    case "seqMeanTokenMean":
      return 1 / (B * Math.max(1, seqTokens));
    case "tokenMean":
      return 1 / Math.max(1, norm.tokens);
    case "seqMeanTokenSum":
      return 1 / B;
    case "constantNorm":
      return 1 / (B * maxCompletionTokens!);
  }
}
