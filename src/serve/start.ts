/**
 * Starting and stopping the reward service: listen on the configured address, and on stop drain in-flight requests
 * (Fastify answers 503 to new ones while it closes), then close the sandbox pool so no worker process outlives the
 * server. `rlvr serve-rewards` calls these on SIGINT and SIGTERM. With `redis` set, Redis is reached before the
 * server listens (an unreachable URL fails the start with an error naming it) and the queue is closed last.
 */
import { closeSharedPool } from "../rewards/sandbox/pool.js";
import { startHeapBudget } from "./heap-budget.js";
import { listenWithDrain, type Listening } from "./listen.js";
import { parseServeOptions } from "./options.js";
import { QueueScorer } from "./queue-scorer.js";
import { buildRewardServer, type RewardServer, type RewardServerConfig } from "./server.js";

/** A listening reward server. */
export interface RunningRewardServer extends RewardServer, Listening {
  /** Drains in-flight requests, stops listening, closes the queue, and (unless `keepPool`) the shared sandbox pool. */
  close(): Promise<void>;
}

/** Builds the server and starts listening; `keepPool: true` leaves the shared sandbox pool open on close (tests). */
export async function startRewardServer(
  config: RewardServerConfig & { keepPool?: boolean } = {},
): Promise<RunningRewardServer> {
  const { keepPool = false, ...rest } = config;
  const { redis, queue: name, queueGraceMs, jobItems, heapBudgetMb } = parseServeOptions(serveFields(rest));
  const queue =
    redis === undefined ? undefined : await QueueScorer.connect({ redis, queue: name, queueGraceMs, jobItems });
  let server: RewardServer;
  let listening: Listening;
  try {
    server = buildRewardServer({ ...rest, queueScorer: queue });
    const metrics = server.metrics;
    const heap = startHeapBudget({
      budgetMb: heapBudgetMb,
      onCollect(seconds) {
        metrics.heapCollections.inc();
        metrics.heapCollectionSeconds.inc(seconds);
      },
    });
    listening = await listenWithDrain(server, async () => {
      heap.stop();
      await queue?.close();
      if (!keepPool) await closeSharedPool();
    });
  } catch (err) {
    await queue?.close();
    throw err;
  }
  return { ...server, ...listening };
}

/** The service options among a server config (the registries and readers are not options). */
function serveFields(config: RewardServerConfig): Record<string, unknown> {
  const { rewards: _r, tasks: _t, poolStats: _p, version: _v, queueScorer: _q, ...options } = config;
  return options;
}
