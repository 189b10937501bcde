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
