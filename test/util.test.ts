import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, readdirSync, appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Rng, mean, std, median, writeFileAtomic, appendJsonl, readJsonl } from "../src/util/index.js";

describe("Rng", () => {
  it("is deterministic per seed and differs across seeds", () => {
    const a = new Rng(42),
      b = new Rng(42),
      c = new Rng(43);
    const xa = [a.nextU32(), a.nextU32(), a.nextU32()];
    expect([b.nextU32(), b.nextU32(), b.nextU32()]).toEqual(xa);
    expect([c.nextU32(), c.nextU32(), c.nextU32()]).not.toEqual(xa);
  });
  it("split streams do not advance the parent and are label-specific", () => {
    const a = new Rng(7);
    const before = a.state();
    const s1 = a.split("dropout").random(),
      s2 = a.split("dropout").random(),
      s3 = a.split("init").random();
    expect(a.state()).toEqual(before);
    expect(s1).toBe(s2);
    expect(s3).not.toBe(s1);
  });
  it("state round-trips mid-stream, including the cached normal", () => {
    const a = new Rng(1);
    a.normal();
    const b = Rng.fromState(a.state());
    expect([b.normal(), b.random(), b.int(100)]).toEqual([a.normal(), a.random(), a.int(100)]);
  });
  it("random() is roughly uniform and normal() roughly standard", () => {
    const r = new Rng(3);
    const u = Array.from({ length: 20000 }, () => r.random());
    const z = Array.from({ length: 20000 }, () => r.normal());
    expect(Math.abs(mean(u) - 0.5)).toBeLessThan(0.01);
    expect(Math.abs(mean(z))).toBeLessThan(0.03);
    expect(Math.abs(std(z) - 1)).toBeLessThan(0.03);
    expect(Math.min(...u)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...u)).toBeLessThan(1);
  });
});

describe("stats", () => {
  it("matches hand-computed values", () => {
    expect(mean([1, 0, 0, 1])).toBe(0.5);
    expect(std([1, 0, 0, 1], "population")).toBeCloseTo(0.5, 12);
    expect(std([1, 0, 0, 1], "sample")).toBeCloseTo(Math.sqrt(1 / 3), 12);
    expect(median([3, 1, 2, 10])).toBe(2.5);
    expect(std([5], "sample")).toBe(0);
  });
});

describe("files", () => {
  it("writes atomically and leaves no temp files", () => {
    const dir = mkdtempSync(join(tmpdir(), "rlvr-"));
    const p = join(dir, "sub", "a.json");
    writeFileAtomic(p, "one");
    writeFileAtomic(p, "two");
    expect(readFileSync(p, "utf8")).toBe("two");
    expect(readdirSync(join(dir, "sub"))).toEqual(["a.json"]);
  });
  it("reads JSONL and ignores a torn final line", () => {
    const dir = mkdtempSync(join(tmpdir(), "rlvr-"));
    const p = join(dir, "m.jsonl");
    appendJsonl(p, { step: 1 });
    appendJsonl(p, { step: 2 });
    appendFileSync(p, '{"step": 3, "rew');
    expect(readJsonl(p)).toEqual([{ step: 1 }, { step: 2 }]);
  });
});
