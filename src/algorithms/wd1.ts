/**
 * wd1's ratio-free policy loss for masked-diffusion LMs (algorithms spec §7; arXiv 2507.08838 §3.2 eq. 8–9,
 * xiaohangt/wd1 `rev_grpo_trainer.py`), over plain numbers: one sequence log-likelihood estimate ℓ_i per completion
 * (./masked-estimator.ts) and one advantage A_i per completion (meanOnly within the group, §1.2).
 *
 *   w⁺_i = softmax_g(ψA)_i     w⁻_i = softmax_g(−ψA)_i     L_g = −Σ_i (w⁺_i − w⁻_i)·ℓ_i     L = (1/Q) Σ_g L_g
 *
 * No ratio, no clip, no reference, β = 0: the weights only depend on the rewards, so μ inner iterations with a fresh
 * mask each stay valid. Since Σ_i (w⁺_i − w⁻_i) = 0, adding a constant to every ℓ_i of a group changes nothing, and a
 * zero-std group (all A_i equal) has w⁺ = w⁻ = 1/G and no gradient.
 * The group's weights and L_g are `wd1GroupLoss` (./off-policy.ts, tested on the spec's §11.5 fixture); this file adds
 * the batch normaliser Q and the metrics.
 * Departure: the released code takes the softmax over the per-device micro-batch (sized to one group of 6); it is
 * pinned to the group here, so the loss does not depend on the split (§7, §3.1).
 */
import { wd1GroupLoss } from "./off-policy.js";

/** One group of wd1's loss: its completions' ℓ_i and advantages A_i. */
export interface Wd1Group {
  ell: readonly number[];
  advantages: readonly number[];
}

/** What `wd1Loss` returns: the loss, dL/dℓ per completion (per group), and step metrics. */
export interface Wd1Result {
  loss: number;
  dEll: number[][];
  metrics: Record<string, number>;
}

/** L = (1/Q) Σ_g L_g over `groups`, Q = `groupsInBatch` (the optimizer batch's groups, §3.1; default groups.length). */
export function wd1Loss(groups: readonly Wd1Group[], opts: { psi?: number; groupsInBatch?: number } = {}): Wd1Result {
  const Q = opts.groupsInBatch ?? groups.length;
  if (!(Q > 0)) throw new RangeError(`wd1Loss: groupsInBatch ${Q} must be > 0`);
  let loss = 0;
  let ellSum = 0;
  let n = 0;
  let wPlusMax = 0;
  const dEll = groups.map((g) => {
    if (g.ell.length !== g.advantages.length)
      throw new RangeError(`wd1Loss: ${g.ell.length} log-likelihoods for ${g.advantages.length} advantages`);
    const r = wd1GroupLoss(g.advantages, g.ell, opts.psi ?? 1);
    loss += r.loss / Q;
    g.ell.forEach((l) => ((ellSum += l), n++));
    wPlusMax = Math.max(wPlusMax, ...r.wPlus);
    return r.grad.map((d) => d / Q);
  });
  const metrics: Record<string, number> = { "loss/total": loss, "loss/policy": loss };
  if (n > 0) Object.assign(metrics, { "wd1/ellMean": ellSum / n, "wd1/wPlusMax": wPlusMax });
  return { loss, dEll, metrics };
}
