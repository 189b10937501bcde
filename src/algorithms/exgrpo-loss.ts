/**
 * ExGRPO's policy loss on a batch that mixes fresh and replayed completions (algorithms spec §6.8; arXiv 2510.02245
 * §4.2): fresh rows take the configured loss (`policyLoss`: token ratio, PPO clip, KL, entropy), replayed rows take
 *
 *   pg(i,t) = −f(w)·A_i,   f(w) = w / (w + c),   w = exp(clamp(lp_θ − lp_b, ±20)),   ∂pg/∂lp_θ = −A_i·c·w/(w + c)²
 *
 * with lp_b the behaviour log-probs recorded when the answer was first sampled, no clip, and the same token weights
 * (aggregation and optimizer-batch normaliser) as fresh rows. A replayed row also passes through `policyLoss` with
 * its advantage set to 0, so the KL and entropy terms (when configured) apply to it exactly as to a fresh row, and
 * the loss adds only the shaped term. Departure (metrics): `ratio/*` and `policy/approxKl` are over every masked
 * token, replayed ones included; `replay/shapedRatioMean` is f(w) over replayed tokens.
 */
import { policyLoss, lossNormalizer, type PolicyLossInput, type PolicyLossResult } from "./policy-loss.js";
import { resolveLossOptions, type LossOptions } from "./loss-options.js";
import { tokenRatio, tokenWeight } from "./pieces.js";
import { exgrpoShape } from "./off-policy.js";

/**
 * f(w) = w/(w + c) and ∂f/∂lp = c·w/(w + c)², from `exgrpoShape` (c = 0.1): f_c(w) = f_0.1(0.1·w/c), and rescaling
 * w leaves the derivative with respect to log w unchanged.
 */
export function shapedRatio(w: number, c = 0.1): { value: number; dLogp: number } {
  return exgrpoShape((0.1 * w) / c);
}

/** The loss input, plus which rows replay a stored answer. */
export interface ReplayLossInput extends PolicyLossInput {
  /** One flag per row: true where the row replays a stored answer (its `oldLogp` are the behaviour log-probs). */
  replayed?: readonly boolean[];
}

/** The policy loss with replayed rows shaped by f(w) = w/(w + c) (see the file comment); c = `shapeOffset`. */
export function replayAwareLoss(
  input: ReplayLossInput,
  options: Partial<LossOptions> = {},
  shapeOffset = 0.1,
): PolicyLossResult {
  const { replayed, ...rest } = input;
  if (!replayed || !replayed.some(Boolean)) return policyLoss(rest, options);
  if (replayed.length !== input.logp.length)
    throw new RangeError(`replayAwareLoss: replayed has ${replayed.length} rows, logp has ${input.logp.length}`);
  const perToken = input.advantages.length > 0 && Array.isArray(input.advantages[0]);
  const adv = (i: number, t: number): number =>
    perToken
      ? (input.advantages as readonly (readonly number[])[])[i]![t]!
      : (input.advantages as readonly number[])[i]!;
  // Fresh rows as configured; replayed rows with A = 0 (KL and entropy only).
  const zeroed = input.logp.map((row, i) => row.map((_, t) => (replayed[i] ? 0 : adv(i, t))));
  const out = policyLoss({ ...rest, advantages: zeroed }, options);
  const o = resolveLossOptions(options);
  const norm = o.normalizer ?? lossNormalizer(input.mask);
  let shaped = 0;
  let shapedTokens = 0;
  let policyPart = 0;
  input.logp.forEach((row, i) => {
    if (!replayed[i]) return;
    const mask = input.mask[i]!;
    const w = tokenWeight(
      o.aggregation,
      mask.reduce((a, b) => a + b, 0),
      norm,
      o.maxCompletionTokens,
    );
    row.forEach((lp, t) => {
      const m = mask[t]!;
      if (m === 0) return;
      const ratio = tokenRatio(lp, input.oldLogp[i]![t]!); // w and dw/dlp (0 outside the ±20 log-ratio clamp)
      const f = shapedRatio(ratio.value, shapeOffset);
      const dfdlp = ratio.value > 0 ? f.dLogp * (ratio.grad / ratio.value) : 0;
      const a = adv(i, t);
      policyPart += m * w * -f.value * a;
      out.grad[i]![t]! += m * w * -a * dfdlp;
      shaped += m * f.value;
      shapedTokens += m;
    });
  });
  out.loss += policyPart;
  out.metrics["loss/total"] = (out.metrics["loss/total"] ?? 0) + policyPart;
  out.metrics["loss/policy"] = (out.metrics["loss/policy"] ?? 0) + policyPart;
  if (shapedTokens > 0) out.metrics["replay/shapedRatioMean"] = shaped / shapedTokens;
  return out;
}
