/**
 * The policy loss over plain per-token arrays (algorithms spec §2–§4): the scalar loss and its exact gradient with
 * respect to each token's lp_θ, in float64. This is the reference the tensor loss is tested against, and a public
 * API for checking our numbers against other frameworks (docs/algorithms.md has a worked example).
 *
 *   l(i,t) = w_IS(i,t)·pg(i,t) + β·s(i,t)·k(i,t) − α·H(i,t)        L = Σ_{i,t} m(i,t)·l(i,t)·weight(i)
 *
 * With `klImportanceWeight` the KL term is β·s·k·ρ (TRL's `use_bias_correction_kl`), differentiated through ρ.
 * Rows are completions (ragged; positions with m = 0 are ignored). Advantages are per completion or per token.
 * Departure: the entropy term enters the loss value only; its gradient flows through the logits, which this
 * array version does not see (the tensor loss handles it).
 */
import {
  klTerm,
  k3Value,
  policyGradientTerm,
  SEQ_LOG_RATIO_CAP,
  sequenceRatio,
  tokenRatio,
  tokenWeight,
} from "./pieces.js";
import { resolveLossOptions, type LossOptions } from "./loss-options.js";

type Rows = readonly (readonly number[])[];

/** Per-token inputs of the loss; every row-array has one row per completion, rows aligned with `logp`. */
export interface PolicyLossInput {
  /** lp_θ(i,t): log_softmax(logits/T) at the sampled token under the policy being trained. */
  logp: Rows;
  /** lp_old(i,t): the sampler's (behaviour) log-probs. */
  oldLogp: Rows;
  /** lp_ref(i,t): frozen reference log-probs; required when β > 0. */
  refLogp?: Rows;
  /** m(i,t): 1 on trained completion tokens, 0 on prompt, padding and tool output. */
  mask: Rows;
  /** A_i per completion, or A(i,t) per token. */
  advantages: readonly number[] | Rows;
  /** s(i,t): KL section mask (partial KL, SIRL); default 1 everywhere. */
  klMask?: Rows;
  /** H(i,t): entropy of softmax(logits/T) per token, for the entropy bonus and its metric. */
  entropy?: Rows;
  /** w_IS(i,t): train/inference correction multiplying pg (§5); default 1. */
  isWeights?: Rows;
}

/** Loss value, d loss / d lp_θ per token, and the step metrics of §9 that these inputs determine. */
export interface PolicyLossResult {
  loss: number;
  grad: number[][];
  metrics: Record<string, number>;
}

/** Checks that an optional row-array matches `logp` row by row; names the field. */
function checkRows(name: string, rows: Rows | undefined, like: Rows, required: boolean): void {
  if (rows === undefined) {
    if (required) throw new TypeError(`policyLoss: ${name} is required`);
    return;
  }
  if (rows.length !== like.length)
    throw new RangeError(`policyLoss: ${name} has ${rows.length} rows, logp has ${like.length}`);
  rows.forEach((r, i) => {
    if (r.length !== like[i]!.length)
      throw new RangeError(`policyLoss: ${name}[${i}] has length ${r.length}, logp[${i}] has ${like[i]!.length}`);
  });
}

/** Σ_t m over each row, and the batch normaliser (B sequences, N_tok masked tokens). */
export function lossNormalizer(mask: Rows): { sequences: number; tokens: number } {
  let tokens = 0;
  for (const row of mask) for (const m of row) tokens += m;
  return { sequences: mask.length, tokens };
}

/** s_i/L_i: d s_i / d lp(i,t) per unit of m(i,t), for s_i = exp(min(cap, mean_t m·(lp − old))); 0 when capped. */
function sequenceRatioSlope(lp: readonly number[], old: readonly number[], mask: readonly number[], s: number): number {
  let sum = 0;
  let L = 0;
  for (let t = 0; t < lp.length; t++) {
    if (!mask[t]) continue;
    sum += mask[t]! * (lp[t]! - old[t]!);
    L += mask[t]!;
  }
  return sum / Math.max(1, L) < SEQ_LOG_RATIO_CAP ? s / Math.max(1, L) : 0;
}

/** The policy loss and its gradient over per-token arrays (see the file comment). */
export function policyLoss(input: PolicyLossInput, options: Partial<LossOptions> = {}): PolicyLossResult {
  const o = resolveLossOptions(options);
  const { logp, oldLogp, refLogp, mask } = input;
  const useKl = o.beta > 0;
  const logKl = useKl || refLogp !== undefined;
  checkRows("oldLogp", oldLogp, logp, true);
  checkRows("mask", mask, logp, true);
  checkRows("refLogp", refLogp, logp, useKl);
  checkRows("klMask", input.klMask, logp, false);
  checkRows("entropy", input.entropy, logp, o.entropyCoef > 0);
  checkRows("isWeights", input.isWeights, logp, false);
  const perToken = input.advantages.length > 0 && Array.isArray(input.advantages[0]);
  if (input.advantages.length !== logp.length)
    throw new RangeError(`policyLoss: advantages has ${input.advantages.length} rows, logp has ${logp.length}`);
  if (perToken) checkRows("advantages", input.advantages as Rows, logp, true);
  const adv = (i: number, t: number): number =>
    perToken ? (input.advantages as Rows)[i]![t]! : (input.advantages as readonly number[])[i]!;

  const norm = o.normalizer ?? lossNormalizer(mask);
  const grad = logp.map((row) => new Array<number>(row.length).fill(0));
  let loss = 0;
  let lossPolicy = 0;
  let lossKl = 0;
  let lossEntropy = 0;
  // Metric accumulators over tokens with m = 1 (weighted by m).
  let mSum = 0;
  let low = 0,
    high = 0,
    dual = 0,
    ratioSum = 0,
    approxKl = 0,
    klSum = 0,
    k3Sum = 0,
    entSum = 0,
    seqRatioSum = 0;
  let ratioMin = Infinity,
    ratioMax = -Infinity;

  for (let i = 0; i < logp.length; i++) {
    const Li = mask[i]!.reduce((a, b) => a + b, 0);
    const w = tokenWeight(o.aggregation, Li, norm, o.maxCompletionTokens);
    const seqRatio = o.ratio === "sequence" ? sequenceRatio(logp[i]!, oldLogp[i]!, mask[i]!) : 0;
    seqRatioSum += seqRatio;
    let seqKl = 0; // Σ_t m·s·k over the row: what d s_i/d lp(i,t) multiplies under GSPO with klImportanceWeight
    for (let t = 0; t < logp[i]!.length; t++) {
      const m = mask[i]![t]!;
      if (m === 0) continue;
      const lp = logp[i]![t]!;
      const tok = tokenRatio(lp, oldLogp[i]![t]!);
      // Sequence ratio: value s_i on every token, dρ/dlp(i,t) = s_i (verl gspo).
      const rho = o.ratio === "sequence" ? { value: seqRatio, grad: seqRatio } : tok;
      const a = adv(i, t);
      const pg = policyGradientTerm(rho.value, a, o.clip);
      const wIs = input.isWeights?.[i]![t] ?? 1;
      let l = wIs * pg.value;
      let dl = wIs * pg.dRatio * rho.grad;
      lossPolicy += m * w * wIs * pg.value;
      if (logKl) {
        // With β = 0 and reference log-probs given (kl.monitorOnly, or KL in the reward) KL is logged only.
        const s = input.klMask?.[i]![t] ?? 1;
        const k = klTerm(lp, refLogp![i]![t]!, o.estimator);
        // klImportanceWeight (TRL use_bias_correction_kl): β·s·k·ρ, d/dlp = β·s·(k'·ρ + k·dρ/dlp). Under GSPO
        // ρ = s_i depends on every token of the row; that cross term is added after this loop.
        const kw = !o.klImportanceWeight ? 1 : o.ratio === "sequence" ? seqRatio : tok.value;
        const kwGrad = o.klImportanceWeight && o.ratio === "token" ? tok.grad : 0;
        l += o.beta * s * k.value * kw;
        dl += o.beta * s * (k.grad * kw + k.value * kwGrad);
        lossKl += m * w * o.beta * s * k.value * kw;
        seqKl += m * s * k.value;
        klSum += m * k.value;
        k3Sum += m * k3Value(lp, refLogp![i]![t]!);
      }
      if (input.entropy) {
        const h = input.entropy[i]![t]!;
        entSum += m * h;
        if (o.entropyCoef > 0) {
          l -= o.entropyCoef * h;
          lossEntropy -= m * w * o.entropyCoef * h;
        }
      }
      loss += m * w * l;
      grad[i]![t] = m * w * dl;

      mSum += m;
      ratioSum += m * rho.value;
      ratioMin = Math.min(ratioMin, rho.value);
      ratioMax = Math.max(ratioMax, rho.value);
      approxKl += m * (tok.value - 1 - Math.log(tok.value));
      if (pg.branch === "low") low += m;
      if (pg.branch === "high") high += m;
      if (o.clip.type === "ppo" && o.clip.dualClip !== null && a < 0 && rho.value > o.clip.dualClip) dual += m;
    }
    if (o.beta > 0 && o.klImportanceWeight && o.ratio === "sequence") {
      const slope = sequenceRatioSlope(logp[i]!, oldLogp[i]!, mask[i]!, seqRatio); // d s_i / d lp(i,t) = slope·m(i,t)
      for (let t = 0; t < logp[i]!.length; t++) grad[i]![t]! += mask[i]![t]! * w * o.beta * seqKl * slope;
    }
  }

  const metrics: Record<string, number> = { "loss/total": loss, "loss/policy": lossPolicy };
  if (useKl) metrics["loss/kl"] = lossKl;
  if (o.entropyCoef > 0) metrics["loss/entropy"] = lossEntropy;
  if (mSum > 0) {
    Object.assign(metrics, {
      "ratio/mean": ratioSum / mSum,
      "ratio/min": ratioMin,
      "ratio/max": ratioMax,
      "policy/approxKl": approxKl / mSum,
    });
    if (o.clip.type === "ppo") {
      // Spec §2.2: low = A < 0 and ρ < 1 − ε_low; high = A > 0 and ρ > 1 + ε_high. The clipped branch is taken exactly then.
      Object.assign(metrics, {
        "clip/lowFrac": low / mSum,
        "clip/highFrac": high / mSum,
        "clip/regionFrac": (low + high) / mSum,
      });
      if (o.clip.dualClip !== null) metrics["clip/dualFrac"] = dual / mSum;
    }
    if (logKl) Object.assign(metrics, { "kl/ref": klSum / mSum, "kl/refK3": k3Sum / mSum });
    if (input.entropy) metrics["entropy/mean"] = entSum / mSum;
  }
  if (o.ratio === "sequence" && logp.length > 0) metrics["ratio/seqMean"] = seqRatioSum / logp.length;
  return { loss, grad, metrics };
}
