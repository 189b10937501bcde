/**
 * POST /v1/score over real HTTP gives the same numbers as in-process scoring: gold and adversarial completions of
 * every text-checked reward family plus one sandboxed one (sirl), task items against `task.score`, a fast-check
 * property over random completions; and per-item errors (unknown reward or task, invalid options, a throwing
 * checker, a timeout) leave the other items of the batch scored.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { closeSharedPool, rewards } from "../../src/rewards/index.js";
import { tasks } from "../../src/tasks/index.js";
import { toScored, type RunningRewardServer } from "../../src/serve/index.js";
import { gate, get, metric, post, start, testRegistry } from "./helpers.js";

/** Rewards whose scoring runs a simulator for seconds; the sandbox is exercised by sirl instead. */
const SLOW = new Set(["mpc-car-improved", "mpc-car-driving", "kernel-correct", "kernel-speed"]);

/** Completions that must earn what they earn in process, whatever that is (most earn nothing). */
const ADVERSARIAL = [
  "", // empty
  "\\boxed{}", // an empty answer block
  "I cannot solve this.", // a refusal
  "<answer></answer><answer>1</answer>", // two answer blocks, the first empty
  "9".repeat(3000), // a long run of digits
  '{"a": [1, 2', // truncated JSON
];

let server: RunningRewardServer;
beforeAll(async () => {
  server = await start();
});
afterAll(async () => {
  await server.close();
  await closeSharedPool();
});

describe("POST /v1/score equals in-process scoring", () => {
  it("gold and adversarial completions of every reward family, in order", async () => {
    const items: { reward: string; completion: string; example: { gold: unknown } }[] = [];
    for (const spec of rewards.list()) {
      if (spec.exampleGold === undefined || !spec.goldCompletion || SLOW.has(spec.name)) continue;
      const gold = spec.goldCompletion(spec.exampleGold, spec.options.parse({}));
      // The sandboxed reward gets its gold and one adversarial completion (each run is a worker job).
      const completions = spec.name === "sirl" ? [gold, ""] : [gold, ...ADVERSARIAL, gold + "\n" + gold];
      for (const completion of completions)
        items.push({ reward: spec.name, completion, example: { gold: spec.exampleGold } });
    }
    expect(new Set(items.map((i) => i.reward)).size).toBeGreaterThanOrEqual(15);
    const res = await post(server, "/v1/score", { items });
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(items.length);
    for (const [i, item] of items.entries()) {
      const want = toScored(await rewards.score(item.reward, { completion: item.completion, gold: item.example.gold }));
      expect({ reward: item.reward, i, ...res.body.results[i] }).toEqual({ reward: item.reward, i, ...want });
    }
    // Gold completions earn full score through the service too (spot check of the registry-wide gold test).
    const mathGold = items.findIndex((i) => i.reward === "math-answer");
    expect(res.body.results[mathGold].score).toBe(1);
    const sirlGold = items.findIndex((i) => i.reward === "sirl");
    expect(res.body.results[sirlGold].score).toBe(rewards.get("sirl").maxScore);
    // The code-running reward ran in the sandbox worker pool, which /metrics reads without starting one.
    const m = (await get(server, "/metrics")).text;
    expect(metric(m, "rlvr_sandbox_spawned_total")).toBeGreaterThanOrEqual(1);
    expect(metric(m, "rlvr_sandbox_workers")).toBeGreaterThanOrEqual(1);
  });

  it("options and prompt/tokens reach the reward", async () => {
    const example = { gold: "12", tokens: Array.from({ length: 40 }, (_, i) => i) };
    const items = [
      { reward: "math-answer", completion: "so \\boxed{12.0}", example },
      { reward: "overlong", options: { maxLen: 30, cache: 5 }, completion: "x", example },
    ];
    const res = await post(server, "/v1/score", { items });
    for (const [i, it] of items.entries()) {
      const want = await rewards.score(it.reward, { completion: it.completion, ...example }, it.options ?? {});
      expect(res.body.results[i]).toEqual(toScored(want));
    }
    expect(res.body.results[1].score).toBeLessThan(0); // 40 tokens against maxLen 30: penalised, so options arrived
  });

  it("task items score with the task's weighted terms, as task.score does", async () => {
    const items = [];
    const want = [];
    for (const name of ["addition", "countdown", "linear-equation", "arithmetic"]) {
      const task = tasks.get(name);
      for (const ex of task.generate("test", 2, 7)) {
        for (const completion of [ex.goldCompletion, "", ex.goldCompletion.replace(/\d/g, "7")]) {
          items.push({ task: name, completion, example: { gold: ex.gold, prompt: ex.prompt } });
          want.push(toScored(await task.score(ex, completion)));
        }
      }
    }
    const res = await post(server, "/v1/score", { items });
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual(want);
    expect(res.body.results[0].score).toBeGreaterThan(0); // a gold completion earns credit
  });

  it("random completions score the same over HTTP (property, one batch per run)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.string(),
            fc.integer().map((n) => `\\boxed{${n}}`),
          ),
          { maxLength: 8 },
        ),
        async (cs) => {
          const items = cs.map((completion) => ({ reward: "math-answer", completion, example: { gold: "42" } }));
          const res = await post(server, "/v1/score", { items });
          const want = await Promise.all(
            items.map(async (i) =>
              toScored(await rewards.score("math-answer", { completion: i.completion, gold: "42" })),
            ),
          );
          expect(res.body.results).toEqual(want);
        },
      ),
      { numRuns: 25, seed: 17 },
    );
  });
});

describe("per-item errors", () => {
  it("unknown reward, invalid options, unknown task and a throwing checker fail only their own item", async () => {
    const g = gate();
    g.open();
    const { registry } = testRegistry(g.promise);
    const s = await start({ rewards: registry });
    try {
      const example = { gold: null };
      const res = await post(s, "/v1/score", {
        items: [
          { reward: "echo", completion: "abc", example },
          { reward: "no-such-reward", completion: "abc", example },
          { reward: "echo", options: { factor: "two" }, completion: "abc", example },
          { reward: "echo", options: { nope: 1 }, completion: "abc", example },
          { reward: "throws", completion: "abc", example },
          { task: "no-such-task", completion: "abc", example },
          { task: "addition", taskOptions: { maxDigits: -3 }, completion: "abc", example },
          { reward: "echo", options: { factor: 2 }, completion: "abcd", example },
        ],
      });
      expect(res.status).toBe(200);
      const r = res.body.results;
      expect(r[0]).toEqual({ score: 3, terms: { len: 1 } });
      expect(r[1].error.code).toBe("unknown-reward");
      expect(r[1].error.message).toContain("known: echo, throws, wait");
      expect(r[2].error).toMatchObject({ code: "invalid-options" });
      expect(r[2].error.message).toContain("factor");
      expect(r[3].error.message).toContain("nope");
      expect(r[4].error).toEqual({ code: "reward-failed", message: "throws threw: boom from the checker" });
      expect(r[5].error.code).toBe("unknown-task");
      expect(r[6].error.code).toBe("invalid-options");
      expect(r[6].error.message).toContain("maxDigits");
      expect(r[7]).toEqual({ score: 8, terms: { len: 1 } });
    } finally {
      await s.close();
    }
  });

  it("refuses tasks whose options name local files, modules or endpoints (dataset, conductor), reading nothing", async () => {
    await import("../../src/rollout/conductor/index.js"); // registers "conductor" as the trainer does
    expect(tasks.definition("dataset").localOnly).toBe(true);
    expect(tasks.definition("conductor").localOnly).toBe(true);
    const s = await start({});
    try {
      const example = { gold: "1" };
      const res = await post(s, "/v1/score", {
        items: [
          { task: "dataset", taskOptions: { path: "/etc/passwd" }, completion: "x", example },
          {
            task: "dataset",
            taskOptions: { path: "rows.jsonl", reward: { module: "/tmp/evil.mjs" } },
            completion: "x",
            example,
          },
          { task: "conductor", taskOptions: {}, completion: "x", example },
          { task: "addition", completion: "\\boxed{1}", example: { gold: 1 } },
        ],
      });
      const r = res.body.results;
      for (const i of [0, 1, 2]) {
        expect(r[i].error.code).toBe("unknown-task");
        expect(r[i].error.message).not.toMatch(/root:|passwd|evil/);
        expect(r[i].error.message).not.toMatch(/known: .*\b(dataset|conductor)\b/);
      }
      expect(r[3].error).toBeUndefined();
    } finally {
      await s.close();
    }
  });

  it("an item past itemTimeoutMs gets a timeout error while the others are scored", async () => {
    const g = gate(); // never opened until the end: the wait reward hangs
    const { registry } = testRegistry(g.promise);
    const s = await start({ rewards: registry, itemTimeoutMs: 50 });
    try {
      const example = { gold: 0 };
      const res = await post(s, "/v1/score", {
        items: [
          { reward: "wait", completion: "", example },
          { reward: "echo", completion: "xy", example },
        ],
      });
      expect(res.body.results[0].error.code).toBe("timeout");
      expect(res.body.results[0].error.message).toContain("50 ms");
      expect(res.body.results[1]).toEqual({ score: 2, terms: { len: 1 } });
    } finally {
      g.open();
      await s.close();
    }
  });
});
