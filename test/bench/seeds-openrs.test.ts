/**
 * The `openrs` seed system's pure parts (bench/seeds/lib/openrs-metrics.ts, openrs-settings.ts, openrs-job.ts'
 * recipe) and recipes/open-rs.yaml: window means and growth of length series with gaps, the peak of an evaluation
 * history and whether keep-best kept it, the arm recipe (cosine term on, keep-best on, the preset's algorithm), the
 * shared start's cache key, and the recipe loading with the cosine reward. All values by hand.
 */
import { describe, expect, it } from "vitest";
import { join, resolve } from "node:path";
import { growth, peakOf, peakReport, sparkline, windowMean } from "../../bench/seeds/lib/openrs-metrics.js";
import { DRGRPO_START, OPENRS_START, armSizes, startDir, taskOf } from "../../bench/seeds/lib/openrs-settings.js";
import { armRecipe } from "../../bench/seeds/lib/openrs-job.js";
import openrs from "../../bench/seeds/openrs.js";
import { loadRecipe } from "../../src/trainer/recipe.js";
import { getTask } from "../../src/tasks/index.js";

const ROOT = resolve(import.meta.dirname, "..", "..");

describe("length windows", () => {
  it("averages the non-null values of a window", () => {
    expect(windowMean([10, null, 14, 30], 0, 3)).toBe(12);
    expect(windowMean([null, null], 0, 2)).toBeNaN();
    expect(windowMean([1, 2, 3], -5, 1)).toBe(1);
  });
  it("growth is the last window's mean minus the first's", () => {
    // first 2: (10 + 12) / 2 = 11; last 2: (20 + null → 20) = 20
    expect(growth([10, 12, 15, 20, null], 2)).toEqual({ first: 11, last: 20, growth: 9 });
    expect(growth([5, 4, 3, 2], 1).growth).toBe(-3);
    expect(() => growth([1], 0)).toThrow(/window/);
  });
  it("prints one mean per block, '-' for a block with no value", () => {
    expect(sparkline([10, 12, null, null, 7], 2)).toBe("11.0 - 7.0");
  });
});

describe("peak and keep-best", () => {
  const evals = [
    { step: 0, pass: 0.5 },
    { step: 10, pass: 0.6 },
    { step: 20, pass: 0.7 },
    { step: 30, pass: 0.7 },
    { step: 40, pass: 0.55 },
  ];
  it("the peak is the first evaluation after the start with the highest pass@1 (keep-best's strict >)", () => {
    expect(peakOf(evals)).toEqual({ step: 20, pass: 0.7 });
    // a start above every later evaluation does not count: keep-best saves only from step 1 on
    expect(peakOf([{ step: 0, pass: 0.9 }, ...evals.slice(1)]).step).toBe(20);
    expect(() => peakOf([{ step: 0, pass: 0.5 }])).toThrow(/no evaluation/);
  });
  it("reports the drop after the peak and whether keep-best's step is the peak", () => {
    const r = peakReport(evals, { step: 20 });
    expect(r).toMatchObject({ peakStep: 20, lastStep: 40, startPass: 0.5, keepBestIsPeak: true });
    expect(r.dropAfterPeak).toBeCloseTo(0.15, 12);
    expect(peakReport(evals, { step: 30 }).keepBestIsPeak).toBe(false);
    expect(peakReport(evals, null).keepBestIsPeak).toBe(false);
  });
});

describe("the openrs arms", () => {
  const base = {
    seed: 3,
    task: "arithmetic" as const,
    start: join(ROOT, "assets", "demo-start"),
    dir: "/tmp/x",
    preset: "grpo" as const,
    beta: 0.04,
    lr: 1e-4,
    ...armSizes(false),
  };
  it("the cosine arm scores with cosine-length (maxLen 40), keeps the best checkpoint and evaluates greedily", () => {
    const c = armRecipe({ ...base, arm: "cosine", cosineMaxLen: 40 });
    expect(c.task.options).toEqual({ showWork: true, workShare: 0.5, cosineMaxLen: 40 });
    expect(getTask(c.task.name, c.task.options).terms.find((t) => t.name === "cosine")?.weight).toBe(1);
    expect(c.checkpoint.keepBest).toBe(true);
    expect(c.eval).toMatchObject({ every: 10, temperature: 0, atStart: true, examples: 100 });
    expect(c.algorithm.kl.beta).toBe(0.04);
    expect(c.algorithm.advantage.type).toBe("zScore");
    expect(c.train).toMatchObject({ steps: 60, promptsPerStep: 8, groupSize: 8, maxCompletionTokens: 40, lr: 1e-4 });
  });
  it("the plain arm is the same run with plain correctness", () => {
    const c = armRecipe({ ...base, arm: "grpo" });
    const p = armRecipe({ ...base, arm: "cosine", cosineMaxLen: 40 });
    expect(c.task.options).toEqual({ showWork: true, workShare: 0.5 });
    expect({ ...c, name: "", task: null }).toEqual({ ...p, name: "", task: null });
  });
  it("the smoke sizes are tiny", () => {
    expect(armSizes(true).steps).toBeLessThanOrEqual(3);
  });
  it("a start is cached next to the work folders, keyed by its settings, apart for smoke runs", () => {
    const w = join("/r", "bench-seeds", "openrs");
    expect(startDir(w, false, OPENRS_START)).toMatch(/^\/r\/bench-seeds\/openrs-start\/[0-9a-f]{10}$/);
    expect(startDir(w, true, OPENRS_START)).not.toBe(startDir(w, false, OPENRS_START));
    expect(startDir(w, false, DRGRPO_START)).not.toBe(startDir(w, false, OPENRS_START));
    expect(startDir(join("/r", "bench-seeds", "drgrpo"), false)).toBe(startDir(w, false));
  });
  it("arms take bench:learn's task settings: arithmetic with working in half the gold, 40 tokens", () => {
    expect(taskOf("arithmetic")).toEqual({
      options: { showWork: true, workShare: 0.5 },
      trainExamples: 7000,
      maxTokens: 40,
    });
    expect(taskOf("countdown").maxTokens).toBe(24);
  });
  it("is a SeedSystem named openrs", () => {
    expect(openrs.name).toBe("openrs");
    expect(typeof openrs.run).toBe("function");
  });
});

describe("recipes/open-rs.yaml", () => {
  it("loads: GRPO on arithmetic with cosine-length at weight 1, format 0.2, correctness at weight 0, keep-best", () => {
    const c = loadRecipe(join(ROOT, "recipes", "open-rs.yaml"));
    expect(c.preset).toBe("grpo");
    const terms = getTask(c.task.name, c.task.options).terms.map((t) => [t.name, t.weight]);
    expect(terms).toEqual([
      ["correct", 0],
      ["cosine", 1],
      ["format", 0.2],
      ["working", 0],
    ]);
    expect(c.checkpoint.keepBest).toBe(true);
    expect(c.sft).toMatchObject({ enabled: true, steps: 1500 });
    expect(c.train.maxCompletionTokens).toBe(40);
  });
});
