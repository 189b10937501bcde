/**
 * Packing rollouts into a padded token batch and reading per-token log-probs back. Row b holds
 * prompt ++ completion (right-padded); position t of the (B, T) log-prob grid scores token t + 1, so completion
 * token j of row b sits at column P_b + j − 1. All per-token arrays the loss needs (mask, old, reference,
 * advantages, weights) are laid out on that same (B, T) grid with zeros off the completion. Token ids come
 * from the rollout records: nothing is re-tokenized.
 */
import type { Tensor } from "../engine/index.js";
import type { Transformer } from "../models/transformer.js";
import { tokenLogprobs } from "../models/transformer.js";
import type { Rollout } from "../rollout/types.js";

/** A padded batch of rollouts on the (B, T) grid. */
export interface PackedBatch {
  rollouts: Rollout[];
  B: number;
  T: number;
  /** ids: (B*T) row-major prompt ++ completion ++ padding. */
  ids: Int32Array;
  /** Attention mask (B, T): 1 = real token. */
  attn: Float32Array;
  /** Next-token targets (B*T): ids shifted left by one, padding id at the end. */
  targets: Int32Array;
  /** Policy-loss mask m (B*T): 1 at columns that score a trained completion token. */
  mask: Float32Array;
  /** Sampler (old) log-probs on the grid. */
  oldLogp: Float32Array;
  /** Column of each row's first completion token's score (P_b − 1). */
  starts: number[];
}

/** Packs rollouts into one right-padded batch. */
export function packRollouts(rollouts: Rollout[], padId: number): PackedBatch {
  const B = rollouts.length;
  const T = Math.max(...rollouts.map((r) => r.promptIds.length + r.completionIds.length));
  const ids = new Int32Array(B * T).fill(padId);
  const attn = new Float32Array(B * T);
  const targets = new Int32Array(B * T).fill(padId);
  const mask = new Float32Array(B * T);
  const oldLogp = new Float32Array(B * T);
  const starts: number[] = [];
  rollouts.forEach((r, b) => {
    const seq = [...r.promptIds, ...r.completionIds];
    for (let t = 0; t < seq.length; t++) {
      ids[b * T + t] = seq[t]!;
      attn[b * T + t] = 1;
      if (t + 1 < seq.length) targets[b * T + t] = seq[t + 1]!;
    }
    const s = r.promptIds.length - 1;
    starts.push(s);
    for (let j = 0; j < r.completionIds.length; j++) {
      mask[b * T + s + j] = r.lossMask[j]!;
      oldLogp[b * T + s + j] = r.samplerLogprobs[j]!;
    }
  });
  return { rollouts, B, T, ids, attn, targets, mask, oldLogp, starts };
}

/** Lays one number per completion token onto the grid (e.g. per-token advantages), zeros elsewhere. */
export function onGrid(p: PackedBatch, valueAt: (b: number, j: number) => number): Float32Array {
  const out = new Float32Array(p.B * p.T);
  p.rollouts.forEach((r, b) => {
    for (let j = 0; j < r.completionIds.length; j++) out[b * p.T + p.starts[b]! + j] = valueAt(b, j);
  });
  return out;
}

/** Forward pass: log_softmax(logits / T)[target] on the grid, (B, T), with the graph when grad is enabled. */
export function gridLogprobs(
  model: Transformer,
  p: PackedBatch,
  temperature: number,
): { logp: Tensor; logits: Tensor } {
  const images = p.rollouts.some((r) => r.images) ? { images: p.rollouts.map((r) => r.images) } : {};
  const logits = model.forward(p.ids, p.B, p.T, { mask: p.attn, ...images }); // logits: (B, T, V)
  const logp = tokenLogprobs(logits, p.targets, temperature); // logp: (B, T)
  return { logp, logits };
}

/** Entropy of softmax(logits / T) on the grid (metric; zeros where the mask is 0). */
export function entropyGrid(logits: Tensor, mask: Float32Array, temperature: number): Float32Array {
  const V = logits.shape[logits.shape.length - 1]!;
  const d = logits.data;
  const out = new Float32Array(mask.length);
  for (let row = 0; row < mask.length; row++) {
    if (mask[row] === 0) continue;
    let max = -Infinity;
    for (let v = 0; v < V; v++) max = Math.max(max, d[row * V + v]! / temperature);
    let z = 0;
    let ez = 0;
    for (let v = 0; v < V; v++) {
      const x = d[row * V + v]! / temperature - max;
      const e = Math.exp(x);
      z += e;
      ez += e * x;
    }
    out[row] = Math.log(z) - ez / z; // H = log Z − E[x]
  }
  return out;
}

/** Splits `items` into consecutive chunks of at most `size`. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
