/**
 * What the reward service's server (producer) and its workers (consumers) must agree on when items travel through a
 * Redis queue (BullMQ; docs/reward-service.md "Workers and the Redis queue"): the job's name and data, how a job id
 * derives from the request and its items, how long finished jobs are kept, and how a Redis URL is reached and named
 * in errors (without its password).
 *
 * A job carries a run of consecutive items of one request (`jobItems` of them, 1 for one job per item): each job
 * costs several Redis round trips, which a run of quick maths checks would otherwise spend most of its time on.
 * Job ids are a hash of the request id, the index of the run's first item and the items themselves: a job that
 * BullMQ retries (after a worker died holding it) keeps its id, and adding a job whose id is already in Redis adds
 * nothing, so no item can be scored into two results. Hashing the items as well means a client that reuses a
 * request id for different items gets fresh jobs rather than someone else's results.
 */
import { createHash } from "node:crypto";
import { Queue } from "bullmq";
import type { ScoreItem } from "./schemas.js";

/** The queue name used when none is given (`--queue`). BullMQ keys live under `bull:<name>:...`. */
export const DEFAULT_QUEUE = "rlvr-rewards";

/** The name every score job carries (one kind of job per queue). */
export const JOB_NAME = "score";

/** Job data format version: a worker refuses data of another version rather than misreading it. */
export const JOB_FORMAT = 2;

/** What a score job carries: a run of a request's items, their time limit, and the request's deadline. */
export interface ScoreJobData {
  format: typeof JOB_FORMAT;
  items: ScoreItem[];
  /** The request's per-item time limit (ms). */
  timeoutMs: number;
  /** `Date.now()` on the server when the request stops waiting; a worker that takes the job later skips it. */
  deadline: number;
}

/**
 * Finished jobs are kept this long (seconds) and at most this many, so a duplicate add (a client retrying with the
 * same X-Request-Id) finds the result instead of scoring again, while Redis memory stays bounded.
 */
export const KEEP_FINISHED = { age: 600, count: 20_000 } as const;

/** Length the queue's event stream is trimmed to; large enough that a busy server never falls behind it. */
export const EVENTS_MAX_LEN = 100_000;

/**
 * Connection options for a long-lived BullMQ connection to `url`: reconnect attempts 200 ms apart, growing to 2 s
 * (BullMQ's default grows to 20 s, which would keep a server failing items long after Redis came back).
 */
export function connectionTo(url: string): { url: string; retryStrategy(times: number): number } {
  return { url, retryStrategy: (times) => Math.min(200 * times, 2000) };
}

/**
 * Time a worker keeps back from the request's deadline (ms), so that its results, timeouts included, reach the
 * server before the server stops waiting: a tenth of the item limit, at most 1 s.
 */
export function reportMarginMs(timeoutMs: number): number {
  return Math.min(1000, Math.floor(timeoutMs / 10));
}

/**
 * A job's id: sha256 of the request id, the hash of the request's content, and the job's first item and item count,
 * in hex (BullMQ ids must not contain ':'). The content hash is the server's sha256 of the raw request body
 * (`contentHashOf` when there is no body), so the same id with other items is other jobs.
 */
export function jobIdOf(requestId: string, contentHash: string, first: number, count: number): string {
  return createHash("sha256").update(`${requestId}\u0000${contentHash}\u0000${first}\u0000${count}`).digest("hex");
}

/** The content hash of items that came without a raw body (a direct `QueueScorer.score` call): sha256 of their JSON. */
export function contentHashOf(items: readonly ScoreItem[]): string {
  return createHash("sha256").update(JSON.stringify(items)).digest("hex");
}

/** The URL as it may appear in logs and errors: the password replaced by `***`. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return url;
  }
}

/** Checks that `url` is a redis:// or rediss:// URL; the error says what is expected. */
export function checkRedisUrl(url: string): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new RangeError(`redis: "${redactUrl(url)}" is not a URL (expected redis://host:port[/db])`);
  }
  if (u.protocol !== "redis:" && u.protocol !== "rediss:") {
    throw new RangeError(`redis: "${redactUrl(url)}" must start with redis:// or rediss://`);
  }
}

/**
 * Connects once to `url` without retrying and resolves when Redis answers, or rejects with an error that names the
 * URL and the reason (refused, timed out, wrong password, Redis too old for BullMQ). Run before starting a server or
 * a worker, so that a wrong URL fails at start instead of retrying forever in the background.
 */
export async function probeRedis(url: string, timeoutMs = 3000): Promise<void> {
  checkRedisUrl(url);
  const probe = new Queue("rlvr-probe", {
    connection: { url, retryStrategy: () => null, connectTimeout: timeoutMs, enableOfflineQueue: false },
    skipMetasUpdate: true, // writes nothing to Redis
  });
  let lastError: unknown;
  probe.on("error", (err) => (lastError = err));
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs + 500);
  });
  try {
    await Promise.race([
      probe.waitUntilReady().then(async () => ((await probe.client) as unknown as Pinger).ping()),
      timeout,
    ]);
  } catch (err) {
    const reason = messageOf(lastError ?? err) || messageOf(err);
    throw new Error(`cannot reach Redis at ${redactUrl(url)}: ${reason}`);
  } finally {
    clearTimeout(timer);
    await probe.close().catch(() => undefined);
  }
}

/** ioredis's ping, which BullMQ's client interface does not declare. */
interface Pinger {
  ping(): Promise<string>;
}

/** An error's message (AggregateErrors from a failed multi-address connect list their parts). */
export function messageOf(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length) return err.errors.map(messageOf).join("; ");
  if (err instanceof Error) return err.message || (err as NodeJS.ErrnoException).code || err.name;
  return String(err);
}
