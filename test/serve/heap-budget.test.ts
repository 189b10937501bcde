/**
 * The reward server's heap budget (src/serve/heap-budget.ts): it collects exactly when the old generation has grown
 * past the budget since the last collection, measures growth from the heap left after each collection, keeps its
 * collections under the time share, and exposes V8's gc() without leaving a `gc` global behind. Heap sizes, the clock
 * and the collection are injected, so every decision is checked against hand-set numbers.
 */
import { describe, expect, it } from "vitest";
import { fullCollection, oldGenerationBytes, startHeapBudget } from "../../src/serve/heap-budget.js";
import { parseServeOptions } from "../../src/serve/options.js";
import { buildRewardServer } from "../../src/serve/server.js";
import { startRewardServer } from "../../src/serve/start.js";

const MB = 1024 * 1024;

/** A fake heap: `used` bytes in the old generation; a collection leaves `live` and takes `gcMs` of the fake clock. */
function fakeHeap(live: number, gcMs = 0) {
  const h = { used: live, live, clock: 0, collected: 0 };
  return {
    h,
    heapUsed: () => h.used,
    collect: () => {
      h.collected++;
      h.used = h.live;
      h.clock += gcMs;
    },
    now: () => h.clock,
  };
}

describe("heap budget", () => {
  it("collects once the old generation has grown past the budget, measured from what the last collection left", () => {
    const f = fakeHeap(30 * MB);
    const seen: [number, number][] = [];
    const b = startHeapBudget({ budgetMb: 8, ...f, onCollect: (_s, before, after) => seen.push([before, after]) });
    try {
      f.h.used = 38 * MB; // exactly the budget: not past it
      expect(b.check()).toBe(false);
      f.h.used = 38 * MB + 1;
      expect(b.check()).toBe(true);
      expect(seen).toEqual([[38 * MB + 1, 30 * MB]]);
      // The live heap grew to 35 MB: the next collection waits for 35 + 8 MB, not 30 + 8.
      f.h.live = 35 * MB;
      f.h.used = 40 * MB;
      expect(b.check()).toBe(true); // 40 - 30 > 8
      expect(f.h.used).toBe(35 * MB);
      f.h.used = 42 * MB;
      expect(b.check()).toBe(false); // 42 - 35 <= 8
      f.h.used = 43.5 * MB;
      expect(b.check()).toBe(true);
      expect(b.collections()).toBe(3);
      expect(f.h.collected).toBe(3);
    } finally {
      b.stop();
    }
  });

  it("counts growth from the lowest size seen, so a collection V8 ran by itself lowers the mark", () => {
    const f = fakeHeap(30 * MB);
    const b = startHeapBudget({ budgetMb: 8, ...f });
    try {
      f.h.used = 24 * MB; // V8 collected on its own: 6 MB below the last mark
      expect(b.check()).toBe(false);
      f.h.used = 33 * MB; // 9 MB over 24, though only 3 over 30
      expect(b.check()).toBe(true);
      expect(f.h.collected).toBe(1);
    } finally {
      b.stop();
    }
  });

  it("keeps collections under maxShare of the time, whatever the garbage rate", () => {
    const f = fakeHeap(30 * MB, 50); // each collection takes 50 ms
    const b = startHeapBudget({ budgetMb: 1, maxShare: 0.1, ...f });
    try {
      f.h.used = 40 * MB;
      expect(b.check()).toBe(true); // ends at t = 50
      f.h.used = 40 * MB;
      f.h.clock = 50 + 499; // 499 ms after the last one ended: 50 / 499 > 0.1
      expect(b.check()).toBe(false);
      f.h.clock = 50 + 500;
      expect(b.check()).toBe(true);
      expect(f.h.collected).toBe(2);
    } finally {
      b.stop();
    }
  });

  it("budget 0 never collects; a bad budget or share is refused", () => {
    const f = fakeHeap(30 * MB);
    const b = startHeapBudget({ budgetMb: 0, ...f });
    f.h.used = 10_000 * MB;
    expect(b.check()).toBe(false);
    expect(f.h.collected).toBe(0);
    expect(() => startHeapBudget({ budgetMb: -1, ...f })).toThrow(/budgetMb -1/);
    expect(() => startHeapBudget({ budgetMb: Number.NaN, ...f })).toThrow(/budgetMb/);
    expect(() => startHeapBudget({ budgetMb: 8, maxShare: 0, ...f })).toThrow(/maxShare 0/);
  });

  it("exposes V8's full collection without leaving a gc global, and it frees unreachable old-generation memory", () => {
    const gc = fullCollection();
    expect(typeof gc).toBe("function");
    expect(fullCollection()).toBe(gc);
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
    gc();
    const base = oldGenerationBytes();
    // 64 arrays of 1 MB of doubles: each is past the regular object size, so V8 puts it in the large-object space
    // (a typed array would not do: its bytes live outside the JS heap).
    let hold: number[][] | null = Array.from({ length: 64 }, () => new Array<number>(128 * 1024).fill(0.5));
    expect(oldGenerationBytes() - base).toBeGreaterThan(32 * MB);
    hold = null;
    gc();
    expect(hold).toBeNull();
    expect(oldGenerationBytes() - base).toBeLessThan(8 * MB);
  });

  it("is a server option (default 8 MB; the error names the field) and its collections are counted in /metrics", async () => {
    expect(parseServeOptions({}).heapBudgetMb).toBe(8);
    expect(() => parseServeOptions({ heapBudgetMb: -2 })).toThrow(/heapBudgetMb/);
    const server = await startRewardServer({ port: 0, heapBudgetMb: 8, keepPool: true });
    try {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      expect(text).toMatch(/^rlvr_serve_heap_collections_total \d+$/m);
      expect(text).toMatch(/^rlvr_serve_heap_collection_seconds_total [\d.e-]+$/m);
      // A built (not started) server has the counters too, at zero.
      const built = buildRewardServer({});
      expect(await built.metrics.registry.getSingleMetricAsString("rlvr_serve_heap_collections_total")).toMatch(/ 0$/m);
    } finally {
      await server.close();
    }
  });
});
