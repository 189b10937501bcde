/**
 * The policy loss over engine tensors (algorithms spec §2–§4): the same definitions as `policyLoss` (arrays),
 * written with engine ops so autograd carries the gradient to the model through lp_θ and, for the entropy bonus,
 * through the entropy tensor (and so the full softmax, §2.5).
 *
 *   l(i,t) = w_IS·pg + β·s·k − α·H          L = Σ_{i,t} W(i,t)·l(i,t),  W = m · weight of the aggregation mode
 *
 * Which branch of the clipped objective a token takes is decided from the values and applied with `where`, so a
 * clipped token carries exactly zero policy gradient (as in the array version), with no tie-splitting at the
 * clip edges. Metrics come from the float64 array version on the same numbers.
 */
import { add, clamp, exp, mul, neg, sub, sum, tensor, where, type Tensor } from "../engine/index.js";
import { resolveLossOptions, type LossOptions } from "./loss-options.js";
import { LOG_RATIO_CLAMP, policyGradientTerm, SEQ_LOG_RATIO_CAP, tokenWeight } from "./pieces.js";
import { policyLoss } from "./policy-loss.js";

/** Inputs on the (B, T) grid; every Float32Array is row-major B·T unless stated. */
export interface PolicyLossTensorInput {
  /** lp_θ: (B, T) with gradient. */
  logp: Tensor;
  /** lp_old on the grid. */
  oldLogp: Float32Array;
  /** lp_ref on the grid; required when β > 0. */
  refLogp?: Float32Array;
  /** m on the grid (0 on prompt, padding, tool output). */
  mask: Float32Array;
  /** A per sequence (length B) or per token (length B·T). */
  advantages: Float32Array;
  /** s on the grid (partial KL); default 1. */
  klMask?: Float32Array;
  /** H(i,t): (B, T), with gradient through the logits when α > 0. */
  entropy?: Tensor;
  /** w_IS on the grid; default 1. */
  isWeights?: Float32Array;
}

/** The scalar loss tensor and the step metrics. */
export interface PolicyLossTensorResult {
  loss: Tensor;
  metrics: Record<string, number>;
}

function checkGrid(name: string, a: Float32Array | undefined, n: number, required: boolean): void {
  if (a === undefined) {
    if (required) throw new TypeError(`policyLossTensor: ${name} is required`);
    return;
  }
  if (a.length !== n) throw new RangeError(`policyLossTensor: ${name} has length ${a.length}, expected B·T = ${n}`);
}

/** Splits a (B·T) grid into B rows of T. */
function rows(a: Float32Array, B: number, T: number): number[][] {
  return Array.from({ length: B }, (_, b) => Array.from(a.subarray(b * T, (b + 1) * T)));
}

/** The policy loss over engine tensors (see the file comment). */
export function policyLossTensor(input: PolicyLossTensorInput, options: Partial<LossOptions> = {}): PolicyLossTensorResult {
  const o = resolveLossOptions(options);
  const { logp, oldLogp, mask } = input;
  if (logp.shape.length !== 2) throw new RangeError(`policyLossTensor: logp must be (B, T), got (${logp.shape.join(", ")})`);
  const [B, T] = logp.shape as [number, number];
  const n = B * T;
  const useKl = o.beta > 0;
  checkGrid("oldLogp", oldLogp, n, true);
  checkGrid("mask", mask, n, true);
  checkGrid("refLogp", input.refLogp, n, useKl);
  checkGrid("klMask", input.klMask, n, false);
  checkGrid("isWeights", input.isWeights, n, false);
  if (input.advantages.length !== B && input.advantages.length !== n) {
    throw new RangeError(`policyLossTensor: advantages has length ${input.advantages.length}, expected B = ${B} or B·T = ${n}`);
  }
  if (o.entropyCoef > 0 && !input.entropy) throw new TypeError("policyLossTensor: entropy (B, T) is required when entropyCoef > 0");
  if (input.entropy && (input.entropy.shape[0] !== B || input.entropy.shape[1] !== T)) {
    throw new RangeError(`policyLossTensor: entropy must be (${B}, ${T}), got (${input.entropy.shape.join(", ")})`);
  }
  const perToken = input.advantages.length === n && n !== B;
  const advAt = (k: number) => input.advantages[perToken ? k : Math.floor(k / T)]!;
  const lp = logp.data;

  // Aggregation weights W(i,t) = m · weight(i) and the per-sequence GSPO ratio, from the values (constants).
  const seqTokens = new Float64Array(B);
  let tokens = 0;
  for (let k = 0; k < n; k++) {
    seqTokens[Math.floor(k / T)] += mask[k]!;
    tokens += mask[k]!;
  }
  const norm = o.normalizer ?? { sequences: B, tokens };
  const W = new Float32Array(n);
  for (let k = 0; k < n; k++) W[k] = mask[k]! * tokenWeight(o.aggregation, seqTokens[Math.floor(k / T)]!, norm, o.maxCompletionTokens);
  const seqRatio = new Float32Array(B);
  if (o.ratio === "sequence") {
    for (let b = 0; b < B; b++) {
      let s = 0;
      for (let t = 0; t < T; t++) s += mask[b * T + t]! * (lp[b * T + t]! - oldLogp[b * T + t]!);
      seqRatio[b] = Math.exp(Math.min(SEQ_LOG_RATIO_CAP, s / Math.max(1, seqTokens[b]!)));
    }
  }

  // ρ: token exp(clamp(lp − old, ±20)), or GSPO sg(s_i)·exp(lp − sg(lp)) (value s_i, gradient s_i).
  const ratio =
    o.ratio === "token"
      ? exp(clamp(sub(logp, tensor(oldLogp, [B, T])), -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP)) // ratio: (B, T)
      : mul(exp(sub(logp, logp.detach())), tensor(seqRatio, [B, 1]));
  const negAdv = new Float32Array(n);
  for (let k = 0; k < n; k++) negAdv[k] = -advAt(k);
  let pg: Tensor = mul(ratio, tensor(negAdv, [B, T])); // −ρA: (B, T)
  if (o.clip.type === "ppo") {
    // Clipped or dual-clipped tokens take a constant value (zero policy gradient), decided per token from the values.
    const taken = new Float32Array(n);
    const constant = new Float32Array(n);
    for (let k = 0; k < n; k++) {
      if (!mask[k]) continue;
      const term = policyGradientTerm(ratio.data[k]!, advAt(k), o.clip);
      if (term.dRatio === 0 && term.branch !== "none") {
        taken[k] = 1;
        constant[k] = term.value;
      }
    }
    pg = where(tensor(taken, [B, T]), tensor(constant, [B, T]), pg);
  }
  if (input.isWeights) pg = mul(pg, tensor(input.isWeights, [B, T]));
  let perTok: Tensor = pg;

  if (useKl) {
    const delta = clamp(sub(tensor(input.refLogp!, [B, T]), logp), -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP); // Δ: (B, T)
    let k: Tensor;
    if (o.estimator === "k1") k = neg(delta);
    else if (o.estimator === "k2") k = mul(mul(delta, delta), 0.5);
    else {
      const k3 = clamp(sub(sub(exp(delta), delta), 1), -10, 10);
      if (o.estimator === "k3") k = k3;
      else {
        // k3st: value of k3, gradient of k2 (k2 + sg(k3 − k2)).
        const k2 = mul(mul(delta, delta), 0.5);
        k = add(k2, sub(k3, k2).detach());
      }
    }
    const s = input.klMask ? tensor(input.klMask, [B, T]) : null;
    perTok = add(perTok, mul(s ? mul(k, s) : k, o.beta));
  }
  if (o.entropyCoef > 0) perTok = sub(perTok, mul(input.entropy!, o.entropyCoef));
  const loss = sum(mul(perTok, tensor(W, [B, T]))); // scalar

  const ent = input.entropy ? rows(input.entropy.data, B, T) : undefined;
  const { metrics } = policyLoss(
    {
      logp: rows(lp, B, T),
      oldLogp: rows(oldLogp, B, T),
      ...(input.refLogp ? { refLogp: rows(input.refLogp, B, T) } : {}),
      mask: rows(mask, B, T),
      advantages: perToken ? rows(input.advantages, B, T) : Array.from(input.advantages),
      ...(input.klMask ? { klMask: rows(input.klMask, B, T) } : {}),
      ...(ent ? { entropy: ent } : {}),
      ...(input.isWeights ? { isWeights: rows(input.isWeights, B, T) } : {}),
    },
    { ...o, normalizer: norm },
  );
  metrics["loss/total"] = loss.item();
  return { loss, metrics };
}
