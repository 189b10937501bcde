/**
 * The reward service's limits and refusals over real HTTP: bad JSON and bad shapes give 400 naming the field, a
 * missing or wrong bearer token 401, oversized bodies and too many items 413, a non-JSON content type 415, and
 * requests beyond the concurrency limit 429 with Retry-After (a test-only reward holds the slot until the test
 * opens its gate, so nothing depends on timing). Every refusal leaves the server serving.
 */
import { afterEach, describe, expect, it } from "vitest";
import fc from "fast-check";
import type { RunningRewardServer } from "../../src/serve/index.js";
import { gate, get, metric, post, start, testRegistry, until } from "./helpers.js";

const servers: RunningRewardServer[] = [];
async function serve(config: Parameters<typeof start>[0] = {}): Promise<RunningRewardServer> {
  const s = await start(config);
  servers.push(s);
  return s;
}
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const echo = (completion: string) => ({ reward: "echo", completion, example: { gold: 0 } });

describe("400: bad JSON and bad shapes", () => {
  it("a body that is not JSON is refused with the parser's message", async () => {
    const s = await serve({ rewards: testRegistry(Promise.resolve()).registry });
    const res = await post(s, "/v1/score", '{"items": [{"reward": ');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("bad-json");
    expect(res.body.error.message).toMatch(/^body is not valid JSON: /);
  });

  it.each([
    [{ item: [] }, "items"], // misspelt envelope: the missing field and the unknown key are named
    [{ items: "all of them" }, "items"],
    [{ items: [{ reward: "echo", example: { gold: 1 } }] }, "items.0.completion"],
    [{ items: [echo("a"), { reward: "echo", completion: 5, example: { gold: 1 } }] }, "items.1.completion"],
    [{ items: [{ reward: "echo", completion: "a", example: {} }] }, "items.0.example.gold"],
    [{ items: [{ reward: "echo", completion: "a", example: { gold: 1, tokens: ["x"] } }] }, "items.0.example.tokens.0"],
    [{ items: [{ completion: "a", example: { gold: 1 } }] }, "items.0.reward"],
    [{ items: [{ ...echo("a"), task: "addition" }] }, "items.0"], // both reward and task: unknown key "task"
    [[1, 2, 3], "(body)"],
  ])("%j names %s", async (body, field) => {
    const s = await serve({ rewards: testRegistry(Promise.resolve()).registry });
    const res = await post(s, "/v1/score", body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("bad-request");
    expect(res.body.error.issues.map((i: { path: string }) => i.path)).toContain(field);
    expect(res.body.error.message).toContain(field);
  });

  it("arbitrary JSON bodies and item-like objects get 200, 400 or 413, never a 500 (property)", async () => {
    const s = await serve({ maxItems: 4, rewards: testRegistry(Promise.resolve()).registry });
    const itemLike = fc.record(
      {
        reward: fc.oneof(fc.constantFrom("echo", "throws", "nope"), fc.jsonValue()),
        task: fc.constantFrom("addition", "nope"),
        options: fc.oneof(fc.dictionary(fc.string(), fc.jsonValue()), fc.jsonValue()),
        completion: fc.oneof(fc.string(), fc.jsonValue()),
        example: fc.oneof(fc.record({ gold: fc.jsonValue() }), fc.jsonValue()),
      },
      { requiredKeys: [] },
    );
    const body = fc.oneof(
      fc.jsonValue(),
      fc.record({ items: fc.array(fc.oneof(itemLike, fc.jsonValue()), { maxLength: 6 }) }),
    );
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        const res = await post(s, "/v1/score", b);
        expect([200, 400, 413]).toContain(res.status);
        if (res.status === 200) expect(res.body.results).toHaveLength((b as { items: unknown[] }).items.length);
        else expect(typeof res.body.error.message).toBe("string");
      }),
      { numRuns: 150, seed: 42 },
    );
    expect((await get(s, "/healthz")).status).toBe(200);
  });

  it("an empty batch is fine and answers an empty list", async () => {
    const s = await serve();
    expect((await post(s, "/v1/score", { items: [] })).body).toEqual({ results: [] });
  });
});

describe("401: bearer token", () => {
  it("is required on every route but /healthz when set, and compared exactly", async () => {
    const s = await serve({ token: "s3cret", rewards: testRegistry(Promise.resolve()).registry });
    const attempts: Record<string, string>[] = [
      {},
      { authorization: "Bearer wrong" },
      { authorization: "s3cret" },
      { authorization: "Bearer s3cre" },
    ];
    for (const headers of attempts) {
      const res = await post(s, "/v1/score", { items: [echo("a")] }, headers);
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe("unauthorized");
      expect(res.headers.get("www-authenticate")).toBe("Bearer");
    }
    for (const path of ["/v1/rewards", "/metrics", "/openapi.json"]) expect((await get(s, path)).status).toBe(401);
    expect((await get(s, "/healthz")).status).toBe(200);
    const ok = await post(s, "/v1/score", { items: [echo("abc")] }, { authorization: "Bearer s3cret" });
    expect(ok.status).toBe(200);
    expect(ok.body.results[0].score).toBe(3);
  });
});

describe("413 and 415: size limits and content type", () => {
  it("a body over maxBodyBytes is refused before it is parsed", async () => {
    const s = await serve({ maxBodyBytes: 4096, rewards: testRegistry(Promise.resolve()).registry });
    const res = await post(s, "/v1/score", { items: [echo("x".repeat(5000))] });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe("body-too-large");
    expect((await post(s, "/v1/score", { items: [echo("x".repeat(3000))] })).status).toBe(200);
  });

  it("more than maxItems items is refused, naming the count and the limit", async () => {
    const s = await serve({ maxItems: 3, rewards: testRegistry(Promise.resolve()).registry });
    const res = await post(s, "/v1/score", { items: [echo("a"), echo("b"), echo("c"), echo("d")] });
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ code: "too-many-items", message: "items: 4 items, at most 3 per request" });
    expect((await post(s, "/v1/score", { items: [echo("a"), echo("b"), echo("c")] })).status).toBe(200);
  });

  it("a body that is not application/json gets 415", async () => {
    const s = await serve();
    const res = await fetch(s.url + "/v1/score", {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "hi",
    });
    expect(res.status).toBe(415);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unsupported-media-type");
  });

  it("an unknown route gets a JSON 404", async () => {
    const s = await serve();
    const res = await get(s, "/v2/score");
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: "not-found", message: "no route GET /v2/score" });
  });

  it("bad service options are refused at start, naming the field", async () => {
    await expect(start({ concurrency: 0 })).rejects.toThrow(/concurrency/);
    await expect(start({ maxItems: 1.5 })).rejects.toThrow(/maxItems/);
  });
});

describe("429: concurrency", () => {
  it("beyond the limit answers 429 with Retry-After, and serves again once a slot frees", async () => {
    const g = gate();
    const reg = testRegistry(g.promise);
    const s = await serve({ concurrency: 2, rewards: reg.registry });
    const held = [1, 2].map(() =>
      post(s, "/v1/score", { items: [{ reward: "wait", completion: "", example: { gold: 0 } }] }),
    );
    await until(() => reg.started() === 2);
    const busy = await post(s, "/v1/score", { items: [echo("a")] });
    expect(busy.status).toBe(429);
    expect(busy.headers.get("retry-after")).toBe("1");
    expect(busy.body.error.code).toBe("too-busy");
    // Other routes are not limited: health and metrics stay answerable while scoring is saturated.
    expect((await get(s, "/healthz")).status).toBe(200);
    const m = (await get(s, "/metrics")).text;
    expect(metric(m, "rlvr_serve_requests_in_flight")).toBe(2);
    expect(metric(m, "rlvr_serve_items_in_flight")).toBe(2);
    expect(metric(m, "rlvr_serve_errors_total", { code: "too-busy" })).toBe(1);
    g.open();
    for (const r of await Promise.all(held)) expect(r.body.results).toEqual([{ score: 1, terms: {} }]);
    await until(async () => metric((await get(s, "/metrics")).text, "rlvr_serve_requests_in_flight") === 0);
    expect((await post(s, "/v1/score", { items: [echo("abc")] })).body.results[0].score).toBe(3);
  });

  it("a client that hangs up frees its slot", async () => {
    const g = gate();
    const reg = testRegistry(g.promise);
    const s = await serve({ concurrency: 1, rewards: reg.registry });
    const ac = new AbortController();
    const req = fetch(s.url + "/v1/score", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ items: [{ reward: "wait", completion: "", example: { gold: 0 } }] }),
      signal: ac.signal,
    }).catch(() => "aborted");
    await until(() => reg.started() === 1);
    ac.abort();
    expect(await req).toBe("aborted");
    await until(async () => (await post(s, "/v1/score", { items: [echo("ab")] })).status === 200);
    g.open();
  });
});
