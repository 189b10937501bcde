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
import { noGrad, releaseBuffer, tidy, type Tensor } from "../engine/index.js";
import type { KVCache, Transformer } from "../models/transformer.js";
import type { Tokenizer } from "../models/tokenizer.js";
import type { RgbImage } from "../util/image.js";
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
  /** Per prompt, the images of its `<image>` placeholders (a vision-language model: src/models/vision-lm.ts). */
  images?: readonly (readonly RgbImage[] | null | undefined)[];
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
  if (prompts.length === 0) {
    checkOptions(opts);
    return [];
  }
  const session = new DecodeSession(model, tokenizer, prompts, { ...opts, maxSlots: opts.maxNewTokens });
  const watchers = prompts.map(() => new StopWatcher(tokenizer, opts.stop ?? []));
  const out: SampledSequence[] = prompts.map(() => ({ tokens: [], logprobs: [], finishReason: "length", text: "" }));
  try {
    decode(session, tokenizer, watchers, out, opts.maxNewTokens);
  } finally {
    session.close();
  }
  for (const o of out) o.text = tokenizer.decode(o.tokens);
  return out;
}

/** The decoding loop of `sample`: draws for every live row, stops rows at eos or a stop string, feeds the column. */
function decode(
  session: DecodeSession,
  tokenizer: Tokenizer,
  watchers: StopWatcher[],
  out: SampledSequence[],
  maxNewTokens: number,
): void {
  const batch = out.length;
  const done = new Array<boolean>(batch).fill(false);
  for (let step = 0; step < maxNewTokens; step++) {
    const next = new Int32Array(batch).fill(tokenizer.padId);
    for (let b = 0; b < batch; b++) {
      if (done[b]) continue;
      const { token, logprob } = session.draw(b);
      const o = out[b]!;
      o.tokens.push(token);
      o.logprobs.push(logprob);
      next[b] = token;
      if (token === tokenizer.eosId || watchers[b]!.hit(o.tokens)) {
        o.finishReason = "stop";
        done[b] = true;
      }
    }
    if (done.every(Boolean) || step === maxNewTokens - 1) break;
    session.feed(next, 1);
  }
}

/** Options of a `DecodeSession`: the draw settings and how many slots follow the longest prompt. */
export interface DecodeSessionOptions extends Omit<SampleOptions, "maxNewTokens" | "stop"> {
  /** Slots after the longest prompt: every token fed later (sampled or inserted) takes one. */
  maxSlots: number;
}

/**
 * One batch of rows decoding over a shared KV cache: the prompts are prefilled once, then each `feed` appends
 * `width` tokens per row (sampled ones, or inserted tool/environment tokens) and `draw(b)` samples row b's next
 * token from the logits after its last fed token. Inserted tokens are appended to the cache like sampled ones, so
 * generation after them continues from the cache without recomputing the prefix. Rows advance in lock-step (one
 * slot per row per fed column; a finished row feeds padding), which keeps each row's slots contiguous: RoPE's
 * slot-index positions then equal the positions of a full forward pass over the same tokens.
 */
export class DecodeSession {
  readonly batch: number;
  private readonly draws: DrawOptions;
  private readonly rngs: Rng[];
  private readonly cache: KVCache;
  private readonly mask: Float32Array; // (B, total): 1 = real token
  private readonly anyPad: boolean;
  private readonly total: number;
  private readonly vocab: number;
  private len: number; // slots written
  private closed = false;
  private logits: Tensor; // (B, steps, V) of the latest forward; each row reads its last column

  constructor(
    private readonly model: Transformer,
    tokenizer: Tokenizer,
    prompts: readonly (readonly number[])[],
    opts: DecodeSessionOptions,
  ) {
    this.draws = checkOptions({ ...opts, maxNewTokens: opts.maxSlots });
    const batch = (this.batch = prompts.length);
    if (batch === 0) throw new ConfigError("DecodeSession: no prompts");
    const vocab = (this.vocab = model.config.vocabSize);
    prompts.forEach((p, b) => {
      if (p.length === 0)
        throw new ConfigError(`sample: prompt ${b} is empty; start it with at least one token (e.g. bos)`);
      for (const id of p)
        if (!Number.isInteger(id) || id < 0 || id >= vocab)
          throw new ConfigError(`sample: prompt ${b} has token id ${id} outside [0, ${vocab})`);
    });
    const promptLen = Math.max(...prompts.map((p) => p.length));
    const total = (this.total = promptLen + opts.maxSlots);
    if (model.config.arch === "gpt2" && total > model.config.maxSeqLen) {
      throw new ConfigError(
        `sample: longest prompt ${promptLen} + maxNewTokens ${opts.maxSlots} = ${total} exceeds the model's maxSeqLen ${model.config.maxSeqLen}`,
      );
    }
    const seed = opts.rng.nextU32();
    this.rngs = prompts.map((_, b) => new Rng(seed).split(b)); // per-row streams: a row's draws do not depend on its batch-mates

    // Left padding: row b has pad[b] padding slots, then its prompt.
    const pad = Int32Array.from(prompts, (p) => promptLen - p.length);
    this.mask = new Float32Array(batch * total);
    const ids = new Int32Array(batch * promptLen).fill(tokenizer.padId); // (B, P)
    prompts.forEach((p, b) => {
      for (let t = 0; t < p.length; t++) ids[b * promptLen + pad[b]! + t] = p[t]!;
      for (let t = pad[b]!; t < total; t++) this.mask[b * total + t] = 1;
    });
    this.anyPad = pad.some((n) => n > 0);
    this.len = promptLen;
    this.cache = model.newCache(batch, total);
    // Every forward's intermediates go back to the engine's pool at once (tidy keeps only the logits): the cache
    // copies each layer's keys and values into its own arrays, so nothing else outlives the call.
    this.logits = tidy(() =>
      noGrad(() =>
        model.forward(ids, batch, promptLen, {
          cache: this.cache,
          lastOnly: true,
          ...this.maskFor(promptLen),
          ...(opts.images ? { images: opts.images } : {}), // images enter once, in the prefill
        }),
      ),
    );
  }

  /** Slots still free in the cache. */
  get room(): number {
    return this.total - this.len;
  }

  /** Samples row b's next token (and its log-prob) from the logits after the row's last fed token. */
  draw(b: number): { token: number; logprob: number } {
    if (this.closed) throw new Error("DecodeSession.draw: the session is closed");
    return drawToken(this.lastLogits(b), this.draws, this.rngs[b]!);
  }

  /** Feeds `ids` (B, width), row-major, through the model, appending them to the cache. */
  feed(ids: Int32Array, width: number): void {
    if (this.closed) throw new Error("DecodeSession.feed: the session is closed");
    if (!Number.isInteger(width) || width < 1 || ids.length !== this.batch * width)
      throw new ConfigError(`DecodeSession.feed: ${ids.length} ids for ${this.batch} rows of width ${width}`);
    if (width > this.room)
      throw new ConfigError(`DecodeSession.feed: ${width} tokens do not fit; ${this.room} slots left`);
    this.len += width;
    const opts = { cache: this.cache, lastOnly: true, ...this.maskFor(this.len) };
    const before = this.logits;
    this.logits = tidy(() => noGrad(() => this.model.forward(ids, this.batch, width, opts)));
    releaseBuffer(before.data); // views of it were valid until this feed (lastLogits)
  }

  /**
   * Returns the cache and the last logits to the engine's pool; the session is unusable after (a draw or a feed
   * throws). A second call does nothing: releasing the logits twice would let the pool hand one buffer out twice.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.cache.release();
    releaseBuffer(this.logits.data);
  }

  /** Row b's logits after its last fed token: (V) (a view; valid until the next `feed`). */
  lastLogits(b: number): Float32Array {
    const steps = this.logits.shape[1]!;
    const v = this.vocab;
    return this.logits.data.subarray((b * steps + steps - 1) * v, (b * steps + steps) * v);
  }

  /** The padding mask over the first `len` slots, when any prompt was padded. */
  private maskFor(len: number): { mask?: Float32Array } {
    return this.anyPad ? { mask: prefix(this.mask, this.batch, this.total, len) } : {};
  }
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
