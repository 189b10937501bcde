/**
 * Helpers of the Redis queue tests: whether Redis is reachable (tests skip with a message when it is not, unless
 * RLVR_REQUIRE_REDIS=1, as CI sets), a unique queue name per test so tests never share jobs, removal of a test's
 * queue from Redis afterwards, a private redis-server on a free port (for Redis going away mid-run), and a registry
 * with a slow reward that counts its calls.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { Queue } from "bullmq";
import { z } from "zod";
import { RewardRegistry } from "../../src/rewards/index.js";
import { probeRedis } from "../../src/serve/index.js";

/** The Redis the tests use (CI starts one on the default port). */
export const REDIS_URL = process.env.RLVR_REDIS_URL ?? "redis://127.0.0.1:6379";

/** Whether Redis answers; throws when it does not and RLVR_REQUIRE_REDIS=1. Logs why tests skip. */
export async function redisAvailable(): Promise<boolean> {
  try {
    await probeRedis(REDIS_URL, 1000);
    return true;
  } catch (err) {
    const why = `Redis queue tests need Redis at ${REDIS_URL}: ${(err as Error).message}`;
    if (process.env.RLVR_REQUIRE_REDIS === "1") throw new Error(`${why} (RLVR_REQUIRE_REDIS=1)`);
    console.warn(`skipping: ${why} (start redis-server, or set RLVR_REDIS_URL)`);
    return false;
  }
}

let counter = 0;
/** A queue name no other test (or test run) uses. */
export function queueName(tag: string): string {
  return `rlvr-test-${tag}-${process.pid}-${Date.now().toString(36)}-${counter++}`;
}

/** Removes every key of `name` from Redis (jobs, events, metadata). */
export async function dropQueue(name: string, url = REDIS_URL): Promise<void> {
  const q = new Queue(name, { connection: { url } });
  q.on("error", () => undefined);
  try {
    await q.obliterate({ force: true });
  } finally {
    await q.close();
  }
}

/** A free TCP port on loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Whether the redis-server binary is installed (a private server can be started). */
export function haveRedisServer(): boolean {
  return spawnSync("redis-server", ["--version"]).status === 0;
}

/** Starts a private, memory-only redis-server on `port`; resolves once it accepts connections. */
export async function startPrivateRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    {
      stdio: "ignore",
    },
  );
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      await probeRedis(url, 500);
      return child;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  child.kill("SIGKILL");
  throw new Error(`private redis-server on port ${port} did not start`);
}

/** Resolves when `child` has exited (at once if it already has), with its exit code. */
export function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((r) =>
    child.exitCode !== null || child.signalCode !== null ? r(child.exitCode) : child.once("exit", (code) => r(code)),
  );
}

/**
 * A registry with `slow` (waits `ms`, then scores `value`; counts calls and finishes) and `echo` (the completion's
 * length, at once). Counts are per registry, so a test sees exactly how often its items were scored; `onEvent`
 * hears `start <value>` and `end <value>` of each slow item.
 */
export function slowRegistry(onEvent?: (event: string) => void): {
  registry: RewardRegistry;
  calls: () => number;
  done: () => number;
} {
  const registry = new RewardRegistry();
  let calls = 0;
  let done = 0;
  registry.register({
    name: "slow",
    description: "test: waits `ms`, then scores `value`",
    options: z.object({ ms: z.number().default(0), value: z.number().default(1) }).strict(),
    score: async (_input, o: { ms: number; value: number }) => {
      calls++;
      onEvent?.(`start ${o.value}`);
      await new Promise((r) => setTimeout(r, o.ms));
      done++;
      onEvent?.(`end ${o.value}`);
      return { score: o.value, terms: { value: o.value } };
    },
  });
  registry.register({
    name: "echo",
    description: "test: the completion's length",
    options: z.object({}).strict(),
    score: ({ completion }) => ({ score: completion.length, terms: {} }),
  });
  return { registry, calls: () => calls, done: () => done };
}

/** A `slow` item. */
export function slowItem(ms: number, value: number) {
  return { reward: "slow", options: { ms, value }, completion: "", example: { gold: 0 } };
}
