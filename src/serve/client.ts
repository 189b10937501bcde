/**
 * A TypeScript client of the reward service (`rlvr serve-rewards`, docs/reward-service.md) on Node's fetch, for
 * trainers and tools written in TypeScript; the Python twin is clients/python/rlvr_client.py. Both follow the same
 * rules (docs/reward-clients.md):
 * - batching: `score(items)` sends at most `batchSize` items per request and returns one result per item, in order;
 * - retries: a connection failure, a 429 (after its Retry-After, or the back-off if longer) and a 5xx are retried up
 *   to `retries` times, waiting `backoffMs · 2^attempt` (at most `maxBackoffMs`); any other 4xx is thrown at once,
 *   since the same request would fail again;
 * - timeout: a request that outlives `timeoutMs` throws code `timeout` and is not retried (the server is still
 *   working on it, and sending it again doubles the load).
 */
import { randomUUID } from "node:crypto";
import type { RewardDoc } from "./catalog.js";
import type { ItemResult, ScoreItem } from "./schemas.js";

/** Options of a `RewardClient`. */
export interface RewardClientOptions {
  /** Base URL of the service, e.g. `http://127.0.0.1:8765`. */
  url: string;
  /** Bearer token, when the service requires one. */
  token?: string;
  /** Milliseconds one HTTP request may take (default 120 000). */
  timeoutMs?: number;
  /** Most items per score request; keep it at most the server's `--max-items` (default 256). */
  batchSize?: number;
  /** Retries of one request after a connection error, 429 or 5xx (default 5; 0 never retries). */
  retries?: number;
  /** Wait before the first retry in ms; doubles with each retry (default 500). */
  backoffMs?: number;
  /** Longest wait between retries in ms (default 30 000). */
  maxBackoffMs?: number;
}

/** A request the service refused or did not answer: `status` is 0 when no HTTP answer came (`timeout`, `unreachable`). */
export class RewardServiceError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues: { path: string; message: string }[] = [],
  ) {
    super(`rlvr reward service: ${status || "no answer"} ${code}: ${message}`);
    this.name = "RewardServiceError";
  }
}

/** One attempt's outcome: the parsed body, or an error with the least wait before a retry (null: do not retry). */
type Attempt = { ok: true; body: unknown } | { ok: false; error: RewardServiceError; retryAfterMs: number | null };

/** Client of one reward service; see the file comment for batching, retries and the timeout. */
export class RewardClient {
  readonly url: string;
  private readonly opts: Required<Omit<RewardClientOptions, "token" | "url">> & { token?: string };
  /** HTTP requests sent, retries included. */
  requests = 0;
  /** Of which retries. */
  retried = 0;

  constructor(options: RewardClientOptions) {
    const {
      url,
      token,
      timeoutMs = 120_000,
      batchSize = 256,
      retries = 5,
      backoffMs = 500,
      maxBackoffMs = 30_000,
    } = options;
    const bad = [
      !(Number.isInteger(batchSize) && batchSize >= 1) && `batchSize ${batchSize} (an integer >= 1)`,
      !(Number.isInteger(retries) && retries >= 0) && `retries ${retries} (an integer >= 0)`,
      !(timeoutMs > 0) && `timeoutMs ${timeoutMs} (> 0)`,
      !(backoffMs >= 0 && maxBackoffMs >= 0) && `backoffMs/maxBackoffMs (>= 0)`,
    ].filter(Boolean);
    if (bad.length) throw new RangeError(`RewardClient: ${bad.join(", ")}`);
    this.url = new URL(url).toString().replace(/\/+$/, "");
    this.opts = { token, timeoutMs, batchSize, retries, backoffMs, maxBackoffMs };
  }

  /** Scores `items` in requests of at most `batchSize`; one result per item, in order. */
  async score(items: readonly ScoreItem[]): Promise<ItemResult[]> {
    const results: ItemResult[] = [];
    for (let start = 0; start < items.length; start += this.opts.batchSize) {
      const body = { items: items.slice(start, start + this.opts.batchSize) };
      const answer = (await this.request("POST", "/v1/score", body)) as { results: ItemResult[] };
      results.push(...answer.results);
    }
    return results;
  }

  /** The service's rewards with their option schemas (`GET /v1/rewards`). */
  rewards(): Promise<RewardDoc[]> {
    return this.request("GET", "/v1/rewards") as Promise<RewardDoc[]>;
  }

  /** `GET /healthz`: `{status: "ok"}` when the service is up. */
  health(): Promise<{ status: string }> {
    return this.request("GET", "/healthz") as Promise<{ status: string }>;
  }

  private async request(method: "GET" | "POST", path: string, body?: unknown): Promise<unknown> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.opts.token) headers.authorization = `Bearer ${this.opts.token}`;
    // One id for every attempt of this request: a retry after a lost answer finds its queued jobs instead of scoring
    // again (with `--redis`; docs/reward-service.md), and the retry sends the same bytes.
    if (body !== undefined) headers["x-request-id"] = randomUUID();
    const init = { method, headers, body: body === undefined ? undefined : JSON.stringify(body) };
    for (let attempt = 0; ; attempt++) {
      this.requests++;
      const outcome = await this.attempt(path, init);
      if (outcome.ok) return outcome.body;
      const { error, retryAfterMs } = outcome;
      if (retryAfterMs === null || attempt >= this.opts.retries) throw error;
      const wait = Math.max(retryAfterMs, Math.min(this.opts.maxBackoffMs, this.opts.backoffMs * 2 ** attempt));
      this.retried++;
      await new Promise((r) => setTimeout(r, wait));
    }
  }

  private async attempt(path: string, init: RequestInit & { method: string }): Promise<Attempt> {
    const what = `${init.method} ${this.url}${path}`;
    let res: Response;
    let text: string;
    try {
      res = await fetch(this.url + path, { ...init, signal: AbortSignal.timeout(this.opts.timeoutMs) });
      text = await res.text();
    } catch (err) {
      if (isTimeout(err)) {
        const error = new RewardServiceError(0, "timeout", `${what}: no answer within ${this.opts.timeoutMs} ms`);
        return { ok: false, error, retryAfterMs: null };
      }
      return {
        ok: false,
        error: new RewardServiceError(0, "unreachable", `${what}: ${causeOf(err)}`),
        retryAfterMs: 0,
      };
    }
    if (res.ok) return { ok: true, body: JSON.parse(text) };
    const error = errorOf(res.status, text);
    const retryable = res.status === 429 || res.status >= 500;
    return { ok: false, error, retryAfterMs: retryable ? retryAfterMs(res.headers.get("retry-after")) : null };
  }
}

/** The service's error body `{error: {code, message, issues?}}`, or the status alone when the body is not ours. */
function errorOf(status: number, text: string): RewardServiceError {
  try {
    const e = (JSON.parse(text) as { error?: unknown }).error;
    if (e && typeof e === "object") {
      const { code, message, issues } = e as { code?: string; message?: string; issues?: [] };
      return new RewardServiceError(status, code ?? `http-${status}`, message ?? text, issues);
    }
  } catch {
    // not JSON (a proxy's page): reported by status below
  }
  return new RewardServiceError(status, `http-${status}`, text.slice(0, 200));
}

/** Retry-After in ms (delta-seconds form); 0 when absent or an HTTP date, so the back-off decides. */
function retryAfterMs(value: string | null): number {
  const s = Number(value);
  return value !== null && Number.isFinite(s) && s >= 0 ? s * 1000 : 0;
}

function isTimeout(err: unknown): boolean {
  return err instanceof DOMException && (err.name === "TimeoutError" || err.name === "AbortError");
}

function causeOf(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}
