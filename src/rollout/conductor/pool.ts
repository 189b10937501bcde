/**
 * The Conductor's worker pool (issue 13; arXiv 2512.04388 §3.1): any sampler can be a worker. A worker has an id, a
 * description the planner sees, a token budget and a cost, and answers one prompt at a time:
 *
 * - `checkpointWorker`: a built-in model sampled with the KV-cache sampler (src/sampling/sample.ts), frozen: it is
 *   never handed to an optimizer, so no gradient reaches it;
 * - `openaiWorker`: any OpenAI-compatible server (vLLM, SGLang, llama.cpp, rlvr's own model server) through
 *   `POST {baseUrl}/chat/completions`, with a small fetch client;
 * - `programWorker`: an exact program (the conductor task's skills), for tests and planner smoke runs.
 *
 * Departures: a built-in worker's sampling is synchronous CPU work, so the executor's timeout cannot stop it
 * mid-call; its token budget bounds it instead. The timeout does abort an HTTP call (AbortSignal).
 */
import type { Transformer } from "../../models/transformer.js";
import type { Tokenizer } from "../../models/tokenizer.js";
import { sample } from "../../sampling/sample.js";
import { promptIds } from "../groups.js";
import { ConfigError, Rng } from "../../util/index.js";

/** One call to a worker: the rendered prompt, and its parts for workers that read structure. */
export interface WorkerCall {
  /** The step's prompt as a model sees it (src/rollout/conductor/executor.ts `stepPrompt`). */
  prompt: string;
  /** The step's subtask. */
  subtask: string;
  /** Outputs of the steps in its access list, in list order. */
  context: readonly string[];
  /** Aborted when the call times out. */
  signal: AbortSignal;
}

/** A worker's answer. */
export interface WorkerReply {
  text: string;
  /** Output tokens the worker spent. */
  tokens: number;
}

/** A worker of the pool. */
export interface Worker {
  /** Name shown to the planner beside its index. */
  id: string;
  /** What the planner is told it does. */
  description: string;
  /** Most output tokens per call. */
  maxTokens: number;
  /** Cost per 1,000 output tokens (reported per chain). */
  cost: number;
  /** Answers one call; may throw (the executor records the failure in the chain). */
  generate(call: WorkerCall): Promise<WorkerReply>;
}

/** The fields every worker kind shares. */
export interface WorkerInfo {
  id: string;
  description: string;
  maxTokens: number;
  cost: number;
}

/** Checks a worker's shared fields; errors name the worker and the field. */
function checkInfo(w: WorkerInfo): WorkerInfo {
  if (!w.id) throw new ConfigError("worker: id must be a non-empty string");
  if (!w.description) throw new ConfigError(`worker ${w.id}: description must be non-empty`);
  if (!Number.isInteger(w.maxTokens) || w.maxTokens < 1)
    throw new ConfigError(`worker ${w.id}: maxTokens must be a positive integer, got ${w.maxTokens}`);
  if (!(w.cost >= 0)) throw new ConfigError(`worker ${w.id}: cost must be ≥ 0, got ${w.cost}`);
  return { id: w.id, description: w.description, maxTokens: w.maxTokens, cost: w.cost };
}

/** A pool of workers; the plan's `model_id` is an index into it. Ids must be distinct. */
export class WorkerPool {
  readonly workers: readonly Worker[];
  constructor(workers: readonly Worker[]) {
    if (workers.length === 0) throw new ConfigError("worker pool: at least one worker is needed");
    const seen = new Set<string>();
    for (const w of workers) {
      if (seen.has(w.id)) throw new ConfigError(`worker pool: duplicate worker id "${w.id}"`);
      seen.add(w.id);
    }
    this.workers = workers;
  }
  /** Number of workers (valid plan ids are 0 .. size - 1). */
  get size(): number {
    return this.workers.length;
  }
  /** The listing the planner sees: `index id: description`, one a line. */
  describe(): string {
    return this.workers.map((w, i) => `${i} ${w.id}: ${w.description}`).join("\n");
  }
}

/** Options of a built-in checkpoint worker. */
export interface CheckpointWorkerOptions extends WorkerInfo {
  model: Transformer;
  tokenizer: Tokenizer;
  /** 0 = greedy (default), so a chain is reproducible. */
  temperature?: number;
  /** Seed of the worker's own random stream (only read when temperature > 0). */
  seed?: number;
  /** Most calls answered by one batched sampler call (default 64). */
  maxBatch?: number;
}

interface Pending {
  prompt: number[];
  resolve(r: WorkerReply): void;
  reject(e: unknown): void;
}

/**
 * A built-in model as a worker: prompt → bos + ids → KV-cache sampling until eos or the budget. Calls made in the
 * same turn of the event loop (the same step of every chain being scored) are answered by one batched sampler call
 * of at most `maxBatch` rows (left-padded, so each row's greedy answer is its answer alone); the batch's token
 * budget is the worker's, lowered to the room the longest prompt leaves in `maxSeqLen`.
 */
export function checkpointWorker(o: CheckpointWorkerOptions): Worker {
  const info = checkInfo(o);
  const maxBatch = o.maxBatch ?? 64;
  if (!Number.isInteger(maxBatch) || maxBatch < 1)
    throw new ConfigError(`worker ${info.id}: maxBatch must be a positive integer, got ${maxBatch}`);
  const rng = new Rng(o.seed ?? 0);
  let queue: Pending[] = [];
  const flush = () => {
    const all = queue;
    queue = [];
    for (let at = 0; at < all.length; at += maxBatch) {
      const batch = all.slice(at, at + maxBatch);
      try {
        const room = o.model.config.maxSeqLen - Math.max(...batch.map((b) => b.prompt.length));
        const out = sample(
          o.model,
          o.tokenizer,
          batch.map((b) => b.prompt),
          { maxNewTokens: Math.min(info.maxTokens, room), temperature: o.temperature ?? 0, rng },
        );
        out.forEach((s, i) => batch[i]!.resolve({ text: s.text, tokens: s.tokens.length }));
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
  };
  return {
    ...info,
    generate(call) {
      const prompt = promptIds(o.tokenizer, call.prompt);
      if (prompt.length >= o.model.config.maxSeqLen)
        return Promise.reject(new Error(`prompt of ${prompt.length} tokens leaves no room in maxSeqLen`));
      return new Promise<WorkerReply>((resolve, reject) => {
        if (queue.length === 0) setImmediate(flush);
        queue.push({ prompt, resolve, reject });
      });
    },
  };
}

/** A failure of a worker's infrastructure (transport, HTTP status, malformed server reply), not of its answer. */
export class WorkerInfraError extends Error {
  override readonly name = "WorkerInfraError";
}

/** Options of an OpenAI-compatible worker. */
export interface OpenAiWorkerOptions extends WorkerInfo {
  /** Base URL up to and including the version, e.g. http://localhost:8000/v1. */
  baseUrl: string;
  model: string;
  apiKey?: string;
  temperature?: number;
  /** The fetch to use (default the global one). */
  fetch?: typeof fetch;
}

/** A model behind an OpenAI-compatible server: one user message, `max_tokens` = the worker's budget. */
export function openaiWorker(o: OpenAiWorkerOptions): Worker {
  const info = checkInfo(o);
  const url = `${o.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  const doFetch = o.fetch ?? fetch;
  return {
    ...info,
    async generate(call) {
      const res = await doFetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...(o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {}) },
        body: JSON.stringify({
          model: o.model,
          messages: [{ role: "user", content: call.prompt }],
          max_tokens: info.maxTokens,
          temperature: o.temperature ?? 0,
        }),
        signal: call.signal,
      }).catch((err: unknown) => {
        if (call.signal?.aborted) throw err; // the executor's timeout, which it records itself
        throw new WorkerInfraError(`${url}: ${err instanceof Error ? err.message : String(err)}`);
      });
      const body = await res.text();
      if (!res.ok) throw new WorkerInfraError(`${url}: HTTP ${res.status}: ${body.slice(0, 200)}`);
      return parseChatReply(body, url);
    },
  };
}

/** Reads `choices[0].message.content` and `usage.completion_tokens` (estimated as chars/4 when absent). */
export function parseChatReply(body: string, source: string): WorkerReply {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new WorkerInfraError(`${source}: reply is not JSON: ${body.slice(0, 200)}`);
  }
  const j = json as { choices?: { message?: { content?: unknown } }[]; usage?: { completion_tokens?: unknown } };
  const text = j.choices?.[0]?.message?.content;
  if (typeof text !== "string") throw new WorkerInfraError(`${source}: reply has no choices[0].message.content string`);
  const used = j.usage?.completion_tokens;
  const tokens = typeof used === "number" && Number.isFinite(used) ? used : Math.ceil(text.length / 4);
  return { text, tokens };
}

/** An exact program as a worker; its output is cut to `maxTokens` characters (one token per character). */
export function programWorker(
  o: WorkerInfo & { run(subtask: string, context: readonly string[]): string | Promise<string> },
): Worker {
  const info = checkInfo(o);
  return {
    ...info,
    async generate(call) {
      const text = (await o.run(call.subtask, call.context)).slice(0, info.maxTokens);
      return { text, tokens: text.length };
    },
  };
}
