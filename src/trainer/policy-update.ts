/**
 * The optimizer side of one RL step (spec §3.1, §5): μ passes over the rollout batch, each cut into M shuffled
 * mini-batches (one optimizer step each), each mini-batch cut into micro-batches whose gradients accumulate.
 * Normalisers (B, N_tok, L_i, L_max) are fixed per mini-batch before any backward, so the gradient does not depend
 * on the micro-batch split (8×1 equals 1×8). Also: reference log-probs for the KL term, computed once per step.
 */
import type { Rng } from "../util/index.js";
import { clipGradNorm, div, logSoftmax, mul, neg, noGrad, softmax, sub, sum, tensor, type Optimizer, type Tensor } from "../engine/index.js";
import type { Transformer } from "../models/transformer.js";
import type { Rollout } from "../rollout/types.js";
import { lossNormalizer, policyLoss, tokenWeight } from "../algorithms/index.js";
import type { Tokenizer } from "../models/tokenizer.js";
import { klSectionMask } from "./kl-sections.js";
import type { TrainConfig } from "./config.js";
import { chunks, entropyGrid, gridLogprobs, onGrid, packRollouts } from "./batch.js";

/** Everything `updatePolicy` needs. */
export interface UpdateArgs {
  model: Transformer;
  optimizer: Optimizer;
  params: [string, Tensor][];
  rollouts: Rollout[];
  config: TrainConfig;
  beta: number;
  lr: number;
  rng: Rng;
  useRef: boolean;
  padId: number;
  tokenizer: Tokenizer;
  warn: (msg: string) => void;
}

/** Stores the frozen reference's log-probs on each rollout (`refLogprobs`), micro-batched, without a graph. */
export function referenceLogprobs(reference: Transformer, rollouts: Rollout[], padId: number, config: TrainConfig): void {
  noGrad(() => {
    for (const mb of chunks(rollouts, config.train.microBatchSize)) {
      const p = packRollouts(mb, padId);
      const { logp } = gridLogprobs(reference, p, config.sampler.temperature); // logp: (B, T)
      mb.forEach((r, b) => (r.refLogprobs = r.completionIds.map((_, j) => logp.data[b * p.T + p.starts[b]! + j]!)));
    }
  });
}

/** Runs the μ·M optimizer steps of one rollout batch; returns the step's loss, ratio, clip, KL and grad metrics. */
export function updatePolicy(a: UpdateArgs): Record<string, number> {
  const { model, optimizer, params, config } = a;
  const tc = config.train;
  const alg = config.algorithm;
  const T = config.sampler.temperature;
  const t0 = performance.now();
  const acc = new Accumulator();
  let firstPassMaxDiff = 0;
  const lossOptions = {
    ratio: alg.policy.ratio,
    clip: alg.policy.clip,
    beta: alg.kl.placement === "loss" && !alg.kl.monitorOnly ? a.beta : 0,
    estimator: alg.kl.estimator,
    aggregation: alg.loss.aggregation,
    entropyCoef: alg.loss.entropyCoef,
    maxCompletionTokens: tc.maxCompletionTokens,
  };
  let missingSections = 0;
  const klMasks = alg.kl.sections && a.useRef ? new Map(a.rollouts.map((r) => {
    const s = klSectionMask(r.completionIds, a.tokenizer, alg.kl.sections!);
    if (s.missing) missingSections++;
    return [r, s.mask] as const;
  })) : null;
  let trainedTokens = 0;
  for (let iter = 0; iter < tc.innerIterations; iter++) {
    const order = tc.miniBatches > 1 ? a.rng.shuffle(a.rollouts.map((_, i) => i)) : a.rollouts.map((_, i) => i);
    const size = Math.ceil(order.length / tc.miniBatches);
    for (const miniIdx of chunks(order, size)) {
      const mini = miniIdx.map((i) => a.rollouts[i]!);
      const norm = lossNormalizer(mini.map((r) => r.lossMask)); // B and N_tok of this optimizer batch (§3.1)
      optimizer.zeroGrad();
      for (const micro of chunks(mini, tc.microBatchSize)) {
        const p = packRollouts(micro, a.padId);
        const { logp, logits } = gridLogprobs(model, p, T); // logp: (B, T), logits: (B, T, V)
        const rows = (grid: Float32Array) => micro.map((r, b) => r.completionIds.map((_, j) => grid[b * p.T + p.starts[b]! + j]!));
        const entropy = rows(entropyGrid(logits, p.mask, T));
        // The loss and d loss / d lp_θ per token from src/algorithms (exact, float64), with this optimizer batch's
        // normaliser; the engine then backpropagates Σ lp_θ · sg(dL/dlp_θ), whose gradient is exactly dL/dθ.
        const out = policyLoss(
          {
            logp: rows(logp.data),
            oldLogp: micro.map((r) => r.samplerLogprobs),
            ...(a.useRef ? { refLogp: micro.map((r) => r.refLogprobs!) } : {}),
            mask: micro.map((r) => r.lossMask),
            advantages: micro.map((r) => r.tokenAdvantages ?? r.completionIds.map(() => r.advantage)),
            ...(klMasks ? { klMask: micro.map((r) => klMasks.get(r)!) } : {}),
            entropy,
          },
          { ...lossOptions, normalizer: norm },
        );
        const dl = onGrid(p, (b, j) => out.grad[b]![j]!);
        let surrogate = sum(mul(logp, tensor(dl, [p.B, p.T])));
        if (alg.loss.entropyCoef > 0) {
          // −α Σ m·w·H through the full softmax (§2.5): H = −Σ_v p log p of softmax(logits / T)
          const weights = onGrid(p, (b, j) => micro[b]!.lossMask[j]! * tokenWeight(alg.loss.aggregation, seqTokens(micro[b]!), norm, tc.maxCompletionTokens));
          const z = div(logits, T);
          const H = neg(sum(mul(softmax(z, -1), logSoftmax(z, -1)), -1)); // H: (B, T)
          surrogate = sub(surrogate, mul(sum(mul(H, tensor(weights, [p.B, p.T]))), alg.loss.entropyCoef));
        }
        surrogate.backward();
        acc.add(out.metrics, p.mask);
        if (iter === 0) {
          for (let k = 0; k < p.mask.length; k++) if (p.mask[k]) firstPassMaxDiff = Math.max(firstPassMaxDiff, Math.abs(logp.data[k]! - p.oldLogp[k]!));
        }
        trainedTokens += micro.reduce((s, r) => s + r.promptIds.length + r.completionIds.length, 0);
      }
      const gradNorm = tc.maxGradNorm !== null ? clipGradNorm(params, tc.maxGradNorm) : globalNorm(params);
      acc.gradNorms.push(gradNorm);
      acc.clipped += tc.maxGradNorm !== null && gradNorm > tc.maxGradNorm ? 1 : 0;
      optimizer.step(a.lr);
    }
  }
  if (firstPassMaxDiff > 1e-2) a.warn(`mismatch/logpDiffMax = ${firstPassMaxDiff.toFixed(4)} > 1e-2 between sampler and trainer log-probs (temperature or precision?)`);
  const seconds = (performance.now() - t0) / 1000;
  const klMissing: Record<string, number> = klMasks ? { "kl/sectionMissingFrac": missingSections / Math.max(1, a.rollouts.length) } : {};
  return { ...acc.result(), ...klMissing, "mismatch/logpDiffMax": firstPassMaxDiff, "perf/trainTokensPerSec": trainedTokens / Math.max(1e-9, seconds), "time/update": seconds };
}

function seqTokens(r: Rollout): number {
  return r.lossMask.reduce((s, x) => s + x, 0);
}

function globalNorm(params: readonly [string, Tensor][]): number {
  let s = 0;
  for (const [, p] of params) if (p.grad) for (const g of p.grad) s += g * g;
  return Math.sqrt(s);
}

/**
 * Combines the per-micro-batch metrics of `policyLoss`: loss parts are already divided by the optimizer batch's
 * normaliser, so they sum within an optimizer step and are averaged over steps; token means are re-weighted by
 * each micro-batch's masked tokens; min/max are combined as such.
 */
class Accumulator {
  private lossSums: Record<string, number> = {};
  private tokenSums: Record<string, number> = {};
  private tokenCounts: Record<string, number> = {};
  private extremes: Record<string, number> = {};
  gradNorms: number[] = [];
  clipped = 0;

  add(m: Record<string, number>, mask: Float32Array): void {
    const n = mask.reduce((s, x) => s + x, 0);
    for (const [k, v] of Object.entries(m)) {
      if (k.startsWith("loss/")) this.lossSums[k] = (this.lossSums[k] ?? 0) + v;
      else if (k.endsWith("/min")) this.extremes[k] = Math.min(this.extremes[k] ?? Infinity, v);
      else if (k.endsWith("/max")) this.extremes[k] = Math.max(this.extremes[k] ?? -Infinity, v);
      else {
        this.tokenSums[k] = (this.tokenSums[k] ?? 0) + v * n;
        this.tokenCounts[k] = (this.tokenCounts[k] ?? 0) + n;
      }
    }
  }

  result(): Record<string, number> {
    const steps = Math.max(1, this.gradNorms.length);
    const out: Record<string, number> = { ...this.extremes };
    for (const [k, v] of Object.entries(this.lossSums)) out[k] = v / steps;
    for (const [k, v] of Object.entries(this.tokenSums)) out[k] = v / Math.max(1, this.tokenCounts[k]!);
    out["grad/norm"] = this.gradNorms.reduce((a, b) => a + b, 0) / steps;
    out["grad/clipped"] = this.clipped / steps;
    return out;
  }
}
