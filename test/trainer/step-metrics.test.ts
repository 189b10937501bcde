/**
 * The per-step metrics and samples records that the dashboard reads (issue 19): lengths of correct and wrong
 * completions (hand-computed), and the segments of a multi-turn completion in samples.jsonl.
 */
import { describe, expect, it } from "vitest";
import { CharTokenizer } from "../../src/models/tokenizer.js";
import type { Rollout, RolloutGroup } from "../../src/rollout/types.js";
import { rewardMetrics, sampleRecords } from "../../src/trainer/step-metrics.js";

function rollout(len: number, reward: number | null, correct?: number, extra: Partial<Rollout> = {}): Rollout {
  return {
    id: "r",
    task: "t",
    exampleId: "e",
    groupId: "g",
    promptIds: [1, 2],
    completionIds: Array(len).fill(3),
    samplerLogprobs: Array(len).fill(0),
    lossMask: Array(len).fill(1),
    text: "x".repeat(len),
    finishReason: "stop",
    reward,
    terms: correct === undefined ? {} : { correct },
    advantage: 0,
    ...extra,
  } as Rollout;
}

const task = { terms: [{ name: "correct", weight: 1 }], correctTerm: "correct" } as never;
const group = (rollouts: Rollout[], id = "g"): RolloutGroup => ({ id, exampleId: "e", prompt: "p", rollouts });

describe("step metrics for the dashboard", () => {
  it("length/correctMean and length/wrongMean over the scored completions of every group", () => {
    const m = rewardMetrics(
      [
        group([rollout(4, 1, 1), rollout(10, 0, 0), rollout(7, null)], "a"), // the null one counts in neither
        group([rollout(6, 1, 1), rollout(2, 0.5, 0.5)], "b"), // partial credit is not correct
      ],
      task,
    );
    expect(m["length/correctMean"]).toBe(5); // (4 + 6) / 2
    expect(m["length/wrongMean"]).toBe(6); // (10 + 2) / 2
    expect(m["length/mean"]).toBeCloseTo(29 / 5, 12);
  });

  it("logs no value (not 0) for a kind with no completions in the step", () => {
    const m = rewardMetrics([group([rollout(3, 0, 0), rollout(5, 0, 0)])], task);
    expect(m["length/wrongMean"]).toBe(4);
    expect("length/correctMean" in m).toBe(false);
  });

  it("samples.jsonl records carry a multi-turn completion's segments, and none for a single turn", () => {
    const segments = [
      { kind: "model" as const, start: 0, end: 3, text: "<call>" },
      { kind: "inserted" as const, start: 3, end: 5, text: "[out]" },
      { kind: "model" as const, start: 5, end: 6, text: "y" },
    ];
    const recs = sampleRecords([group([rollout(6, 1, 1, { segments }), rollout(2, 0, 0)])], new CharTokenizer()) as {
      completions: { segments?: unknown }[];
    }[];
    expect(recs[0]!.completions[0]!.segments).toEqual([
      { kind: "model", text: "<call>" },
      { kind: "inserted", text: "[out]" },
      { kind: "model", text: "y" },
    ]);
    expect(recs[0]!.completions[1]!.segments).toBeUndefined();
  });
});
