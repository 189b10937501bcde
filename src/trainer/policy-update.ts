/**
 * The optimizer side of one RL step (spec §3.1, §5): μ passes over the rollout batch, each cut into M shuffled
 * mini-batches (one optimizer step each), each mini-batch cut into micro-batches whose gradients accumulate.
 * Normalisers (B, N_tok, L_i, L_max) are fixed per mini-batch before any backward, so the gradient does not depend
 * on the micro-batch split (8×1 equals 1×8). The loss is the algorithm's (`buildAlgorithm`), which is the exported
 * array `policyLoss`. Also: reference log-probs for the KL term, computed once per step.
 */
import type { Rng } from "../util/index.js";
import {
  clipGradNorm,
  div,
  logSoftmax,
  mul,
  neg,
  noGrad,
  softmax,
  tidy,
  sub,
  sum,
  tensor,
  type Optimizer,
  type Tensor,
  backward,
} from "../engine/index.js";
import type { Transformer } from "../models/transformer.js";
import type { Rollout } from "../rollout/types.js";
import { lossNormalizer, tokenWeight, type Algorithm } from "../algorithms/index.js";
import type { TrainConfig } from "./config.js";
import { chunks, entropyGrid, gridLogprobs, onGrid, packRollouts, type PackedBatch } from "./batch.js";
import { numbersOf, type KlMasks } from "./step-advantages.js";

/** Everything `updatePolicy` needs. */
export interface UpdateArgs {
  model: Transformer;
  optimizer: Optimizer;
  params: [string, Tensor][];
  rollouts: Rollout[];
  /** What `buildAlgorithm(config.algorithm)` returned: the loss and where KL goes. */
  algorithm: Algorithm;
  /** μ, M, micro-batch size, gradient clip. */
  train: Pick<TrainConfig["train"], "innerIterations" | "miniBatches" | "microBatchSize" | "maxGradNorm">;
  /** Sampling temperature T: every log-prob is log_softmax(logits / T). */
  temperature: number;
  beta: number;
  lr: number;
  rng: Rng;
  padId: number;
  /** Partial-KL section masks by rollout. */
  klMasks?: KlMasks;
  /** w_IS by rollout: the train/inference correction of a recomputed lp_old (§5, ./old-logprobs.ts). */
  isWeights?: ReadonlyMap<Rollout, readonly number[]>;
  /** Rows that replay a stored answer (ExGRPO, §6.8): shaped ratio against their behaviour log-probs. */
  replayed?: ReadonlySet<Rollout>;
  warn: (msg: string) => void;
}

/** Stores the frozen reference's log-probs on each rollout (`refLogprobs`), micro-batched, without a graph. */
export function referenceLogprobs(
  reference: Transformer,
  rollouts: Rollout[],
  padId: number,
  microBatchSize: number,
  temperature: number,
): void {
  noGrad(() => {
    for (const mb of chunks(rollouts, microBatchSize)) {
      // Copied out as numbers: every tensor of the pass goes back to the pool (tidy).
      tidy(() => {
        const p = packRollouts(mb, padId);
        const { logp } = gridLogprobs(reference, p, temperature); // logp: (B, T)
        mb.forEach((r, b) => (r.refLogprobs = r.completionIds.map((_, j) => logp.data[b * p.T + p.starts[b]! + j]!)));
      });
    }
  });
}

/**
 * The trainer's loss on one micro-batch: the algorithm's `policyLoss` (exact, float64) on the lp_θ of the packed
 * grid, with the optimizer batch's normaliser, returned as the surrogate Σ lp_θ · sg(dL/dlp_θ), whose gradient is
 * exactly dL/dθ. `logp` is (B, T) on `p`'s grid; entropy rows feed the metric.
 */
export function policySurrogate(
  algorithm: Algorithm,
  logp: Tensor,
  p: PackedBatch,
  beta: number,
  normalizer: { sequences: number; tokens: number },
  opts: {
    klMasks?: KlMasks;
    isWeights?: ReadonlyMap<Rollout, readonly number[]>;
    entropy?: number[][];
    replayed?: ReadonlySet<Rollout>;
  } = {},
): { surrogate: Tensor; metrics: Record<string, number> } {
  const micro = p.rollouts;
  const rows = (grid: Float32Array) =>
    micro.map((r, b) => r.completionIds.map((_, j) => grid[b * p.T + p.starts[b]! + j]!));
  const numbers = micro.map((r) => numbersOf(r, opts.klMasks));
  const withRef = algorithm.kl.reference;
  const out = algorithm.loss(
    {
      logp: rows(logp.data as Float32Array),
      oldLogp: numbers.map((c) => c.oldLogp),
      ...(withRef ? { refLogp: micro.map((r) => r.refLogprobs!) } : {}),
      mask: numbers.map((c) => c.mask),
      advantages: micro.map((r) => r.tokenAdvantages ?? r.completionIds.map(() => r.advantage)),
      ...(opts.klMasks ? { klMask: numbers.map((c) => c.klMask ?? c.mask.map(() => 1)) } : {}),
      ...(opts.entropy ? { entropy: opts.entropy } : {}),
      ...(opts.isWeights
        ? { isWeights: micro.map((r) => opts.isWeights!.get(r) ?? r.completionIds.map(() => 1)) }
        : {}),
      ...(opts.replayed ? { replayed: micro.map((r) => opts.replayed!.has(r)) } : {}),
    },
    beta,
    normalizer,
  );
  const dl = onGrid(p, (b, j) => out.grad[b]![j]!);
  return { surrogate: sum(mul(logp, tensor(dl, [p.B, p.T]))), metrics: out.metrics };
}

/** Runs the μ·M optimizer steps of one rollout batch; returns the step's loss, ratio, clip, KL and grad metrics. */
export function updatePolicy(a: UpdateArgs): Record<string, number> {
  const { model, optimizer, params, algorithm, train: tc } = a;
  const T = a.temperature;
  const { aggregation, entropyCoef } = algorithm.config.loss;
  const maxTokens = algorithm.lossOptions(a.beta).maxCompletionTokens;
  const t0 = performance.now();
  const acc = new Accumulator();
  let firstPassMaxDiff = 0;
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
        const ent = entropyGrid(logits, p.mask, T);
        const entropy = micro.map((r, b) => r.completionIds.map((_, j) => ent[b * p.T + p.starts[b]! + j]!));
        const extra = {
          ...(a.klMasks ? { klMasks: a.klMasks } : {}),
          ...(a.replayed ? { replayed: a.replayed } : {}),
          ...(a.isWeights ? { isWeights: a.isWeights } : {}),
          entropy,
        };
        let { surrogate, metrics } = policySurrogate(algorithm, logp, p, a.beta, norm, extra);
        if (entropyCoef > 0) {
          // −α Σ m·w·H through the full softmax (§2.5): H = −Σ_v p log p of softmax(logits / T)
          const weightOf = (b: number) => tokenWeight(aggregation, seqTokens(micro[b]!), norm, maxTokens);
          const weights = onGrid(p, (b, j) => micro[b]!.lossMask[j]! * weightOf(b));
          const z = div(logits, T);
          const H = neg(sum(mul(softmax(z, -1), logSoftmax(z, -1)), -1)); // H: (B, T)
          surrogate = sub(surrogate, mul(sum(mul(H, tensor(weights, [p.B, p.T]))), entropyCoef));
        }
        if (iter === 0) {
          for (let k = 0; k < p.mask.length; k++) {
            const replayedRow = a.replayed?.has(micro[Math.floor(k / p.T)]!); // lp_old is the behaviour policy's
            if (p.mask[k] && !replayedRow)
              firstPassMaxDiff = Math.max(firstPassMaxDiff, Math.abs(logp.data[k]! - p.oldLogp[k]!));
          }
        }
        // The pass's activations go back to the engine's pool: nothing below reads a tensor of it.
        backward(surrogate, { releaseIntermediates: true });
        acc.add(metrics, p.mask);
        trainedTokens += micro.reduce((s, r) => s + r.promptIds.length + r.completionIds.length, 0);
      }
      const gradNorm = tc.maxGradNorm !== null ? clipGradNorm(params, tc.maxGradNorm) : globalNorm(params);
      acc.gradNorms.push(gradNorm);
      acc.clipped += tc.maxGradNorm !== null && gradNorm > tc.maxGradNorm ? 1 : 0;
      optimizer.step(a.lr);
    }
  }
  if (firstPassMaxDiff > 1e-2) {
    const diff = firstPassMaxDiff.toFixed(4);
    a.warn(`mismatch/logpDiffMax = ${diff} > 1e-2 between sampler and trainer log-probs (temperature or precision?)`);
  }
  const seconds = (performance.now() - t0) / 1000;
  return {
    ...acc.result(),
    "mismatch/logpDiffMax": firstPassMaxDiff,
    "perf/trainTokensPerSec": trainedTokens / Math.max(1e-9, seconds),
    "time/update": seconds,
  };
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
