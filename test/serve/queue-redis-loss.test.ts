/**
 * Redis absent or lost. At start, an unreachable Redis fails the server and the worker at once with an error naming
 * the URL (no Redis needed for that). Later, with a private redis-server that the test kills: waiting items and new
 * ones answer `queue-unavailable` once Redis has been gone for queueGraceMs, the server keeps serving (/healthz,
 * /metrics say the queue is down), and when Redis comes back (empty: a restart without persistence) the server
 * re-adds the jobs it lost and scoring resumes. Skipped with a message when redis-server is not installed, unless
 * RLVR_REQUIRE_REDIS=1.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  startRewardServer,
  startRewardWorker,
  type RunningRewardServer,
  type RunningRewardWorker,
} from "../../src/serve/index.js";
import { get, metric, post } from "./helpers.js";
import {
  exited,
  freePort,
  haveRedisServer,
  queueName,
  slowItem,
  slowRegistry,
  startPrivateRedis,
} from "./queue-helpers.js";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

describe("Redis unreachable at start", () => {
  it("the server refuses to start, naming the URL (without its password) and the reason", async () => {
    const port = await freePort();
    const err = await startRewardServer({ port: 0, redis: `redis://:hunter2@127.0.0.1:${port}` }).catch((e) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toBe(
      `cannot reach Redis at redis://:***@127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
  });

  it("the worker refuses to start, naming the URL", async () => {
    const port = await freePort();
    await expect(startRewardWorker({ redis: `redis://127.0.0.1:${port}` })).rejects.toThrow(
      `cannot reach Redis at redis://127.0.0.1:${port}: connect ECONNREFUSED`,
    );
  });

  it("a URL that is not redis:// is refused before connecting, naming the option", async () => {
    await expect(startRewardServer({ port: 0, redis: "http://127.0.0.1:6379" })).rejects.toThrow(
      /reward service options: redis: "http:\/\/127\.0\.0\.1:6379\/?" must start with redis:\/\/ or rediss:\/\//,
    );
    await expect(startRewardWorker({ redis: "localhost" })).rejects.toThrow(/reward worker options: redis: /);
  });
});

const canSpawn = haveRedisServer();
if (!canSpawn) {
  if (process.env.RLVR_REQUIRE_REDIS === "1") throw new Error("redis-server is not installed (RLVR_REQUIRE_REDIS=1)");
  console.warn("skipping the Redis-loss tests: redis-server is not installed (apt-get install redis-server)");
}

/** A private Redis, a server with `queueGraceMs` and a worker on it; all stopped after the test. */
async function setUp(queueGraceMs: number) {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const env = { port, url, redis: await startPrivateRedis(port) };
  cleanup.push(async () => {
    env.redis.kill("SIGKILL");
    await exited(env.redis);
  });
  const { registry, calls } = slowRegistry();
  const q = queueName("loss");
  const s: RunningRewardServer = await startRewardServer({
    port: 0,
    keepPool: true,
    redis: url,
    queue: q,
    rewards: registry,
    queueGraceMs,
    itemTimeoutMs: 20_000,
    jobItems: 1,
  });
  cleanup.push(() => s.close());
  const workerConfig = { redis: url, queue: q, rewards: registry, keepPool: true, closeWaitMs: 200 };
  const workers: RunningRewardWorker[] = [];
  cleanup.push(() => Promise.all(workers.map((w) => w.close())));
  const worker = async () => {
    const w = await startRewardWorker(workerConfig);
    workers.push(w);
    return w;
  };
  const kill = async () => {
    env.redis.kill("SIGKILL");
    await exited(env.redis);
  };
  const restart = async () => (env.redis = await startPrivateRedis(port));
  return { ...env, s, calls, worker, kill, restart };
}

const scored = (...values: number[]) => values.map((v) => ({ score: v, terms: { value: v } }));

describe.skipIf(!canSpawn)("Redis lost while serving", () => {
  it("waiting and new items get queue-unavailable after the grace, not a hang; scoring resumes when it is back", async () => {
    const { port, s, calls, worker, kill, restart } = await setUp(300);
    await worker();
    expect((await post(s, "/v1/score", { items: [slowItem(0, 1)] })).body.results).toEqual(scored(1));

    // Redis dies with an item in a worker's hands: the request answers queue-unavailable.
    const pending = post(s, "/v1/score", { items: [slowItem(2000, 2)] });
    for (let i = 0; i < 200 && calls() < 2; i++) await new Promise((r) => setTimeout(r, 10));
    await kill();
    const lost = await pending;
    expect(lost.status).toBe(200);
    expect(lost.body.results[0].error.code).toBe("queue-unavailable");
    expect(lost.body.results[0].error.message).toContain(`Redis at redis://127.0.0.1:${port} unreachable for `);
    // New requests too, at once; the server itself keeps answering.
    const t0 = Date.now();
    const refused = await post(s, "/v1/score", { items: [slowItem(0, 3), slowItem(0, 4)] });
    expect(refused.body.results.map((r: { error: { code: string } }) => r.error.code)).toEqual([
      "queue-unavailable",
      "queue-unavailable",
    ]);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect((await get(s, "/healthz")).status).toBe(200);
    expect(metric((await get(s, "/metrics")).text, "rlvr_serve_queue_up")).toBe(0);

    // Back (empty): once the server has reconnected, items are scored again by the reconnected worker.
    await restart();
    for (let i = 0; i < 100; i++) {
      if (metric((await get(s, "/metrics")).text, "rlvr_serve_queue_up") === 1) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await post(s, "/v1/score", { items: [slowItem(0, 5)] })).body.results).toEqual(scored(5));
  });

  it("a Redis restart inside the grace loses the queued jobs; the server re-adds them and they are scored", async () => {
    const { s, calls, worker, kill, restart } = await setUp(10_000);
    const pending = post(s, "/v1/score", { items: [slowItem(0, 6), slowItem(20, 7)] }); // no worker yet: queued
    for (let i = 0; i < 100; i++) {
      if (metric((await get(s, "/metrics")).text, "rlvr_serve_queue_depth") === 2) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await kill();
    await restart(); // empty: the two jobs are gone
    await worker();
    expect((await pending).body.results).toEqual(scored(6, 7));
    expect(calls()).toBe(2);
    expect(metric((await get(s, "/metrics")).text, "rlvr_serve_queue_readded_total")).toBe(2);
  });
});
