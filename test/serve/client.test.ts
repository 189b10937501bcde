/**
 * The TypeScript reward client (src/serve/client.ts) against a real server on loopback: its results equal
 * in-process scoring, batching splits requests and keeps order, a 429 is retried after Retry-After, a timeout and
 * an auth error are thrown without a retry, a refused connection is retried, and a 4xx (too many items) is not.
 */
import { createServer as createHttpServer } from "node:http";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rewards } from "../../src/rewards/index.js";
import { getTask } from "../../src/tasks/index.js";
import { RewardClient, RewardServiceError, toScored, type RunningRewardServer } from "../../src/serve/index.js";
import type { ScoreItem, Scored } from "../../src/serve/index.js";
import { gate, metric, start, testRegistry, until } from "./helpers.js";

const TOKEN = "client-test-token";
const release = gate();
const { registry, started } = testRegistry(release.promise);

let real: RunningRewardServer; // the built-in registry
let busy: RunningRewardServer; // test rewards, one request at a time, a token
beforeAll(async () => {
  real = await start({ maxItems: 8 });
  busy = await start({ rewards: registry, concurrency: 1, token: TOKEN });
});
afterAll(async () => {
  release.open();
  await Promise.all([real.close(), busy.close()]);
});

/** Rejects with the RewardServiceError `fn` throws (fails when it resolves or throws something else). */
async function serviceError(fn: () => Promise<unknown>): Promise<RewardServiceError> {
  const err = await fn().then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RewardServiceError);
  return err as RewardServiceError;
}

describe("RewardClient", () => {
  it("scores as the library does in process: rewards, a task, null for unscorable, item errors in place", async () => {
    const client = new RewardClient({ url: real.url, batchSize: 4 });
    const items: ScoreItem[] = [
      { reward: "math-answer", completion: "so \\boxed{42}", example: { gold: "42" } },
      { reward: "math-answer", completion: "so \\boxed{41}", example: { gold: "42" } },
      { reward: "math-answer", completion: "\\boxed{1}", example: { gold: "" } }, // gold cannot be parsed: null
      { reward: "cosine-length", options: { unit: "chars", maxLen: 40 }, completion: "no box", example: { gold: "7" } },
      { task: "addition", completion: "\\boxed{12}", example: { gold: { answer: "12" }, prompt: "5+7=" } },
      { reward: "no-such-reward", completion: "x", example: { gold: 1 } },
    ];
    const got = await client.score(items);
    expect(got).toHaveLength(items.length);
    for (const [i, item] of items.slice(0, 4).entries()) {
      if (!("reward" in item)) throw new Error("reward items first");
      const input = { completion: item.completion, gold: item.example.gold };
      expect(got[i]).toEqual(toScored(await rewards.score(item.reward, input, item.options)));
    }
    expect(got.map((r) => ("score" in r ? r.score : "error"))).toEqual([
      1,
      0,
      null,
      (got[3] as Scored).score,
      1.2,
      "error",
    ]);
    const task = getTask("addition");
    const want = await task.score(
      { id: "x", prompt: "5+7=", gold: { answer: "12" }, goldCompletion: "" },
      "\\boxed{12}",
    );
    expect(got[4]).toEqual(toScored(want));
    expect(got[5]).toMatchObject({ error: { code: "unknown-reward" } });
    expect(client.requests).toBe(2); // 6 items in batches of 4
    expect(await client.health()).toEqual({ status: "ok" });
    expect((await client.rewards()).map((r) => r.name)).toContain("math-answer");
  });

  it("splits into batches of batchSize and keeps the order", async () => {
    const client = new RewardClient({ url: busy.url, token: TOKEN, batchSize: 3 });
    const before = metric(await busy.metrics.registry.metrics(), "rlvr_serve_requests_total", {
      route: "/v1/score",
      status: "200",
    });
    const texts = ["a", "bb", "ccc", "dddd", "eeeee", "ffffff", "g", "hh", "iii", "jjjjjjjjjj"];
    const got = await client.score(texts.map((t) => ({ reward: "echo", completion: t, example: { gold: null } })));
    expect(got.map((r) => ("score" in r ? r.score : null))).toEqual([1, 2, 3, 4, 5, 6, 1, 2, 3, 10]);
    expect(client.requests).toBe(4); // 3 + 3 + 3 + 1
    const after = metric(await busy.metrics.registry.metrics(), "rlvr_serve_requests_total", {
      route: "/v1/score",
      status: "200",
    });
    expect(after - before).toBe(4);
    expect(await client.score([])).toEqual([]);
  });

  it("retries a 429 after Retry-After (1 s) and then succeeds", async () => {
    const holder = new RewardClient({ url: busy.url, token: TOKEN });
    const held = holder.score([{ reward: "wait", completion: "", example: { gold: null } }]);
    await until(() => started() === 1); // the only slot is taken
    const client = new RewardClient({ url: busy.url, token: TOKEN, backoffMs: 10 });
    const t0 = performance.now();
    const second = client.score([{ reward: "echo", completion: "abc", example: { gold: null } }]);
    const text = () => busy.metrics.registry.metrics();
    await until(
      async () => metric(await text(), "rlvr_serve_requests_total", { route: "/v1/score", status: "429" }) >= 1,
    );
    release.open(); // the held request finishes; the retry (after Retry-After: 1 s, not the 10 ms back-off) gets in
    expect(await second).toEqual([{ score: 3, terms: { len: 1 } }]);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(950);
    expect(client.retried).toBeGreaterThanOrEqual(1);
    expect(await held).toEqual([{ score: 1, terms: {} }]);
  });

  it("throws code timeout when the answer is late, without a retry", async () => {
    const hang = gate();
    const slow = await start({ rewards: testRegistry(hang.promise).registry });
    try {
      const client = new RewardClient({ url: slow.url, timeoutMs: 150, retries: 3, backoffMs: 1 });
      const err = await serviceError(() => client.score([{ reward: "wait", completion: "", example: { gold: 0 } }]));
      expect(err).toMatchObject({ status: 0, code: "timeout" });
      expect(err.message).toMatch(/no answer within 150 ms/);
      expect(client.requests).toBe(1);
    } finally {
      hang.open();
      await slow.close();
    }
  });

  it("does not retry an auth error (401) or too many items (413)", async () => {
    const wrong = new RewardClient({ url: busy.url, token: "wrong", retries: 3, backoffMs: 1 });
    const err = await serviceError(() => wrong.score([{ reward: "echo", completion: "a", example: { gold: 0 } }]));
    expect(err).toMatchObject({ status: 401, code: "unauthorized" });
    expect(wrong.requests).toBe(1);
    const big = new RewardClient({ url: real.url, batchSize: 9, retries: 3, backoffMs: 1 });
    const items = Array.from({ length: 9 }, () => ({ reward: "math-answer", completion: "1", example: { gold: "1" } }));
    const tooMany = await serviceError(() => big.score(items));
    expect(tooMany).toMatchObject({ status: 413, code: "too-many-items" });
    expect(tooMany.message).toMatch(/at most 8 per request/);
    expect(big.requests).toBe(1);
  });

  it("retries a refused connection, then throws code unreachable", async () => {
    const port = await closedPort();
    const client = new RewardClient({ url: `http://127.0.0.1:${port}`, retries: 2, backoffMs: 1 });
    const err = await serviceError(() => client.health());
    expect(err).toMatchObject({ status: 0, code: "unreachable" });
    expect(err.message).toMatch(/ECONNREFUSED/);
    expect(client.requests).toBe(3);
  });

  it("sends one X-Request-Id (and the same body) on every attempt of a request, another on the next", async () => {
    const seen: { id: string | undefined; body: string }[] = [];
    const flaky = createHttpServer((req, res) => {
      let body = "";
      req.on("data", (b: Buffer) => (body += b.toString()));
      req.on("end", () => {
        seen.push({ id: req.headers["x-request-id"] as string | undefined, body });
        const first = seen.length % 2 === 1; // each request: a 503 first, then the answer
        res.writeHead(first ? 503 : 200, { "content-type": "application/json" });
        res.end(
          JSON.stringify(
            first ? { error: { code: "draining", message: "x" } } : { results: [{ score: 1, terms: {} }] },
          ),
        );
      });
    });
    await new Promise<void>((r) => flaky.listen(0, "127.0.0.1", () => r()));
    try {
      const { port } = flaky.address() as { port: number };
      const client = new RewardClient({ url: `http://127.0.0.1:${port}`, retries: 2, backoffMs: 1 });
      const item = { reward: "echo", completion: "a", example: { gold: 0 } };
      expect(await client.score([item])).toEqual([{ score: 1, terms: {} }]);
      expect(await client.score([item])).toEqual([{ score: 1, terms: {} }]);
    } finally {
      await new Promise((r) => flaky.close(r));
    }
    expect(seen).toHaveLength(4);
    const ids = seen.map((s) => s.id);
    expect(ids[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect([ids[1], ids[3]]).toEqual([ids[0], ids[2]]);
    expect(ids[2]).not.toBe(ids[0]);
    expect(seen[1]!.body).toBe(seen[0]!.body);
  });

  it("refuses bad options by name", () => {
    expect(() => new RewardClient({ url: "http://127.0.0.1:1", batchSize: 0 })).toThrow(/batchSize 0/);
    expect(() => new RewardClient({ url: "not a url" })).toThrow(/Invalid URL/);
  });
});

/** A loopback port with nothing listening (bound, then released). */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
