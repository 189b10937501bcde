/**
 * Batched autoregressive sampling with a KV cache.
 *
 * Prompts of different lengths are left-padded to a common length; a key mask hides the padding and each row's
 * positions start at 0 at its first real token (GPT-2's learned positions get per-row position ids; for RoPE the
 * common shift cancels in q.k, so the rotation needs no per-row offset). One prefill pass over the prompts fills
 * the cache; each later step feeds one token per row. A row ends at eos or at a stop string (finish "stop"; the eos
 * token or the stop string stays in `tokens` and `logprobs`) or after `maxNewTokens` (finish "length").
 *
 * The recorded log-prob of a token is log_softmax(logits / T) of the unfiltered distribution (see ./filter.ts),
 * which is what a training forward pass over the same tokens computes.
 */
import { noGrad } from "../engine/index.js";
import type { Transformer } from "../models/transformer.js";
import type { Tokenizer } from "../models/tokenizer.js";
import { ConfigError, Rng } from "../util/index.js";
import { drawToken, type DrawOptions } from "./filter.js";
import { StopWatcher } from "./stop.js";

/** Options of `sample`. */
export interface SampleOptions {
  /** Most tokens generated per row. */
  maxNewTokens: number;
  /** Softmax temperature; 0 = greedy. Default 1. */
  temperature?: number;
  /** Keep the k most likely tokens; 0 = off (default). */
  topK?: number;
  /** Nucleus mass; 1 = off (default). */
  topP?: number;
  /** A row stops once its decoded completion contains one of these. */
  stop?: string[];
  /** Source of randomness; one draw is taken from it per call, so repeated calls give fresh samples. */
  rng: Rng;
}

/** One generated completion. */
export interface SampledSequence {
  /** Completion token ids (prompt excluded), including a final eos or the tokens of a stop string. */
  tokens: number[];
  /** log_softmax(logits / T) of the unfiltered distribution at each token. */
  logprobs: number[];
  /** "stop": eos or a stop string; "length": maxNewTokens reached. */
  finishReason: "stop" | "length";
  /** The decoded completion (special tokens dropped). */
  text: string;
}

/** Generates one completion per prompt (prompts are token ids; none may be empty). */
export function sample(
  model: Transformer,
  tokenizer: Tokenizer,
  prompts: number[][],
  opts: SampleOptions,
): SampledSequence[] {
  const draw = checkOptions(opts);
  const batch = prompts.length;
  if (batch === 0) return [];
  const vocab = model.config.vocabSize;
  prompts.forEach((p, b) => {
    if (p.length === 0)
      throw new ConfigError(`sample: prompt ${b} is empty; start it with at least one token (e.g. bos)`);
    for (const id of p)
      if (!Number.isInteger(id) || id < 0 || id >= vocab)
        throw new ConfigError(`sample: prompt ${b} has token id ${id} outside [0, ${vocab})`);
  });
  const promptLen = Math.max(...prompts.map((p) => p.length));
  const total = promptLen + opts.maxNewTokens;
  if (model.config.arch === "gpt2" && total > model.config.maxSeqLen) {
    throw new ConfigError(
      `sample: longest prompt ${promptLen} + maxNewTokens ${opts.maxNewTokens} = ${total} exceeds the model's maxSeqLen ${model.config.maxSeqLen}`,
    );
  }
  const seed = opts.rng.nextU32();
  const rngs = prompts.map((_, b) => new Rng(seed).split(b)); // per-row streams: a row's draws do not depend on its batch-mates
  const watchers = prompts.map(() => new StopWatcher(tokenizer, opts.stop ?? []));

  // Left padding: row b has pad[b] padding slots, then its prompt.
  const pad = Int32Array.from(prompts, (p) => promptLen - p.length);
  const mask = new Float32Array(batch * total); // (B, total): 1 = real token
  const ids = new Int32Array(batch * promptLen).fill(tokenizer.padId); // (B, P)
  prompts.forEach((p, b) => {
    for (let t = 0; t < p.length; t++) ids[b * promptLen + pad[b]! + t] = p[t]!;
    for (let t = pad[b]!; t < total; t++) mask[b * total + t] = 1;
  });
  const anyPad = pad.some((n) => n > 0);

  const out: SampledSequence[] = prompts.map(() => ({ tokens: [], logprobs: [], finishReason: "length", text: "" }));
  const done = new Array<boolean>(batch).fill(false);
  noGrad(() => {
    const cache = model.newCache(batch, total);
    let logits = model.forward(ids, batch, promptLen, {
      cache,
      lastOnly: true,
      ...(anyPad ? { mask: prefix(mask, batch, total, promptLen) } : {}),
    });
    let len = promptLen; // logits: (B, len_step, V); we read each row's last position
    for (let step = 0; step < opts.maxNewTokens; step++) {
      const steps = logits.shape[1]!;
      const next = new Int32Array(batch).fill(tokenizer.padId);
      for (let b = 0; b < batch; b++) {
        if (done[b]) continue;
        const row = logits.data.subarray((b * steps + steps - 1) * vocab, (b * steps + steps) * vocab);
        const { token, logprob } = drawToken(row, draw, rngs[b]!);
        const o = out[b]!;
        o.tokens.push(token);
        o.logprobs.push(logprob);
        next[b] = token;
        if (token === tokenizer.eosId || watchers[b]!.hit(o.tokens)) {
          o.finishReason = "stop";
          done[b] = true;
        }
      }
      if (done.every(Boolean) || step === opts.maxNewTokens - 1) break;
      len += 1;
      logits = model.forward(next, batch, 1, { cache, ...(anyPad ? { mask: prefix(mask, batch, total, len) } : {}) });
    }
  });
  for (const o of out) o.text = tokenizer.decode(o.tokens);
  return out;
}

/** Validates the options and resolves defaults. */
function checkOptions(opts: SampleOptions): DrawOptions {
  const temperature = opts.temperature ?? 1;
  const topK = opts.topK ?? 0;
  const topP = opts.topP ?? 1;
  if (!Number.isInteger(opts.maxNewTokens) || opts.maxNewTokens < 0)
    throw new ConfigError(`sample: maxNewTokens must be a non-negative integer, got ${opts.maxNewTokens}`);
  if (!(temperature >= 0) || !Number.isFinite(temperature))
    throw new ConfigError(`sample: temperature must be >= 0, got ${temperature}`);
  if (!Number.isInteger(topK) || topK < 0)
    throw new ConfigError(`sample: topK must be a non-negative integer, got ${topK}`);
  if (!(topP > 0 && topP <= 1)) throw new ConfigError(`sample: topP must be in (0, 1], got ${topP}`);
  return { temperature, topK, topP };
}

/** The first `len` columns of a (B, total) mask, contiguous: (B, len). */
function prefix(mask: Float32Array, batch: number, total: number, len: number): Float32Array {
  const out = new Float32Array(batch * len);
  for (let b = 0; b < batch; b++) out.set(mask.subarray(b * total, b * total + len), b * len);
  return out;
}
