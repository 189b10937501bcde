/**
 * `rlvr serve-rewards --redis`: items go through a real Redis queue (BullMQ) to workers and come back in order, one
 * result per item. Against a live Redis (skipped with a message when none answers, unless RLVR_REQUIRE_REDIS=1):
 * the queue gives exactly the numbers and item errors of in-process scoring; order holds when items finish in
 * reverse; two workers share a batch; a repeated X-Request-Id never scores an item twice; an item whose job does not
 * finish in time answers `timeout`, and a worker skips such a job later; `jobItems` items travel per job and come
 * back as one result each; hostile job data and a worker answering the wrong number of results give reward-failed;
 * a worker's close() finishes its job. Workers here run in the test process; queue-kill.test.ts kills real worker processes.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Queue, QueueEvents, Worker } from "bullmq";
import { rewards } from "../../src/rewards/index.js";
import {
  startRewardServer,
  startRewardWorker,
  type RewardServerConfig,
  type RewardWorkerConfig,
  type RunningRewardServer,
  type RunningRewardWorker,
} from "../../src/serve/index.js";
import { get, metric, post } from "./helpers.js";
import { dropQueue, queueName, REDIS_URL, redisAvailable, slowItem, slowRegistry } from "./queue-helpers.js";

const up = await redisAvailable();

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

/** A server on the test's own queue (removed from Redis afterwards). */
async function server(queue: string, config: RewardServerConfig = {}): Promise<RunningRewardServer> {
  const s = await startRewardServer({ port: 0, keepPool: true, redis: REDIS_URL, queue, ...config });
  cleanup.push(async () => {
    await s.close();
    await dropQueue(queue);
  });
  return s;
}

/** An in-process worker on `queue` with short lock settings. */
async function worker(queue: string, config: RewardWorkerConfig = {}): Promise<RunningRewardWorker> {
  const w = await startRewardWorker({ redis: REDIS_URL, queue, keepPool: true, lockMs: 1000, ...config });
  cleanup.push(() => w.close());
  return w;
}

describe.skipIf(!up)("scoring through the Redis queue", () => {
  it("gives exactly the results of in-process scoring for a mixed batch (rewards, tasks, sandbox, errors)", async () => {
    const items: unknown[] = [
      { reward: "math-answer", completion: "so \\boxed{12.0}", example: { gold: "12" } },
      { reward: "math-answer", completion: "\\boxed{13}", example: { gold: "12" } },
      {
        reward: "overlong",
        options: { maxLen: 30, cache: 5 },
        completion: "x",
        example: { gold: null, tokens: [...Array(40).keys()] },
      },
      { task: "countdown", completion: "\\boxed{12-(8+3)}", example: { gold: { numbers: [12, 3, 8], target: 1 } } },
      { task: "addition", completion: "", example: { gold: 5, prompt: "2+3" } },
      { reward: "no-such-reward", completion: "x", example: { gold: 1 } },
      { reward: "overlong", options: { maxLen: "long" }, completion: "x", example: { gold: null } },
      { task: "no-such-task", completion: "x", example: { gold: 1 } },
    ];
    const sirl = rewards.get("sirl");
    const sirlGold = sirl.goldCompletion!(sirl.exampleGold, sirl.options.parse({}));
    items.push({ reward: "sirl", completion: sirlGold, example: { gold: sirl.exampleGold } });
    const q = queueName("mixed");
    const viaQueue = await server(q);
    const w = await worker(q, { concurrency: 4 });
    const inProcess = await startRewardServer({ port: 0, keepPool: true });
    cleanup.push(() => inProcess.close());
    const [a, b] = await Promise.all([post(viaQueue, "/v1/score", { items }), post(inProcess, "/v1/score", { items })]);
    expect(a.status).toBe(200);
    expect(a.body.results).toEqual(b.body.results);
    expect(a.body.results[0].score).toBe(1);
    expect(a.body.results[5].error.code).toBe("unknown-reward");
    expect(a.body.results[6].error.code).toBe("invalid-options");
    expect(a.body.results[7].error.code).toBe("unknown-task");
    expect(a.body.results[8].score).toBe(sirl.maxScore); // the sandboxed solver ran in the worker's pool
    expect(w.processed()).toBe(1); // nine items, one job (jobItems 256)
    const m = (await get(viaQueue, "/metrics")).text;
    expect(metric(m, "rlvr_serve_queue_up")).toBe(1);
    expect(metric(m, "rlvr_serve_queue_awaiting")).toBe(0);
    expect(metric(m, "rlvr_serve_items_total", { reward: "math-answer", outcome: "scored" })).toBe(2);
    expect(metric(m, "rlvr_serve_items_total", { reward: "(unknown)", outcome: "error" })).toBe(2);
  });

  it("answers in request order when the items finish in reverse order", async () => {
    const { registry } = slowRegistry();
    const q = queueName("order");
    const s = await server(q, { rewards: registry, jobItems: 2 });
    await worker(q, { rewards: registry, concurrency: 3 });
    const items = [250, 200, 150, 100, 50, 0].map((ms, i) => slowItem(ms, i)); // three jobs, the last done first
    const res = await post(s, "/v1/score", { items });
    expect(res.body.results.map((r: { score: number }) => r.score)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it("two workers share one batch, and every item is scored once", async () => {
    const { registry, calls } = slowRegistry();
    const q = queueName("share");
    const s = await server(q, { rewards: registry, jobItems: 1 });
    const w1 = await worker(q, { rewards: registry, concurrency: 1 });
    const w2 = await worker(q, { rewards: registry, concurrency: 1 });
    const items = Array.from({ length: 8 }, (_, i) => slowItem(100, i));
    const res = await post(s, "/v1/score", { items });
    expect(res.body.results.map((r: { score: number }) => r.score)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(w1.processed()).toBeGreaterThan(0);
    expect(w2.processed()).toBeGreaterThan(0);
    expect(w1.processed() + w2.processed()).toBe(8);
    expect(calls()).toBe(8);
  });

  it("a repeated X-Request-Id reuses the jobs: the items are scored once, both requests answered", async () => {
    const { registry, calls } = slowRegistry();
    const q = queueName("dup");
    const s = await server(q, { rewards: registry });
    await worker(q, { rewards: registry, concurrency: 4 });
    const items = [slowItem(100, 1), slowItem(100, 2), slowItem(0, 3)];
    const headers = { "x-request-id": "trainer-step-17" };
    // Two at once (the second's adds are duplicates of jobs still running), then a third after they finished.
    const [a, b] = await Promise.all([
      post(s, "/v1/score", { items }, headers),
      post(s, "/v1/score", { items }, headers),
    ]);
    const c = await post(s, "/v1/score", { items }, headers);
    const want = [1, 2, 3].map((v) => ({ score: v, terms: { value: v } }));
    for (const r of [a, b, c]) expect(r.body.results).toEqual(want);
    expect(calls()).toBe(3);
    // The same id with other items is other jobs; no id at all is a fresh one per request.
    const other = await post(s, "/v1/score", { items: [slowItem(0, 9)] }, headers);
    expect(other.body.results).toEqual([{ score: 9, terms: { value: 9 } }]);
    await post(s, "/v1/score", { items: [slowItem(0, 3)] });
    expect(calls()).toBe(5);
    // Job ids hash the raw body: the same items written out differently are new jobs, still one result per item.
    const spaced = await post(s, "/v1/score", JSON.stringify({ items }, null, 2), headers);
    expect(spaced.body.results).toEqual(want);
    expect(calls()).toBe(8);
  });

  it("an item whose job does not finish in time answers timeout; a worker later skips the stale job", async () => {
    const { registry, calls } = slowRegistry();
    const q = queueName("timeout");
    const s = await server(q, { rewards: registry, itemTimeoutMs: 600 });
    const res = await post(s, "/v1/score", { items: [slowItem(0, 1)] }); // no worker yet
    expect(res.body.results[0].error.code).toBe("timeout");
    expect(res.body.results[0].error.message).toContain("600 ms");
    const w = await worker(q, { rewards: registry });
    const res2 = await post(s, "/v1/score", { items: [slowItem(5000, 2), slowItem(0, 3)] });
    expect(res2.body.results[0].error.code).toBe("timeout");
    expect(res2.body.results[1]).toEqual({ score: 3, terms: { value: 3 } });
    for (let i = 0; i < 200 && w.processed() < 2; i++) await new Promise((r) => setTimeout(r, 10));
    expect(w.processed()).toBe(2); // one job per request
    expect(calls()).toBe(2); // the first request's job was past its deadline when the worker took it: not scored
    const m = (await get(s, "/metrics")).text;
    expect(metric(m, "rlvr_serve_errors_total", { code: "timeout" })).toBe(2);
  });

  it("items travel jobItems to a job: 40 items are 3 jobs, answered as 40 results in order", async () => {
    const { registry, calls } = slowRegistry();
    const q = queueName("runs");
    const s = await server(q, { rewards: registry, jobItems: 16 });
    const w = await worker(q, { rewards: registry });
    const items = Array.from({ length: 40 }, (_, i) =>
      i % 5 === 4 ? slowItem(5, i) : { reward: "echo", completion: "x".repeat(i), example: { gold: 0 } },
    );
    const res = await post(s, "/v1/score", { items });
    expect(res.body.results.map((r: { score: number }) => r.score)).toEqual(items.map((_, i) => i));
    expect(w.processed()).toBe(3);
    expect(calls()).toBe(8);
    const m = (await get(s, "/metrics")).text;
    expect(metric(m, "rlvr_serve_items_total", { reward: "echo", outcome: "scored" })).toBe(32); // counted per item
    expect(metric(m, "rlvr_serve_items_total", { reward: "slow", outcome: "scored" })).toBe(8);
  });

  it("a job whose data is not score items of this format is answered reward-failed, not thrown", async () => {
    const q = queueName("hostile");
    cleanup.push(() => dropQueue(q));
    await worker(q);
    const queue = new Queue(q, { connection: { url: REDIS_URL } });
    const events = new QueueEvents(q, { connection: { url: REDIS_URL } });
    cleanup.push(async () => {
      await events.close();
      await queue.close();
    });
    await events.waitUntilReady();
    const deadline = Date.now() + 30_000;
    const cases: [unknown, RegExp][] = [
      [{ format: 1, item: slowItem(0, 1), timeoutMs: 1000, deadline }, /has data format 1; this worker reads 2$/],
      [{ format: 2, items: [{ reward: 5 }], timeoutMs: 1000, deadline }, /does not hold score items$/],
      ["a string", /has data format undefined/],
    ];
    for (const [data, message] of cases) {
      const job = await queue.add("score", data);
      const result = (await job.waitUntilFinished(events, 10_000)) as { error: { code: string; message: string } };
      expect(result.error.code).toBe("reward-failed");
      expect(result.error.message).toMatch(message);
    }
  });

  it("a worker that answers the wrong number of results fails that job's items, not the request", async () => {
    const q = queueName("miscount");
    const s = await server(q, { jobItems: 2 });
    // A real BullMQ worker of some other build, answering one result for every job.
    const rogue = new Worker(q, async () => [{ score: 1, terms: {} }], { connection: { url: REDIS_URL } });
    cleanup.push(() => rogue.close());
    const items = [1, 2, 3].map((i) => ({ reward: "math-answer", completion: String(i), example: { gold: "1" } }));
    const res = await post(s, "/v1/score", { items });
    expect(res.body.results[0].error).toEqual({
      code: "reward-failed",
      message: "a worker answered 1 results for a job of 2 items",
    });
    expect(res.body.results[1].error.code).toBe("reward-failed");
    expect(res.body.results[2]).toEqual({ score: 1, terms: {} }); // a job of one item, one result: taken as it is
  });

  it("a worker's close() finishes the job in hand before it stops", async () => {
    const { registry, calls } = slowRegistry();
    const q = queueName("drain");
    const s = await server(q, { rewards: registry });
    let active!: () => void;
    const started = new Promise<void>((r) => (active = r));
    const w = await worker(q, { rewards: registry, onActive: () => active() });
    const pending = post(s, "/v1/score", { items: [slowItem(300, 7)] });
    await started;
    await w.close();
    expect(w.processed()).toBe(1);
    expect((await pending).body.results).toEqual([{ score: 7, terms: { value: 7 } }]);
    expect(calls()).toBe(1);
  });
});
