/**
 * Per-row token choice from one row of logits: temperature, top-k, top-p (nucleus), and the log-prob that is
 * recorded for the drawn token.
 *
 * The recorded log-prob is always log_softmax(logits / T) of the UNFILTERED distribution at the drawn token,
 * so it equals what a training forward pass computes for the same token (top-k/top-p only change which tokens
 * can be drawn). Temperature 0 is greedy (argmax; its recorded log-prob uses T = 1). Work is O(V log V) only when
 * top-k/top-p are on; otherwise it is two passes over the row.
 */
import type { Rng } from "../util/index.js";

/** How a token is drawn from a row of logits. */
export interface DrawOptions {
  /** T > 0 divides the logits; 0 means greedy. */
  temperature: number;
  /** Keep only the k most likely tokens; 0 = off. */
  topK: number;
  /** Keep the smallest set of most likely tokens whose probability reaches p; 1 = off. */
  topP: number;
}

/** The drawn token and log_softmax(logits / T)[token] of the unfiltered distribution. */
export interface Draw {
  token: number;
  logprob: number;
}

/** The exponentials of the last row drawn (grown as needed; a row is drawn to the end before the next starts). */
let expScratch = new Float64Array(0);

/** Draws one token from `logits` (length V) with `rng`. */
export function drawToken(logits: Float32Array, opts: DrawOptions, rng: Rng): Draw {
  const v = logits.length;
  const t = opts.temperature > 0 ? opts.temperature : 1;
  // log-sum-exp of logits / T in float64, for the recorded log-prob
  let max = -Infinity;
  for (let i = 0; i < v; i++) if (logits[i]! > max) max = logits[i]!;
  // e^((l - max) / T) per token, kept for the draw below (each computed once; the same values either way)
  if (expScratch.length < v) expScratch = new Float64Array(Math.max(v, 2 * expScratch.length));
  const e = expScratch;
  let z = 0;
  for (let i = 0; i < v; i++) z += e[i] = Math.exp((logits[i]! - max) / t);
  const logZ = Math.log(z);
  const logprobOf = (tok: number): number => (logits[tok]! - max) / t - logZ;

  if (opts.temperature <= 0 || opts.topK === 1) {
    let best = 0;
    for (let i = 1; i < v; i++) if (logits[i]! > logits[best]!) best = i;
    return { token: best, logprob: logprobOf(best) };
  }
  const filtered = opts.topK > 0 || opts.topP < 1;
  if (!filtered) {
    // inverse-CDF draw over the full distribution
    let u = rng.random() * z;
    for (let i = 0; i < v; i++) {
      u -= e[i]!;
      if (u < 0) return { token: i, logprob: logprobOf(i) };
    }
    return { token: lastPositive(logits, max, t), logprob: logprobOf(lastPositive(logits, max, t)) };
  }
  const candidates = nucleus(logits, max, t, z, opts);
  let mass = 0;
  for (const [, p] of candidates) mass += p;
  let u = rng.random() * mass;
  for (const [i, p] of candidates) {
    u -= p;
    if (u < 0) return { token: i, logprob: logprobOf(i) };
  }
  const last = candidates[candidates.length - 1]![0];
  return { token: last, logprob: logprobOf(last) };
}

/** The tokens that survive top-k then top-p, with their (unnormalised within the set) probabilities, most likely first. */
function nucleus(logits: Float32Array, max: number, t: number, z: number, opts: DrawOptions): [number, number][] {
  const all: [number, number][] = [];
  for (let i = 0; i < logits.length; i++) all.push([i, Math.exp((logits[i]! - max) / t) / z]);
  all.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  const k = opts.topK > 0 ? Math.min(opts.topK, all.length) : all.length;
  const kept: [number, number][] = [];
  let cum = 0;
  for (let i = 0; i < k; i++) {
    kept.push(all[i]!);
    cum += all[i]![1];
    if (cum >= opts.topP) break; // the token that crosses p is kept (as in Hugging Face's TopPLogitsWarper)
  }
  return kept;
}

/** Fallback for floating-point leftovers in the inverse-CDF draw: the last token with non-zero probability. */
function lastPositive(logits: Float32Array, max: number, t: number): number {
  for (let i = logits.length - 1; i >= 0; i--) if (Math.exp((logits[i]! - max) / t) > 0) return i;
  return 0;
}
