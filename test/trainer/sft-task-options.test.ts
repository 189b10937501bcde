/**
 * `sft.taskOptions`: the SFT warm start draws its examples from the same task built with these options over
 * `task.options` (SIMA 2's start on a subset of task kinds), at the same count and seed; without it, SFT uses the RL
 * train set itself. A bad override fails at load with the task's field named.
 */
import { describe, expect, it } from "vitest";
import "../../src/rewards/index.js";
import { getTask } from "../../src/tasks/index.js";
import { resolveConfig } from "../../src/trainer/recipe.js";
import { sftSetOf } from "../../src/trainer/warm-start.js";
import type { SimaGold } from "../../src/tasks/sima.js";
import type { Example } from "../../src/tasks/types.js";

const recipe = (sft: Record<string, unknown>) =>
  resolveConfig({
    name: "t",
    outDir: "/tmp/unused",
    model: { type: "new", dModel: 16, nLayers: 1, nHeads: 2, maxSeqLen: 64 },
    task: { name: "sima", options: { maxSteps: 8 }, trainExamples: 30, testExamples: 4 },
    sft: { enabled: true, ...sft },
  } as never);

describe("sft.taskOptions", () => {
  const trainSet = getTask("sima", { maxSteps: 8 }).generate("train", 30, 0);

  it("absent: SFT trains on the RL train set itself", () => {
    expect(sftSetOf(recipe({}), trainSet)).toBe(trainSet);
  });

  it("present: the same task with the overrides, same count and seed (here: two kinds only)", () => {
    const set = sftSetOf(recipe({ taskOptions: { kinds: ["reach", "fetch"] } }), trainSet) as Example<SimaGold>[];
    expect(set.length).toBe(30);
    expect(new Set(set.map((e) => e.gold.goal.kind))).toEqual(new Set(["reach", "fetch"]));
    expect(set.every((e) => e.gold.rules.maxSteps === 8)).toBe(true); // task.options still apply underneath
    expect(set).toEqual(getTask("sima", { maxSteps: 8, kinds: ["reach", "fetch"] }).generate("train", 30, 0));
  });

  it("a bad override names the task's field", () => {
    expect(() => sftSetOf(recipe({ taskOptions: { kinds: ["fly"] } }), trainSet)).toThrow(/kinds/);
  });
});
