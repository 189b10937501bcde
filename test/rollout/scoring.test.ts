/** Scoring rollouts: a reward that throws makes that completion unscorable (null), is counted, and stops nothing. */
import { describe, expect, it } from "vitest";
import { scoreGroups } from "../../src/rollout/groups.js";
import type { Rollout, RolloutGroup } from "../../src/rollout/types.js";
import type { Example, Task } from "../../src/tasks/types.js";
import type { RewardResult } from "../../src/rewards/types.js";
import { assignAdvantages, checkNulls } from "../../src/trainer/step-advantages.js";
import { resolveConfig } from "../../src/trainer/recipe.js";
import { buildAlgorithm } from "../../src/algorithms/index.js";
import { rewardMetrics } from "../../src/trainer/step-metrics.js";

const example: Example<string> = { id: "t/train/0", prompt: "2+2=", gold: "4", goldCompletion: "4" };
/** A task whose checker throws on completions containing "!" and returns null on "?". */
const task: Task<string> = {
  name: "flaky",
  description: "test task",
  terms: [{ name: "correct", reward: "exact", weight: 1 }],
  correctTerm: "correct",
  generate: () => [example],
  async score(ex, completion): Promise<RewardResult> {
    if (completion.includes("!")) throw new Error("checker exploded");
    if (completion.includes("?")) return { score: null, terms: {}, info: { reason: "unparseable gold" } };
    const c = completion === ex.gold ? 1 : 0;
    return { score: c, terms: { correct: c } };
  },
};

function group(texts: string[]): RolloutGroup {
  const rollouts: Rollout[] = texts.map((text, i) => ({
    id: `1/0/${i}`,
    task: "flaky",
    exampleId: example.id,
    groupId: "1/0",
    promptIds: [1, 5],
    completionIds: [7, 8],
    samplerLogprobs: [-1, -1],
    lossMask: [1, 1],
    text,
    finishReason: "stop",
    reward: null,
    terms: {},
    advantage: 0,
    policyVersion: 0,
  }));
  return { id: "1/0", exampleId: example.id, prompt: example.prompt, rollouts };
}

describe("scoreGroups", () => {
  it("a throwing checker gives null with the error kept, counted, and the rest still scored", async () => {
    const g = group(["4", "x!", "5", "4"]);
    const stats = await scoreGroups(task, new Map([[example.id, example]]), [g]);
    expect(stats).toEqual({ nulls: 1, errors: 1, firstError: "flaky: checker exploded" });
    expect(g.rollouts.map((r) => r.reward)).toEqual([1, null, 0, 1]);
    expect(g.rollouts[1]!.rewardInfo).toEqual({ error: "checker exploded" });
  });
  it("a null score is counted but is not an error", async () => {
    const g = group(["4", "?"]);
    expect(await scoreGroups(task, new Map([[example.id, example]]), [g])).toMatchObject({ nulls: 1, errors: 0 });
  });
  it("nulls get advantage 0, leave the optimizer batch, and show in reward/nullFrac (§1.6)", async () => {
    const g = group(["4", "x!", "5", "4", "5"]);
    await scoreGroups(task, new Map([[example.id, example]]), [g]);
    const alg = resolveConfig({ model: { type: "checkpoint", path: "/x" }, task: { name: "addition" } }).algorithm;
    checkNulls([g], alg.nulls, task); // 1 of 5 is under maxNullFrac: no throw
    const res = assignAdvantages([g], buildAlgorithm(alg, { maxCompletionTokens: 8 }), 0, 1);
    expect(g.rollouts[1]!.advantage).toBe(0);
    expect(res.rollouts).toHaveLength(4);
    expect(res.rollouts.map((r) => r.advantage).reduce((a, b) => a + b, 0)).toBeCloseTo(0, 12);
    expect(rewardMetrics([g], task)["reward/nullFrac"]).toBeCloseTo(0.2);
    expect(res.metrics["reward/nullFrac"]).toBeCloseTo(0.2);
  });
  it("more nulls than maxNullFrac stops with an error naming the task and the checker", async () => {
    const g = group(["x!", "x!", "4"]);
    await scoreGroups(task, new Map([[example.id, example]]), [g]);
    const alg = resolveConfig({ model: { type: "checkpoint", path: "/x" }, task: { name: "addition" } }).algorithm;
    expect(() => checkNulls([g], alg.nulls, task)).toThrow(
      /2 of 3 completions are unscorable.*flaky.*exact.*checker exploded/,
    );
    expect(() => checkNulls([g], { ...alg.nulls, maxNullFrac: 1 }, task)).not.toThrow();
    expect(() => checkNulls([g], { onNull: "error", maxNullFrac: 1 }, task)).toThrow(
      /unscorable.*flaky.*checker exploded.*onNull is "error"/,
    );
  });
});
