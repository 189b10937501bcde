/**
 * FLOP counts of a decoder's forward pass and training step, for quoting a measured rate against the machine's fp32
 * peak (bench:engine's `train.*.peak_frac`, issue 21). Counted the usual way (Kaplan et al. 2020, Megatron's
 * accounting): 2 FLOP per multiply-add of every matrix product, nothing for elementwise work, norms and softmax, and a
 * backward pass worth two forward passes, so a training step is 3 forwards.
 *
 * Departures from a finer count, on purpose: attention scores are counted over the whole T × T square (a causal
 * kernel may skip the upper half), and the head's product over every position (the loss needs them all). The count
 * is the work a dense implementation does, which is what "fraction of peak" compares against.
 */
import { headDimOf, type TransformerConfig } from "./config.js";

/** The FLOP of one forward pass over `batch` rows of `seq` tokens. */
export function forwardFlop(c: TransformerConfig, batch: number, seq: number): number {
  const d = c.dModel,
    hd = headDimOf(c),
    tokens = batch * seq;
  const q = c.nHeads * hd,
    kv = c.nKvHeads * hd;
  const projections = d * q + 2 * d * kv + q * d; // Q, K, V, O
  const mlp = (c.arch === "gpt2" ? 2 : 3) * d * c.dFf; // up and down, plus the gate for SwiGLU
  const perLayerLinear = 2 * tokens * (projections + mlp);
  const attention = 2 * 2 * batch * c.nHeads * seq * seq * hd; // Q Kᵀ and (scores) V
  const head = 2 * tokens * d * c.vocabSize;
  return c.nLayers * (perLayerLinear + attention) + head;
}

/** The FLOP of one training step (forward, backward, no optimizer): three forward passes' worth. */
export function trainStepFlop(c: TransformerConfig, batch: number, seq: number): number {
  return 3 * forwardFlop(c, batch, seq);
}

/**
 * The FLOP of sampling `newTokens` tokens for `rows` rows after a `prompt`-token prefill, with a KV cache: the
 * prefill is one forward pass; each new token is one token's matrix products plus attention over the keys so far
 * (the prompt, the tokens before it, and itself). The head runs once per new token.
 */
export function sampleFlop(c: TransformerConfig, rows: number, prompt: number, newTokens: number): number {
  const d = c.dModel,
    hd = headDimOf(c);
  const q = c.nHeads * hd,
    kv = c.nKvHeads * hd;
  const perTokenLinear = 2 * (d * q + 2 * d * kv + q * d + (c.arch === "gpt2" ? 2 : 3) * d * c.dFf);
  let flop = forwardFlop(c, rows, prompt);
  for (let i = 0; i < newTokens; i++) {
    const keys = prompt + i + 1;
    flop += rows * (c.nLayers * (perTokenLinear + 2 * 2 * c.nHeads * keys * hd) + 2 * d * c.vocabSize);
  }
  return flop;
}

/** One GRPO step's shape: the rows sampled (prompts × G), their mean prompt and completion tokens, and the passes. */
export interface RlStepShape {
  rows: number;
  promptTokens: number;
  completionTokens: number;
  /** A frozen reference model's forward pass over every row (β > 0). */
  reference: boolean;
  /** A separate old-policy forward pass (μ > 1 without the sampler's log-probs). */
  oldPolicy: boolean;
}

/**
 * The FLOP of one GRPO step: sampling, then the forward passes over prompt + completion that the loss needs (the
 * reference, the old policy) and one training step (forward and backward) of the policy. The least work any
 * implementation does for that step, so seconds per step against FLOP / peak is how close a step is to its bound.
 */
export function rlStepFlop(c: TransformerConfig, s: RlStepShape): number {
  const seq = s.promptTokens + s.completionTokens;
  const passes = (s.reference ? 1 : 0) + (s.oldPolicy ? 1 : 0);
  return (
    sampleFlop(c, s.rows, s.promptTokens, s.completionTokens) +
    passes * forwardFlop(c, s.rows, seq) +
    trainStepFlop(c, s.rows, seq)
  );
}
