/**
 * Starting and stopping the reward service: listen on the configured address, and on stop drain in-flight requests
 * (Fastify answers 503 to new ones while it closes), then close the sandbox pool so no worker process outlives the
 * server. `rlvr serve-rewards` calls these on SIGINT and SIGTERM. With `redis` set, Redis is reached before the
 * server listens (an unreachable URL fails the start with an error naming it) and the queue is closed last.
 */
import type { AddressInfo } from "node:net";
import { closeSharedPool } from "../rewards/sandbox/pool.js";
import { parseServeOptions } from "./options.js";
import { QueueScorer } from "./queue-scorer.js";
import { buildRewardServer, type RewardServer, type RewardServerConfig } from "./server.js";

/** A listening reward server. */
export interface RunningRewardServer extends RewardServer {
  /** Base URL, e.g. `http://127.0.0.1:8765`. */
  url: string;
  /** Port actually bound (useful with `port: 0`). */
  port: number;
  /** Drains in-flight requests, stops listening, and (unless `keepPool`) closes the shared sandbox pool. */
  close(): Promise<void>;
}

/** Builds the server and starts listening; `keepPool: true` leaves the shared sandbox pool open on close (tests). */
export async function startRewardServer(
  config: RewardServerConfig & { keepPool?: boolean } = {},
): Promise<RunningRewardServer> {
  const { keepPool = false, ...rest } = config;
  const { redis, queue: name, queueGraceMs, jobItems } = parseServeOptions(serveFields(rest));
  const queue =
    redis === undefined ? undefined : await QueueScorer.connect({ redis, queue: name, queueGraceMs, jobItems });
  let server: RewardServer;
  try {
    server = buildRewardServer({ ...rest, queueScorer: queue });
    await server.app.listen({ port: server.options.port, host: server.options.host });
  } catch (err) {
    await queue?.close();
    throw err;
  }
  const address = server.app.server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  let closing: Promise<void> | null = null;
  return {
    ...server,
    url: `http://${host}:${address.port}`,
    port: address.port,
    close() {
      closing ??= (async () => {
        // Fastify stops accepting (503 to new requests) and closes idle keep-alive connections; once the score
        // requests in flight are answered, every connection left is idle (some clients open spare ones that never
        // carry a request, which Node does not count as idle), so they are closed rather than waited out.
        const closed = server.app.close();
        await server.idle();
        server.app.server.closeAllConnections();
        await closed;
        await queue?.close();
        if (!keepPool) await closeSharedPool();
      })();
      return closing;
    },
  };
}

/** The service options among a server config (the registries and readers are not options). */
function serveFields(config: RewardServerConfig): Record<string, unknown> {
  const { rewards: _r, tasks: _t, poolStats: _p, version: _v, queueScorer: _q, ...options } = config;
  return options;
}
