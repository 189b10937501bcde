/**
 * Off-policy pieces as pure functions (algorithms spec §5, §6, §7): the train/inference importance-sampling
 * corrections, ExGRPO's shaped ratio for replayed samples, and wd1's group weights. wd1's are read through
 * `algorithm.diffusion` (wd1.ts, for masked-diffusion policies); the corrections wait for a remote sampler and
 * ExGRPO's ratio for its trainer. All are exercised by the spec's §11.5 fixtures; the built-in sampler needs no
 * correction (its log-probs are exact).
 */

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
  const C = opts.cap ?? 2;
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
