/**
 * scoreItems' scheduling (src/serve/score-items.ts): a batch of quick synchronous checks runs without a turn of the
 * event loop per item, and a batch that computes for longer than SLICE_MS yields, so other requests and /healthz
 * are served between its items. Ordering is observed with setImmediate callbacks, never with wall-clock limits.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { RewardRegistry } from "../../src/rewards/index.js";
import { SLICE_MS, scoreItems } from "../../src/serve/score-items.js";
import { tasks } from "../../src/tasks/index.js";

/** A registry with a checker that computes (busy) for `busyMs` and records how many immediates had run by then. */
function busyRegistry(busyMs: number, immediatesRun: () => number, seen: number[]): RewardRegistry {
  const registry = new RewardRegistry();
  registry.register({
    name: "busy",
    description: "test: computes for busyMs, synchronously",
    options: z.object({}).strict(),
    score: ({ completion }) => {
      const until = performance.now() + busyMs;
      while (performance.now() < until);
      seen.push(immediatesRun());
      return { score: completion.length, terms: {} };
    },
  });
  return registry;
}

/** Counts setImmediate callbacks that ran while `work` was pending (a chain: one per event-loop turn). */
async function countTurns<T>(work: (run: () => number) => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let stop = false;
  const tick = () => {
    if (stop) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  const result = await work(() => turns);
  stop = true;
  return { result, turns };
}

const items = (n: number) => Array.from({ length: n }, (_, i) => ({ reward: "busy", completion: "x".repeat(i) }));

describe("scoreItems scheduling", () => {
  it("scores a batch in order without an event-loop turn per item", async () => {
    const run200 = async (sliceMs?: number) => {
      const seen: number[] = [];
      const { result } = await countTurns((run) =>
        scoreItems(
          items(200).map((it) => ({ ...it, example: { gold: null } })),
          {
            rewards: busyRegistry(0, run, seen),
            tasks,
            itemTimeoutMs: 60_000,
            ...(sliceMs === undefined ? {} : { sliceMs }),
          },
        ),
      );
      expect(result.map((r) => ("score" in r ? r.score : null))).toEqual(items(200).map((_, i) => i));
      return seen;
    };
    // A slice longer than the batch: every item runs before the event loop turns once.
    expect(new Set(await run200(1e9))).toEqual(new Set([0]));
    // A zero slice: a turn after every item (what the batch did before slicing).
    expect(Math.max(...(await run200(0)))).toBe(199);
    // The default slice: 200 instant checks take a few turns at most, not one per item.
    expect(Math.max(...(await run200()))).toBeLessThan(100);
  });

  it("yields to the event loop once a slice has been used, so other work runs between items", async () => {
    const seen: number[] = [];
    const n = 6;
    await countTurns((run) =>
      scoreItems(
        items(n).map((it) => ({ ...it, example: { gold: null } })),
        {
          rewards: busyRegistry(SLICE_MS, run, seen),
          tasks,
          itemTimeoutMs: 60_000,
        },
      ),
    );
    // Each item computes for a whole slice, so the batch yields after every item: turns advance between items.
    expect(seen).toHaveLength(n);
    for (let i = 1; i < n; i++) expect(seen[i]!).toBeGreaterThan(seen[i - 1]!);
  });

  it("mixes synchronous and async checkers in order; sync throws, async rejects and empty returns are reward-failed", async () => {
    const registry = new RewardRegistry();
    const opts = z.object({}).strict();
    registry.register({ name: "sync", description: "t", options: opts, score: () => ({ score: 1, terms: {} }) });
    registry.register({
      name: "async",
      description: "t",
      options: opts,
      score: async ({ completion }) => ({ score: completion.length, terms: {} }),
    });
    registry.register({
      name: "late",
      description: "t",
      options: opts,
      score: () => new Promise((r) => setTimeout(() => r({ score: 9, terms: {} }), 200)),
    });
    registry.register({
      name: "throws",
      description: "t",
      options: opts,
      score: () => {
        throw new Error("sync boom");
      },
    });
    registry.register({
      name: "rejects",
      description: "t",
      options: opts,
      score: async () => {
        throw new Error("async boom");
      },
    });
    registry.register({ name: "empty", description: "t", options: opts, score: () => undefined as never });
    const observed: string[] = [];
    const names = ["async", "sync", "late", "throws", "rejects", "empty", "sync"];
    const result = await scoreItems(
      names.map((reward, i) => ({ reward, completion: "x".repeat(i), example: { gold: null } })),
      { rewards: registry, tasks, itemTimeoutMs: 50, observe: (label) => observed.push(label) },
    );
    expect(result).toEqual([
      { score: 0, terms: {} },
      { score: 1, terms: {} },
      { error: { code: "timeout", message: "reward late took longer than itemTimeoutMs (50 ms)" } },
      { error: { code: "reward-failed", message: "throws threw: sync boom" } },
      { error: { code: "reward-failed", message: "rejects threw: async boom" } },
      { error: { code: "reward-failed", message: expect.stringMatching(/^empty threw: /) } },
      { score: 1, terms: {} },
    ]);
    expect([...observed].sort()).toEqual([...names].sort()); // observed once per item
  });
});
