/**
 * The reward service's other routes over real HTTP: /v1/rewards prints what `rlvr rewards --json` prints,
 * /metrics counts move by exactly what was sent (items by reward and outcome, latency counts, errors, sandbox
 * restarts read from the pool), /openapi.json is an OpenAPI 3.1 document whose references all resolve, and close()
 * drains a request in flight before it returns.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { Command } from "commander";
import { register as registerRewardsCommand } from "../../src/cli/commands/rewards.js";
import { rewardCatalog, type PoolSnapshot, type RunningRewardServer } from "../../src/serve/index.js";
import { gate, get, metric, post, start, testRegistry, until } from "./helpers.js";

const servers: RunningRewardServer[] = [];
async function serve(config: Parameters<typeof start>[0] = {}): Promise<RunningRewardServer> {
  const s = await start(config);
  servers.push(s);
  return s;
}
afterEach(async () => {
  vi.restoreAllMocks();
  for (const s of servers.splice(0)) await s.close();
});

describe("GET /healthz and /v1/rewards", () => {
  it("/v1/rewards is exactly `rlvr rewards --json`", async () => {
    const s = await serve();
    const out: string[] = [];
    vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void out.push(a.join(" ")));
    const program = new Command("rlvr").exitOverride();
    registerRewardsCommand(program);
    await program.parseAsync(["node", "rlvr", "rewards", "--json"]);
    const res = await get(s, "/v1/rewards");
    expect(res.status).toBe(200);
    expect(res.body).toEqual(JSON.parse(out.join("\n")));
    const math = res.body.find((r: { name: string }) => r.name === "math-answer");
    expect(math.options.map((o: { name: string }) => o.name)).toContain("floatRounding");
    expect((await get(s, "/healthz")).body).toEqual({ status: "ok" });
  });

  it("serves the registry it was given", async () => {
    const { registry } = testRegistry(Promise.resolve());
    const s = await serve({ rewards: registry });
    const res = await get(s, "/v1/rewards");
    expect(res.body.map((r: { name: string }) => r.name)).toEqual(["echo", "throws", "wait"]);
    expect(res.body).toEqual(rewardCatalog(registry));
    expect(res.body[0].options).toEqual([{ name: "factor", type: "number", default: 1 }]);
  });
});

describe("GET /metrics", () => {
  it("counts requests, items by reward and outcome, latencies and errors", async () => {
    const s = await serve();
    const before = (await get(s, "/metrics")).text;
    expect(before).toContain("# TYPE rlvr_serve_item_seconds histogram");
    const example = { gold: "42" };
    const items = [
      { reward: "math-answer", completion: "\\boxed{42}", example }, // scored
      { reward: "math-answer", completion: "\\boxed{41}", example }, // scored (0 is a score)
      { reward: "math-answer", completion: "x", example: { gold: "\\frac{" } }, // gold unparsable: null
      { reward: "made-up-name", completion: "x", example }, // error, under the (unknown) label
    ];
    const res = await post(s, "/v1/score", { items });
    expect(res.body.results.map((r: { score?: number | null }) => r.score)).toEqual([1, 0, null, undefined]);
    await post(s, "/v1/score", "{oops");
    const m = (await get(s, "/metrics")).text;
    const moved = (name: string, labels: Record<string, string> = {}) =>
      metric(m, name, labels) - metric(before, name, labels);
    expect(moved("rlvr_serve_items_total", { reward: "math-answer", outcome: "scored" })).toBe(2);
    expect(moved("rlvr_serve_items_total", { reward: "math-answer", outcome: "unscorable" })).toBe(1);
    expect(moved("rlvr_serve_items_total", { reward: "(unknown)", outcome: "error" })).toBe(1);
    expect(moved("rlvr_serve_item_seconds_count", { reward: "math-answer" })).toBe(3);
    expect(moved("rlvr_serve_item_seconds_bucket", { reward: "math-answer", le: "+Inf" })).toBe(3);
    expect(moved("rlvr_serve_errors_total", { code: "unknown-reward" })).toBe(1);
    expect(moved("rlvr_serve_errors_total", { code: "bad-json" })).toBe(1);
    expect(moved("rlvr_serve_requests_total", { route: "/v1/score", status: "200" })).toBe(1);
    expect(moved("rlvr_serve_requests_total", { route: "/v1/score", status: "400" })).toBe(1);
    expect(metric(m, "rlvr_serve_items_in_flight")).toBe(0);
    expect(m).toContain("process_resident_memory_bytes"); // prom-client's process metrics ride along
  });

  it("sandbox restarts are read from the pool's counters at scrape time, a new pool counting afresh", async () => {
    let pool: PoolSnapshot = null;
    const s = await serve({ poolStats: () => pool });
    const scrape = async () => (await get(s, "/metrics")).text;
    expect(metric(await scrape(), "rlvr_sandbox_workers")).toBe(0); // no pool yet: nothing is started to read it
    pool = { spawned: 2, timeouts: 1, overMemory: 0, crashed: 0, workerDied: 0, queued: 3, size: 2 };
    let m = await scrape();
    expect(metric(m, "rlvr_sandbox_spawned_total")).toBe(2);
    expect(metric(m, "rlvr_sandbox_restarts_total", { cause: "timeout" })).toBe(1);
    expect(metric(m, "rlvr_sandbox_queue_depth")).toBe(3);
    expect(metric(m, "rlvr_sandbox_workers")).toBe(2);
    pool = { ...pool, spawned: 4, timeouts: 2, overMemory: 1, queued: 0 };
    m = await scrape();
    expect(metric(m, "rlvr_sandbox_spawned_total")).toBe(4);
    expect(metric(m, "rlvr_sandbox_restarts_total", { cause: "timeout" })).toBe(2);
    expect(metric(m, "rlvr_sandbox_restarts_total", { cause: "memory" })).toBe(1);
    expect(metric(m, "rlvr_sandbox_queue_depth")).toBe(0);
    // The pool was closed and a new one started: its counts are new, added to the totals.
    pool = { spawned: 1, timeouts: 0, overMemory: 0, crashed: 1, workerDied: 0, queued: 0, size: 1 };
    m = await scrape();
    expect(metric(m, "rlvr_sandbox_spawned_total")).toBe(5);
    expect(metric(m, "rlvr_sandbox_restarts_total", { cause: "crashed" })).toBe(1);
    expect(metric(m, "rlvr_sandbox_restarts_total", { cause: "timeout" })).toBe(2);
  });
});

describe("GET /openapi.json", () => {
  it("is an OpenAPI 3.1 document naming every route, with every $ref resolving", async () => {
    const s = await serve();
    const res = await get(s, "/openapi.json");
    expect(res.status).toBe(200);
    const doc = JSON.parse(res.text);
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths).sort()).toEqual([
      "/healthz",
      "/metrics",
      "/openapi.json",
      "/v1/rewards",
      "/v1/score",
    ]);
    expect(Object.keys(doc.paths["/v1/score"].post.responses).sort()).toEqual(
      ["200", "400", "401", "413", "415", "429", "503"].sort(),
    );
    const refs = [...res.text.matchAll(/"\$ref":"#\/components\/schemas\/(\w+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(5);
    for (const r of refs) expect(doc.components.schemas[r], r).toBeDefined();
    const item = doc.components.schemas.RewardItem;
    expect(item.required.sort()).toEqual(["completion", "example", "reward"]);
    expect(item.additionalProperties).toBe(false);
    expect(doc.components.schemas.ScoreItem.anyOf).toHaveLength(2);
    expect(doc.components.schemas.ItemError.properties.error.properties.code.enum).toContain("timeout");
  });
});

describe("close()", () => {
  it("answers the request in flight, then stops listening", async () => {
    const g = gate();
    const reg = testRegistry(g.promise);
    const s = await start({ rewards: reg.registry });
    const held = post(s, "/v1/score", { items: [{ reward: "wait", completion: "", example: { gold: 0 } }] });
    await until(() => reg.started() === 1);
    const closed = s.close();
    g.open();
    expect((await held).body.results).toEqual([{ score: 1, terms: {} }]);
    await closed;
    await expect(fetch(s.url + "/healthz")).rejects.toThrow();
  });
});
