/**
 * The `exgrpo` seed system's pure parts: every arm read at the start's best decoding, the curve line, the start's
 * cache key, and the two arms' recipes (replay is their only difference).
 */
import { describe, expect, it } from "vitest";
import { curveLine, minusOnPolicy } from "../../bench/seeds/lib/exgrpo-metrics.js";
import { sizes, startDirOf, type ExgrpoJob } from "../../bench/seeds/lib/exgrpo-settings.js";
import { armRecipe } from "../../bench/seeds/lib/exgrpo-job.js";

describe("exgrpo seed system", () => {
  it("reads each arm at the start's best decoding", () => {
    const start = { T0: 0.6, "T0.3": 0.55, "T0.6": 0.4, T1: 0.3 };
    const onpolicy = { T0: 0.2, "T0.3": 0.5, "T0.6": 0.5, T1: 0.5 }; // best elsewhere: still read at T0
    const exgrpo = { T0: 0.7, "T0.3": 0.6, "T0.6": 0.5, T1: 0.4 };
    expect(minusOnPolicy(start, onpolicy, exgrpo)).toEqual({ decoding: "T0", start: 0.6, onpolicy: 0.2, exgrpo: 0.7 });
    expect(minusOnPolicy(start, onpolicy, exgrpo, { ...exgrpo, T0: 0.1 }).control).toBe(0.1);
    expect(() => minusOnPolicy(start, { ...onpolicy, T0: NaN }, exgrpo)).toThrow(/onpolicy has no pass@1 at T0/);
  });
  it("renders a curve in points", () => {
    expect(
      curveLine([
        { step: 0, pass: 0.6 },
        { step: 10, pass: 0.345 },
      ]),
    ).toBe("0:60 10:35");
  });
  it("keys the start by seed, settings and source", () => {
    const a = startDirOf("/w", 0, false, "src1");
    expect(a).toMatch(/^\/w\/start-0-[0-9a-f]{10}$/);
    expect(startDirOf("/w", 0, false, "src2")).not.toBe(a);
    expect(startDirOf("/w", 0, true, "src1")).not.toBe(a);
    expect(startDirOf("/w", 1, false, "src1")).toBe(a.replace("/start-0-", "/start-1-")); // same key, own seed
  });
  it("the arms differ only in algorithm.replay", () => {
    const job = (kind: ExgrpoJob["kind"]): ExgrpoJob => ({
      kind,
      seed: 0,
      dir: "/tmp/x",
      startDir: "/tmp/start",
      split: "tune",
      sizes: sizes(false),
    });
    const on = armRecipe(job("onpolicy"));
    const ex = armRecipe(job("exgrpo"));
    expect(on.algorithm.replay).toEqual({ type: "none" });
    expect(ex.algorithm.replay).toMatchObject({ type: "exgrpo", ratio: 0.5, startPassRate: 0.35, shapeOffset: 0.1 });
    expect({ ...on.algorithm, replay: null }).toEqual({ ...ex.algorithm, replay: null });
    expect({ ...on.train, x: on.name }).toEqual({ ...ex.train, x: on.name });
    expect(ex.algorithm).toMatchObject({
      advantage: { type: "meanOnly" },
      kl: { beta: 0 },
      policy: { clip: { type: "ppo" } },
    });
  });
});
