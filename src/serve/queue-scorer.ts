/**
 * The server's side of the Redis queue (`rlvr serve-rewards --redis URL`): a score request's items become BullMQ jobs
 * of `jobItems` consecutive items each, workers (`rlvr reward-worker`, worker.ts) score them with the same
 * `scoreItems` as in-process scoring, and the results come back through the queue's event stream (QueueEvents) to
 * the request, which answers in order with one result per item. docs/reward-service.md "Workers and the Redis queue"
 * states the guarantees; here is how:
 *
 * - One result per item: each waiting job resolves once (the first of its results, the deadline, or Redis loss)
 *   into one result per item; a job that BullMQ re-runs after a worker died keeps its id, and only one run can
 *   complete it.
 * - Duplicate ids (a client retrying with the same X-Request-Id): the add is a no-op that BullMQ reports as
 *   `duplicated`; the waiter then reads the existing job, finished or not.
 * - Deadlines: the worker answers items it could not finish as `timeout` a little before the deadline
 *   (queue-settings.ts `reportMarginMs`); items whose job is still out at the deadline get `timeout` here (after one
 *   last look at the job, so results that just landed are not thrown away).
 * - Redis loss: while Redis is unreachable new jobs are retried, and once it has been unreachable for
 *   `queueGraceMs` every waiting item gets `queue-unavailable` naming the URL. When Redis comes back (a restart
 *   without persistence loses every job), each waiting item's job is looked up again and re-added when missing.
 */
import { Queue, QueueEvents } from "bullmq";
import {
  connectionTo,
  EVENTS_MAX_LEN,
  JOB_FORMAT,
  JOB_NAME,
  KEEP_FINISHED,
  contentHashOf,
  jobIdOf,
  messageOf,
  probeRedis,
  redactUrl,
  type ScoreJobData,
} from "./queue-settings.js";
import { itemError } from "./score-items.js";
import type { ItemResult, ScoreItem } from "./schemas.js";

/** Where the queue lives, items per job, and how long the server waits for Redis to come back. */
export interface QueueScorerOptions {
  redis: string;
  queue: string;
  queueGraceMs: number;
  jobItems: number;
}

/** Job counts for /metrics: waiting for a worker, being scored, and items this server waits on. */
export interface QueueSnapshot {
  up: boolean;
  waiting: number;
  active: number;
  awaiting: number;
  readded: number;
}

/** A job's results: one per item, or one outcome for all of them (a failure, Redis lost). */
type Outcome = ItemResult[] | ItemResult;

/** One request's job waiting for its results. */
interface Waiter {
  id: string;
  data: ScoreJobData;
  resolve(outcome: Outcome): void;
}

/** The ioredis calls used here that BullMQ's client interface does not declare. */
interface RawClient {
  status: string;
  xrevrange(key: string, end: string, start: string, count: "COUNT", n: number): Promise<unknown>;
}

/** How often the connection is checked while items wait (ms). */
const WATCH_MS = 100;

/** How long closing waits for Redis to acknowledge before it just disconnects (ms). */
const CLOSE_WAIT_MS = 2000;

/** Jobs looked up at once after an outage. */
const LOOKUP_CHUNK = 64;

/** Scores items through the queue; `connect` checks Redis first and fails naming the URL. */
export class QueueScorer {
  private readonly waiting = new Map<string, Set<Waiter>>();
  private downSince: number | null = null;
  private lastError = "";
  private watch: NodeJS.Timeout | null = null;
  private readded = 0;
  private closed = false;

  private constructor(
    private readonly options: QueueScorerOptions,
    private readonly queue: Queue,
    private readonly events: QueueEvents,
  ) {
    const onError = (err: unknown) => (this.lastError = messageOf(err));
    queue.on("error", onError);
    // A dropped connection is noticed at once, so that a quick Redis restart (which loses the jobs) is seen.
    queue.on("ioredis:close", () => {
      this.downSince ??= Date.now();
      this.startWatch();
    });
    events.on("error", onError);
    events.on("completed", ({ jobId, returnvalue }) => this.settle(jobId, returnvalue as unknown as Outcome));
    events.on("failed", ({ jobId, failedReason }) => this.settle(jobId, failedResult(failedReason)));
    events.on("duplicated", ({ jobId }) => void this.lookUp([jobId]));
  }

  /** Probes Redis (fails at once, naming the URL), then opens the queue and its event stream. */
  static async connect(options: QueueScorerOptions): Promise<QueueScorer> {
    await probeRedis(options.redis);
    const connection = connectionTo(options.redis);
    const queue = new Queue<ScoreJobData, ItemResult>(options.queue, {
      connection: { ...connection, enableOfflineQueue: false },
      streams: { events: { maxLen: EVENTS_MAX_LEN } },
    });
    await queue.waitUntilReady();
    // Start reading events after the newest one now in the stream, so nothing between here and the first read is lost.
    const client = (await queue.client) as unknown as RawClient;
    const last = (await client.xrevrange(queue.keys.events!, "+", "-", "COUNT", 1)) as [string, unknown][];
    const events = new QueueEvents(options.queue, { connection, lastEventId: last[0]?.[0] ?? "0-0" });
    await events.waitUntilReady();
    return new QueueScorer(options, queue, events);
  }

  /**
   * Scores `items` of one request through the queue; one result per item, in order, never a rejection. Job ids come
   * from `requestId` and `contentHash` (the server's hash of the raw body; by default the hash of the items' JSON),
   * so a retried request with the same id and content finds its jobs instead of scoring again.
   */
  async score(
    items: readonly ScoreItem[],
    requestId: string,
    itemTimeoutMs: number,
    observe?: (index: number, result: ItemResult) => void,
    contentHash: string = contentHashOf(items),
  ): Promise<ItemResult[]> {
    const deadline = Date.now() + itemTimeoutMs;
    const jobs: { id: string; data: ScoreJobData; first: number }[] = [];
    for (let first = 0; first < items.length; first += this.options.jobItems) {
      const run = items.slice(first, first + this.options.jobItems);
      const data: ScoreJobData = { format: JOB_FORMAT, items: run, timeoutMs: itemTimeoutMs, deadline };
      jobs.push({ id: jobIdOf(requestId, contentHash, first, run.length), data, first });
    }
    const results = jobs.map((job) =>
      this.wait(job.id, job.data, itemTimeoutMs).then((rs) => {
        rs.forEach((r, k) => observe?.(job.first + k, r));
        return rs;
      }),
    );
    void this.add(jobs);
    return (await Promise.all(results)).flat();
  }

  /** Queue figures for /metrics (null counts while Redis is unreachable). */
  async snapshot(): Promise<QueueSnapshot> {
    let awaiting = 0;
    for (const set of this.waiting.values()) for (const w of set) awaiting += w.data.items.length;
    const base = { awaiting, readded: this.readded };
    try {
      const c = await this.queue.getJobCounts("waiting", "prioritized", "active");
      return { up: true, waiting: (c.waiting ?? 0) + (c.prioritized ?? 0), active: c.active ?? 0, ...base };
    } catch {
      return { up: false, waiting: NaN, active: NaN, ...base };
    }
  }

  /** Answers every waiting item with `queue-unavailable`, then closes the queue and the event stream. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.failAll("the reward server is shutting down");
    clearInterval(this.watch ?? undefined);
    // A graceful close waits for Redis to acknowledge; when Redis is gone that never comes, so it is bounded.
    const graceful = Promise.allSettled([this.events.close(), this.queue.close()]).then(() => true);
    const timedOut = new Promise<false>((r) => setTimeout(() => r(false), CLOSE_WAIT_MS).unref());
    if (!(await Promise.race([graceful, timedOut]))) {
      await Promise.allSettled([this.events.disconnect(), this.queue.disconnect()]);
    }
  }

  /** Adds jobs (ids already in Redis add nothing); while Redis is down, retries until the items give up. */
  private async add(jobs: { id: string; data: ScoreJobData }[]): Promise<void> {
    for (;;) {
      const pending = jobs.filter((j) => this.waiting.has(j.id));
      if (pending.length === 0 || this.closed) return;
      try {
        await this.queue.addBulk(pending.map((j) => ({ name: JOB_NAME, data: j.data, opts: jobOptions(j.id) })));
        return;
      } catch (err) {
        this.lastError = messageOf(err);
        this.downSince ??= Date.now();
        this.startWatch();
        await new Promise((r) => setTimeout(r, WATCH_MS));
      }
    }
  }

  /** Registers a waiter for job `id`, answered by its result, its deadline, or a lost connection. */
  private wait(id: string, data: ScoreJobData, itemTimeoutMs: number): Promise<ItemResult[]> {
    return new Promise((resolveJob) => {
      let timer: NodeJS.Timeout | undefined;
      const waiter: Waiter = {
        id,
        data,
        resolve: (outcome) => {
          const set = this.waiting.get(id);
          if (!set?.delete(waiter)) return; // answered already
          if (set.size === 0) this.waiting.delete(id);
          clearTimeout(timer);
          resolveJob(spread(outcome, data.items.length));
        },
      };
      timer = setTimeout(() => void this.expire(waiter, itemTimeoutMs), itemTimeoutMs);
      let set = this.waiting.get(id);
      if (!set) this.waiting.set(id, (set = new Set()));
      set.add(waiter);
      this.startWatch();
    });
  }

  /** At the deadline: one last look at the job (its results may have just landed), else `timeout` for each item. */
  private async expire(waiter: Waiter, itemTimeoutMs: number): Promise<void> {
    if (this.downSince === null) await this.lookUp([waiter.id], false).catch(() => undefined);
    if (this.downSince !== null) return waiter.resolve(this.unavailable());
    const what = (item: ScoreItem) => ("reward" in item ? `reward ${item.reward}` : `task ${item.task}`);
    const late = (item: ScoreItem) =>
      itemError("timeout", `${what(item)} took longer than itemTimeoutMs (${itemTimeoutMs} ms) in the queue`);
    waiter.resolve(waiter.data.items.map(late));
  }

  /** Resolves every waiter of job `id` with `outcome`. */
  private settle(id: string, outcome: Outcome): void {
    for (const w of [...(this.waiting.get(id) ?? [])]) w.resolve(outcome);
  }

  /** Reads jobs from Redis: finished ones settle their waiters; missing ones are re-added when `readd`. */
  private async lookUp(ids: string[], readd = true): Promise<void> {
    const missing: { id: string; data: ScoreJobData }[] = [];
    for (let at = 0; at < ids.length; at += LOOKUP_CHUNK) {
      const chunk = ids.slice(at, at + LOOKUP_CHUNK);
      const jobs = await Promise.all(chunk.map((id) => this.queue.getJob(id)));
      chunk.forEach((id, i) => {
        const job = jobs[i];
        if (!job) {
          const w = this.waiting.get(id)?.values().next().value;
          if (w) missing.push({ id, data: w.data });
        } else if (job.finishedOn) {
          this.settle(id, job.failedReason ? failedResult(job.failedReason) : (job.returnvalue as Outcome));
        }
      });
    }
    if (readd && missing.length) {
      this.readded += missing.length;
      await this.add(missing);
    }
  }

  /** Watches the connection while items wait: grace period, failing everything, and recovery. */
  private startWatch(): void {
    if (this.watch || this.closed) return;
    this.watch = setInterval(() => void this.check(), WATCH_MS);
  }

  private async check(): Promise<void> {
    if (this.waiting.size === 0 && this.downSince === null) {
      clearInterval(this.watch!);
      this.watch = null;
      return;
    }
    const up = await this.queue.client.then((c) => (c as unknown as RawClient).status === "ready");
    if (!up) {
      this.downSince ??= Date.now();
      if (Date.now() - this.downSince >= this.options.queueGraceMs) this.failAll();
      return;
    }
    if (this.downSince !== null) {
      // Back after an outage: jobs may be gone (a restart without persistence), results may have been missed.
      this.downSince = null;
      await this.lookUp([...this.waiting.keys()]).catch((err) => (this.lastError = messageOf(err)));
    }
  }

  private failAll(why?: string): void {
    const result = this.unavailable(why);
    for (const set of [...this.waiting.values()]) for (const w of [...set]) w.resolve(result);
  }

  private unavailable(why?: string): ItemResult {
    const since = this.downSince === null ? "" : ` for ${Date.now() - this.downSince} ms`;
    if (why) return itemError("queue-unavailable", why);
    const reason = `Redis at ${redactUrl(this.options.redis)} unreachable${since}`;
    return itemError("queue-unavailable", `${reason}${this.lastError ? ` (${this.lastError})` : ""}`);
  }
}

/** Options of every score job: its id, one attempt (a worker's scoring never throws), and bounded retention. */
function jobOptions(jobId: string) {
  return { jobId, attempts: 1, removeOnComplete: KEEP_FINISHED, removeOnFail: KEEP_FINISHED };
}

/** A job that failed on the workers (e.g. it stalled more than maxStalledCount times: it kept killing them). */
function failedResult(reason: string): ItemResult {
  return itemError("reward-failed", `the item's job failed on the workers: ${reason}`);
}

/** A job's outcome as one result per item; a worker that answers the wrong count fails the job's items. */
function spread(outcome: Outcome, n: number): ItemResult[] {
  if (!Array.isArray(outcome)) return Array.from({ length: n }, () => outcome);
  if (outcome.length === n) return outcome;
  return spread(itemError("reward-failed", `a worker answered ${outcome.length} results for a job of ${n} items`), n);
}
