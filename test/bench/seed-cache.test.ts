/**
 * bench/harness/seed-cache.ts: a stored seed is reused only when asked and only with equal settings; otherwise the
 * seed runs and its record (settings, source hash, result) replaces the stored one. Kept (committed) records are read,
 * never written. `storedResult` only looks a record up: it never runs or writes anything.
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { seedResult, sourcesDiffer, storedRecords, storedResult } from "../../bench/harness/index.js";

describe("seedResult", () => {
  const file = () => join(mkdtempSync(join(tmpdir(), "rlvr-seed-cache-")), "sub", "result-final-0.json");

  it("runs and stores a seed, then reuses it with the same settings when asked", async () => {
    const f = file();
    let runs = 0;
    const run = async () => ({ gain: 0.125, run: ++runs });
    const first = await seedResult({ file: f, settings: { seed: 0, lr: 3e-5 }, source: "aaa", reuse: true }, run);
    expect(first).toMatchObject({ reused: false, source: "aaa", result: { gain: 0.125, run: 1 } });
    const stored = JSON.parse(readFileSync(f, "utf8"));
    expect(stored).toMatchObject({ settings: { seed: 0, lr: 3e-5 }, source: "aaa", result: { run: 1 } });
    const again = await seedResult({ file: f, settings: { seed: 0, lr: 3e-5 }, source: "bbb", reuse: true }, run);
    // Reused: the stored record, with the source hash of the code that made it (not the current one).
    expect(again).toMatchObject({ reused: true, source: "aaa", result: { run: 1 } });
    expect(runs).toBe(1);
  });

  it("records when the run began and when it finished", async () => {
    const f = file();
    const before = Date.now();
    const rec = await seedResult({ file: f, settings: {}, source: "s", reuse: false }, async () => {
      await new Promise((r) => setTimeout(r, 30));
      return 1;
    });
    const began = Date.parse(rec.madeAt);
    const finished = Date.parse(rec.finishedAt!);
    expect(began).toBeGreaterThanOrEqual(before);
    expect(finished - began).toBeGreaterThanOrEqual(25);
    expect(JSON.parse(readFileSync(f, "utf8"))).toMatchObject({ madeAt: rec.madeAt, finishedAt: rec.finishedAt });
  });

  it("reruns when the settings differ or reuse is off, and overwrites the stored record", async () => {
    const f = file();
    let runs = 0;
    const run = async () => ++runs;
    await seedResult({ file: f, settings: { seed: 0, lr: 3e-5 }, source: "aaa", reuse: true }, run);
    const changed = await seedResult({ file: f, settings: { seed: 0, lr: 1e-5 }, source: "aaa", reuse: true }, run);
    expect(changed).toMatchObject({ reused: false, result: 2 });
    const off = await seedResult({ file: f, settings: { seed: 0, lr: 1e-5 }, source: "ccc", reuse: false }, run);
    expect(off).toMatchObject({ reused: false, result: 3, source: "ccc" });
    expect(JSON.parse(readFileSync(f, "utf8"))).toMatchObject({ settings: { lr: 1e-5 }, source: "ccc", result: 3 });
  });

  it("reuses a kept record with equal settings, records the machine, and never writes a kept file", async () => {
    const f = file();
    const kept = file();
    let runs = 0;
    const run = async () => ++runs;
    // Make a kept record (as a committed bench/results/ file would be), then look it up from an empty work folder.
    await seedResult({ file: kept, settings: { seed: 1 }, source: "old", reuse: false, machine: { threads: 1 } }, run);
    expect(JSON.parse(readFileSync(kept, "utf8"))).toMatchObject({ machine: { threads: 1 }, result: 1 });
    const opts = { file: f, kept: [join(dirname(kept), "missing.json"), kept], source: "new", reuse: true };
    const hit = await seedResult({ ...opts, settings: { seed: 1 } }, run);
    expect(hit).toMatchObject({ reused: true, from: kept, source: "old", machine: { threads: 1 }, result: 1 });
    expect(existsSync(f)).toBe(false);
    // Other settings: the seed runs, and its record goes to the work folder; the kept record is untouched.
    const miss = await seedResult({ ...opts, settings: { seed: 2 }, machine: { threads: 2 } }, run);
    expect(miss).toMatchObject({ reused: false, from: f, result: 2, machine: { threads: 2 } });
    expect(JSON.parse(readFileSync(kept, "utf8"))).toMatchObject({ settings: { seed: 1 }, result: 1 });
    expect(JSON.parse(readFileSync(f, "utf8"))).toMatchObject({ settings: { seed: 2 }, source: "new", result: 2 });
  });

  it("storedResult finds an equal record without running or writing, and nothing unless reuse is set", async () => {
    const f = file();
    expect(storedResult({ file: f, settings: { seed: 0 }, reuse: true })).toBeNull();
    expect(existsSync(f)).toBe(false);
    await seedResult({ file: f, settings: { seed: 0 }, source: "aaa", reuse: false }, async () => 7);
    expect(storedResult({ file: f, settings: { seed: 0 }, reuse: true })).toMatchObject({
      reused: true,
      from: f,
      source: "aaa",
      result: 7,
    });
    expect(storedResult({ file: f, settings: { seed: 1 }, reuse: true })).toBeNull();
    expect(storedResult({ file: f, settings: { seed: 0 }, reuse: false })).toBeNull();
  });

  it("says when reused seeds were made by different code", () => {
    expect(sourcesDiffer([{ source: "a" }, { source: "a" }])).toBe(false);
    expect(sourcesDiffer([{ source: "a" }, { source: "b" }, { source: "a" }])).toBe(true);
    expect(sourcesDiffer([])).toBe(false);
  });
});

describe("storedRecords", () => {
  it("reads every record that exists, in order, each with its file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rlvr-seed-cache-"));
    const [a, b, missing] = ["a.json", "b.json", "c.json"].map((f) => join(dir, f));
    await seedResult({ file: b!, settings: { seed: 1 }, source: "s1", reuse: false }, async () => 2);
    await seedResult({ file: a!, settings: { seed: 0 }, source: "s0", reuse: false }, async () => 1);
    const recs = storedRecords<number>([missing!, b!, a!]);
    expect(recs.map((r) => [r.from, r.settings, r.result])).toEqual([
      [b, { seed: 1 }, 2],
      [a, { seed: 0 }, 1],
    ]);
  });
});
