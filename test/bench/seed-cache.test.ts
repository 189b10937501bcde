/**
 * bench/harness/seed-cache.ts: a stored seed is reused only when asked and only with equal settings; otherwise the
 * seed runs and its record (settings, source hash, result) replaces the stored one.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { seedResult, sourcesDiffer } from "../../bench/harness/index.js";

describe("seedResult", () => {
  const file = () => join(mkdtempSync(join(tmpdir(), "rlvr-seed-cache-")), "sub", "result-final-0.json");

  it("runs and stores a seed, then reuses it with the same settings when asked", async () => {
    const f = file();
    let runs = 0;
    const run = async () => ({ gain: 0.125, run: ++runs });
    const first = await seedResult(f, { seed: 0, lr: 3e-5 }, "aaa", true, run);
    expect(first).toMatchObject({ reused: false, source: "aaa", result: { gain: 0.125, run: 1 } });
    const stored = JSON.parse(readFileSync(f, "utf8"));
    expect(stored).toMatchObject({ settings: { seed: 0, lr: 3e-5 }, source: "aaa", result: { run: 1 } });
    const again = await seedResult(f, { seed: 0, lr: 3e-5 }, "bbb", true, run);
    // Reused: the stored record, with the source hash of the code that made it (not the current one).
    expect(again).toMatchObject({ reused: true, source: "aaa", result: { run: 1 } });
    expect(runs).toBe(1);
  });

  it("reruns when the settings differ or reuse is off, and overwrites the stored record", async () => {
    const f = file();
    let runs = 0;
    const run = async () => ++runs;
    await seedResult(f, { seed: 0, lr: 3e-5 }, "aaa", true, run);
    const changed = await seedResult(f, { seed: 0, lr: 1e-5 }, "aaa", true, run);
    expect(changed).toMatchObject({ reused: false, result: 2 });
    const off = await seedResult(f, { seed: 0, lr: 1e-5 }, "ccc", false, run);
    expect(off).toMatchObject({ reused: false, result: 3, source: "ccc" });
    expect(JSON.parse(readFileSync(f, "utf8"))).toMatchObject({ settings: { lr: 1e-5 }, source: "ccc", result: 3 });
  });

  it("says when reused seeds were made by different code", () => {
    expect(sourcesDiffer([{ source: "a" }, { source: "a" }])).toBe(false);
    expect(sourcesDiffer([{ source: "a" }, { source: "b" }, { source: "a" }])).toBe(true);
    expect(sourcesDiffer([])).toBe(false);
  });
});
