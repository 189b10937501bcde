/**
 * The batch scheduler: rows (one per prompt × n) from concurrent requests are gathered for `batchWindowMs`, then
 * decoded together through one KV-cache `DecodeSession` (src/sampling/sample.ts) — one prefill over the
 * left-padded prompts, then one forward per step for the whole batch. Rows that arrive while a batch decodes wait
 * for the next batch (static batching: a batch runs until its last row ends; there is no continuous batching).
 *
 * Each row brings its own draw settings (temperature, top_p), budget, stop strings and random stream, so rows of
 * different requests share forwards but not randomness: a row's draws come from its own `Rng`, never from its batch
 * position. The token choice is the sampler's own `drawToken` on the row's logits, and a row ends exactly as in
 * `sample()`: at eos or a stop string (finish "stop", the token kept) or at its budget (finish "length").
 *
 * Between steps the scheduler yields to the event loop, so streamed tokens are flushed and new requests are read
 * while a batch decodes.
 */
import { drawToken, type DrawOptions } from "../../sampling/filter.js";
import { DecodeSession } from "../../sampling/sample.js";
import { StopWatcher } from "../../sampling/stop.js";
import { Rng } from "../../util/index.js";
import type { RgbImage } from "../../util/image.js";
import { OpenAIError } from "./errors.js";
import type { ModelHost } from "./host.js";

/** One row to decode. */
export interface RowRequest {
  /** Prompt token ids (non-empty, each below the vocabulary size). */
  prompt: number[];
  /** The images of the prompt's image placeholders (a vision-language model; ./images.ts checked the count). */
  images?: readonly RgbImage[];
  /** Most tokens to generate (>= 1). */
  maxTokens: number;
  draws: DrawOptions;
  /** The row's own random stream. */
  rng: Rng;
  stop: string[];
  /** How many top log-probs to record per token (0 = none). */
  topLogprobs: number;
  /** Called after each sampled token, in order. */
  onToken?: (token: number, logprob: number, top: TopLogprob[] | null) => void;
  /** Set by the caller when the client went away: the row ends at the next step. */
  cancelled?: boolean;
}

/** A token id and log_softmax(logits / T) at it. */
export type TopLogprob = [token: number, logprob: number];

/** One decoded row. */
export interface RowResult {
  tokens: number[];
  logprobs: number[];
  /** Per token, the `topLogprobs` most likely tokens (null when none were asked for). */
  top: TopLogprob[][] | null;
  finishReason: "stop" | "length";
}

/** Scheduler limits (from the server options). */
export interface SchedulerLimits {
  maxBatchRows: number;
  batchWindowMs: number;
  maxWaitingRows: number;
}

interface Waiting {
  row: RowRequest;
  resolve: (r: RowResult) => void;
  reject: (err: unknown) => void;
}

/** Gathers rows into batches and decodes them. */
export class BatchScheduler {
  private readonly waiting: Waiting[] = [];
  private running = false;
  private readonly idleWaiters: (() => void)[] = [];
  /** Sizes of the batches run so far (for /metrics-style inspection and the batching test). */
  readonly batchSizes: number[] = [];

  constructor(
    private readonly host: ModelHost,
    private readonly limits: SchedulerLimits,
  ) {}

  /** Rows waiting for a batch. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Queues the rows of one request; resolves with their results in order. 429 when too many rows wait. */
  submit(rows: RowRequest[]): Promise<RowResult[]> {
    try {
      this.checkRoom(rows.length);
    } catch (err) {
      return Promise.reject(err);
    }
    const out = rows.map(
      (row) => new Promise<RowResult>((resolve, reject) => this.waiting.push({ row, resolve, reject })),
    );
    void this.pump();
    return Promise.all(out);
  }

  /** Throws a 429 OpenAIError when `rows` more rows would exceed `maxWaitingRows`. */
  checkRoom(rows: number): void {
    if (this.waiting.length + rows > this.limits.maxWaitingRows) {
      const msg = `${this.waiting.length} rows are waiting (at most ${this.limits.maxWaitingRows}); retry shortly`;
      throw new OpenAIError(429, "rate_limit_error", msg, null, "too_many_waiting_rows");
    }
  }

  /** Resolves once no row waits or decodes. */
  idle(): Promise<void> {
    if (!this.running && this.waiting.length === 0) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      if (this.limits.batchWindowMs > 0) await new Promise((r) => setTimeout(r, this.limits.batchWindowMs));
      while (this.waiting.length > 0) {
        const batch = this.take();
        try {
          const results = await this.decode(batch.map((w) => w.row));
          batch.forEach((w, i) => w.resolve(results[i]!));
        } catch (err) {
          for (const w of batch) w.reject(err);
        }
      }
    } finally {
      this.running = false;
      for (const wake of this.idleWaiters.splice(0)) wake();
    }
  }

  /** The longest prefix of the queue that fits one batch: row count, and longest prompt + largest budget in context. */
  private take(): Waiting[] {
    const context = this.host.contextLength;
    let promptLen = 0;
    let budget = 0;
    let n = 0;
    for (const w of this.waiting) {
      const p = Math.max(promptLen, w.row.prompt.length);
      const m = Math.max(budget, w.row.maxTokens);
      if (n > 0 && (n >= this.limits.maxBatchRows || p + m > context)) break;
      promptLen = p;
      budget = m;
      n++;
    }
    return this.waiting.splice(0, n);
  }

  /** Decodes one batch (see the file comment); the weights are those served when the batch starts. */
  private async decode(rows: RowRequest[]): Promise<RowResult[]> {
    this.batchSizes.push(rows.length);
    const { model, tokenizer } = this.host.current;
    const budget = Math.max(...rows.map((r) => r.maxTokens));
    // The session's own draw settings and streams are unused: each row draws with its own.
    const session = new DecodeSession(
      model,
      tokenizer,
      rows.map((r) => r.prompt),
      {
        maxSlots: budget,
        rng: new Rng(0),
        ...(rows.some((r) => r.images?.length) ? { images: rows.map((r) => r.images ?? null) } : {}),
      },
    );
    const watchers = rows.map((r) => new StopWatcher(tokenizer, r.stop));
    const out: RowResult[] = rows.map((r) => ({
      tokens: [],
      logprobs: [],
      top: r.topLogprobs > 0 ? [] : null,
      finishReason: "length",
    }));
    const done = rows.map(() => false);
    for (;;) {
      const next = new Int32Array(rows.length).fill(tokenizer.padId);
      rows.forEach((row, b) => {
        if (done[b]) return;
        if (row.cancelled) return void (done[b] = true);
        const logits = session.lastLogits(b);
        const { token, logprob } = drawToken(logits, row.draws, row.rng);
        const o = out[b]!;
        const top = row.topLogprobs > 0 ? topLogprobs(logits, row.draws.temperature, row.topLogprobs) : null;
        o.tokens.push(token);
        o.logprobs.push(logprob);
        if (top) o.top!.push(top);
        next[b] = token;
        row.onToken?.(token, logprob, top);
        if (token === tokenizer.eosId || watchers[b]!.hit(o.tokens)) {
          o.finishReason = "stop";
          done[b] = true;
        } else if (o.tokens.length >= row.maxTokens) done[b] = true;
      });
      if (done.every(Boolean)) break;
      session.feed(next, 1);
      await new Promise((r) => setImmediate(r)); // let streams flush and new requests queue
    }
    session.close(); // the KV cache goes back to the engine's pool for the next batch
    return out;
  }
}

/** The k most likely tokens under log_softmax(logits / T) (T = 1 when greedy), most likely first. */
export function topLogprobs(logits: Float32Array, temperature: number, k: number): TopLogprob[] {
  const t = temperature > 0 ? temperature : 1;
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i]! > max) max = logits[i]!;
  let z = 0;
  for (let i = 0; i < logits.length; i++) z += Math.exp((logits[i]! - max) / t);
  const logZ = Math.log(z);
  const best: number[] = []; // ids, most likely first (k is small: insertion into a short sorted list)
  for (let i = 0; i < logits.length; i++) {
    if (best.length === k && logits[i]! <= logits[best[k - 1]!]!) continue;
    let j = Math.min(best.length, k - 1);
    while (j > 0 && logits[best[j - 1]!]! < logits[i]!) j--;
    best.splice(j, 0, i);
    if (best.length > k) best.pop();
  }
  return best.map((id) => [id, (logits[id]! - max) / t - logZ]);
}
