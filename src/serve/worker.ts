/**
 * A reward worker (`rlvr reward-worker`): consumes the score jobs that `rlvr serve-rewards --redis` enqueues (each a
 * run of a request's items) and scores them with `scoreItems`, the function in-process scoring uses, so results
 * through the queue are the same numbers and the same item errors. Code-running rewards run in this machine's sandbox pool, as they do in the
 * server. Settings and guarantees: worker-options.ts and docs/reward-service.md "Workers and the Redis queue".
 *
 * A job whose request has stopped waiting (its deadline passed while it sat in the queue, e.g. behind a backlog) is
 * answered `timeout` without scoring, so a backlog drains quickly. `close()` (SIGTERM) stops taking jobs, finishes
 * the ones in hand, then closes the sandbox pool.
 */
import { Worker, type Job } from "bullmq";
import { z } from "zod";
import { rewards as defaultRewards, type RewardRegistry } from "../rewards/index.js";
import { closeSharedPool } from "../rewards/sandbox/pool.js";
import { tasks as defaultTasks, type TaskRegistry } from "../tasks/index.js";
import {
  connectionTo,
  JOB_FORMAT,
  messageOf,
  probeRedis,
  redactUrl,
  reportMarginMs,
  type ScoreJobData,
} from "./queue-settings.js";
import { scoreItemSchema, type ItemResult } from "./schemas.js";
import { itemError, scoreItems } from "./score-items.js";
import { parseWorkerOptions, type WorkerOptions } from "./worker-options.js";

/** Default time close() gives Redis to take the results of the last jobs (ms). */
const CLOSE_WAIT_MS = 5000;

/** What `startRewardWorker` takes: the options plus the registries it scores with and optional hooks. */
export interface RewardWorkerConfig extends Partial<WorkerOptions> {
  /** Reward registry (default: every built-in reward). */
  rewards?: RewardRegistry;
  /** Task registry (default: the built-in tasks). */
  tasks?: TaskRegistry;
  /** Leave the shared sandbox pool open on close (tests that run several workers in one process). */
  keepPool?: boolean;
  /** Called with Redis and worker errors (the worker keeps reconnecting; default: ignored). */
  onError?(message: string): void;
  /** Called when a job starts (its id); tests use it to kill a worker mid-job. */
  onActive?(jobId: string): void;
  /** Called when a job in hand has saved its finished items (its id and how many are saved). */
  onSaved?(jobId: string, saved: number): void;
  /** How long close() waits, once the jobs in hand are scored, for Redis to take their results (ms). */
  closeWaitMs?: number;
}

/** A running worker. */
export interface RunningRewardWorker {
  options: WorkerOptions;
  /** Jobs (runs of items) this worker has finished. */
  processed(): number;
  /** Stops taking jobs, finishes those in hand, closes the connection (and the sandbox pool unless keepPool). */
  close(): Promise<void>;
}

/** Checks Redis (an unreachable URL fails here, naming it), then starts consuming. */
export async function startRewardWorker(config: RewardWorkerConfig): Promise<RunningRewardWorker> {
  const {
    rewards = defaultRewards,
    tasks = defaultTasks,
    keepPool = false,
    onError,
    onActive,
    onSaved,
    ...rest
  } = config;
  const { closeWaitMs = CLOSE_WAIT_MS, ...fields } = rest;
  const options = parseWorkerOptions(fields);
  await probeRedis(options.redis);
  let processed = 0;
  const inHand = new Set<Promise<Outcome>>();
  const worker = new Worker<ScoreJobData, Outcome>(
    options.queue,
    async (job) => {
      const scoring = scoreJob(job, { rewards, tasks, progressMs: options.progressMs, onSaved });
      inHand.add(scoring);
      const result = await scoring.finally(() => inHand.delete(scoring));
      processed++;
      return result;
    },
    {
      connection: connectionTo(options.redis),
      concurrency: options.concurrency,
      lockDuration: options.lockMs,
      stalledInterval: options.stalledIntervalMs,
      maxStalledCount: options.maxStalled,
    },
  );
  worker.on("error", (err) => onError?.(`${redactUrl(options.redis)}: ${messageOf(err)}`));
  if (onActive) worker.on("active", (job) => onActive(job.id ?? ""));
  await worker.waitUntilReady();
  let closing: Promise<void> | null = null;
  return {
    options,
    processed: () => processed,
    close() {
      closing ??= (async () => {
        // Stop taking jobs and finish those in hand (each is bounded by its request's deadline); then Redis has
        // closeWaitMs to take the results. When it is gone, waiting longer cannot help: disconnect.
        const graceful = worker.close().then(
          () => true,
          () => false,
        );
        const scored = Promise.allSettled([...inHand])
          .then(() => sleep(closeWaitMs))
          .then(() => false);
        if (!(await Promise.race([graceful, scored]))) await forceDisconnect(worker);
        if (!keepPool) await closeSharedPool();
      })();
      return closing;
    },
  };
}

/** Drops the worker's Redis connections without waiting for Redis (which is not answering). */
async function forceDisconnect(worker: Worker): Promise<void> {
  const conns = worker as unknown as Record<"connection" | "blockingConnection", { client: Promise<Disconnectable> }>;
  for (const c of [conns.connection, conns.blockingConnection]) (await c?.client)?.disconnect();
}

/** ioredis's disconnect, which BullMQ's client interface does not declare. */
interface Disconnectable {
  disconnect(): void;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** What a job answers: one result per item, or one error for all of them (bad job data, the deadline passed). */
type Outcome = ItemResult[] | ItemResult;

/** What scoring a job needs besides the job. */
export interface JobContext {
  rewards: RewardRegistry;
  tasks: TaskRegistry;
  progressMs: number;
  onSaved?(jobId: string, saved: number): void;
}

/**
 * Scores one job's items; never throws (a throw would make BullMQ retry a deterministic failure). Items whose results
 * an earlier worker saved (the job's progress, see worker-options.ts) are not scored again; the ones scored here are
 * saved every `progressMs` while the job runs.
 */
export async function scoreJob(job: Job<ScoreJobData, Outcome>, ctx: JobContext): Promise<Outcome> {
  const data = job.data as Partial<ScoreJobData> | undefined;
  if (data?.format !== JOB_FORMAT) {
    return itemError("reward-failed", `job ${job.id} has data format ${data?.format}; this worker reads ${JOB_FORMAT}`);
  }
  const items = z.array(scoreItemSchema).safeParse(data.items);
  if (!items.success) return itemError("reward-failed", `job ${job.id} does not hold score items`);
  const results = savedResults(job.progress, items.data.length);
  const todo = [...results.keys()].filter((i) => results[i] === null);
  if (todo.length === 0) return results as ItemResult[];
  const timeoutMs = data.timeoutMs ?? 0;
  // Items not done by then are answered `timeout` here, early enough for the server to hear it in time.
  const left = Math.min(timeoutMs, (data.deadline ?? 0) - reportMarginMs(timeoutMs) - Date.now());
  if (left <= 0) {
    const late = itemError("timeout", `the request stopped waiting before a worker took the item (${timeoutMs} ms)`);
    return todo.length === results.length ? late : results.map((r) => r ?? late);
  }
  let unsaved = 0;
  const save = setInterval(() => {
    if (unsaved === 0) return;
    const saved = results.filter((r) => r !== null).length;
    unsaved = 0;
    const progress: SavedProgress = { format: JOB_FORMAT, results };
    job.updateProgress(progress).then(
      () => ctx.onSaved?.(job.id ?? "", saved),
      () => undefined, // Redis away or the lock lost: the next save, or the result itself, carries them
    );
  }, ctx.progressMs);
  try {
    const onItem = (k: number, r: ItemResult) => {
      results[todo[k]!] = r;
      unsaved++;
    };
    await scoreItems(todo.length === results.length ? items.data : todo.map((i) => items.data[i]!), {
      rewards: ctx.rewards,
      tasks: ctx.tasks,
      itemTimeoutMs: left,
      onItem,
    });
    return results as ItemResult[];
  } finally {
    clearInterval(save);
  }
}

/** A job's saved progress: one entry per item, `null` for an item not scored yet. */
interface SavedProgress {
  format: typeof JOB_FORMAT;
  results: (ItemResult | null)[];
}

/** The results an earlier worker saved for a job of `n` items (all `null` when there are none or they are unreadable). */
export function savedResults(progress: unknown, n: number): (ItemResult | null)[] {
  const p = progress as Partial<SavedProgress> | null;
  const ok =
    typeof p === "object" &&
    p !== null &&
    p.format === JOB_FORMAT &&
    Array.isArray(p.results) &&
    p.results.length === n &&
    p.results.every((r) => r === null || (typeof r === "object" && ("score" in r || "error" in r)));
  return ok ? [...p.results!] : Array<ItemResult | null>(n).fill(null);
}
