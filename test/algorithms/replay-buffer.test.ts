/** ExGRPO replay buffer (spec §6): collect, retire, buckets, delayed start, selection, state round trip. */
import { describe, expect, it } from "vitest";
import {
  ReplayBuffer,
  MissingBehaviorLogprobsError,
  bucketOf,
  type ReplayRollout,
} from "../../src/algorithms/replay-buffer.js";
import { Rng } from "../../src/util/rng.js";

let n = 0;
const ro = (len = 3, over: Partial<ReplayRollout> = {}): ReplayRollout => ({
  id: `r${n++}`,
  completionIds: Array.from({ length: len }, (_, i) => i),
  behaviorLogprobs: Array.from({ length: len }, () => -1),
  policyVersion: 1,
  step: 1,
  terms: {},
  ...over,
});
const group = (correct: boolean[]) => correct.map((c) => ({ rollout: ro(), correct: c }));

describe("ReplayBuffer", () => {
  it("stores correct rollouts, keeps the newest maxPerQuestion, and retires solved questions", () => {
    const b = new ReplayBuffer({ maxPerQuestion: 2 });
    b.collect("q1", group([true, false, true, true]));
    expect(b.state().entries[0]![1].rollouts).toHaveLength(2);
    expect(b.metrics()["replay/bufferQuestions"]).toBe(1);
    b.collect("q1", group([true, true, true, true]));
    expect(b.isRetired("q1")).toBe(true);
    expect(b.metrics()).toMatchObject({ "replay/bufferQuestions": 0, "replay/retired": 1 });
    b.collect("q1", group([true, false])); // retired questions are never stored again
    expect(b.metrics()["replay/bufferQuestions"]).toBe(0);
    b.collect("q2", group([false, false]));
    expect(b.metrics()["replay/bufferQuestions"]).toBe(0); // nothing correct to store
  });
  it("buckets by the latest accuracy", () => {
    expect([0, 0.25, 0.26, 0.75, 0.8].map(bucketOf)).toEqual(["hard", "hard", "medium", "medium", "easy"]);
    const b = new ReplayBuffer();
    b.collect("a", group([true, false, false, false]));
    b.collect("b", group([true, true, false, false]));
    b.collect("c", group([true, true, true, true, false])); // 0.8: easy (0.75 is medium)
    b.collect("a", group([false, false, false, false])); // acc 0 but still holds successes: hard
    expect(b.metrics()).toMatchObject({ "replay/bucketHard": 1, "replay/bucketMedium": 1, "replay/bucketEasy": 1 });
  });
  it("rejects missing or mismatched behaviour log-probs, naming the rollout and version", () => {
    const b = new ReplayBuffer();
    const wrong = { rollout: ro(), correct: false };
    expect(() =>
      b.collect("q", [{ rollout: ro(3, { id: "x", behaviorLogprobs: [-1], policyVersion: 7 }), correct: true }, wrong]),
    ).toThrow(MissingBehaviorLogprobsError);
    expect(() =>
      b.collect("q", [{ rollout: ro(3, { id: "x", behaviorLogprobs: undefined as never }), correct: true }, wrong]),
    ).toThrow(/rollout x .*missing/);
  });
  it("starts only after a pass rate above 0.35, then stays on", () => {
    const b = new ReplayBuffer();
    b.collect("q", group([true, false]));
    expect(b.select(8, new Rng(1), () => 0)).toEqual([]);
    b.observePassRate(0.35);
    expect(b.isStarted).toBe(false);
    b.observePassRate(0.36);
    b.observePassRate(0.1);
    expect(b.isStarted).toBe(true);
    expect(b.select(8, new Rng(1), () => 0)).toHaveLength(1);
  });
  it("selects floor(ρQ) distinct questions and the lowest-entropy rollout (ties: newest)", () => {
    const b = new ReplayBuffer();
    for (let q = 0; q < 10; q++) b.collect(`q${q}`, group([true, true, false, false]));
    b.observePassRate(0.5);
    const picks = b.select(8, new Rng(3), (r) => (r.id.endsWith("0") ? 0.1 : 1));
    expect(picks).toHaveLength(4);
    expect(new Set(picks.map((p) => p.question)).size).toBe(4);
    const e = b.state().entries.find(([q]) => q === picks[0]!.question)![1];
    const expected = e.rollouts.some((r) => r.id.endsWith("0"))
      ? e.rollouts.find((r) => r.id.endsWith("0"))
      : e.rollouts[e.rollouts.length - 1];
    expect(picks[0]!.rollout).toBe(expected);
  });
  it("Gaussian weighting favours medium questions (σ small makes it sharp)", () => {
    const b = new ReplayBuffer({ sigma: 0.1, ratio: 1 / 8 });
    b.collect("easy", group([true, true, true, false]));
    b.collect("medium", group([true, true, false, false]));
    b.observePassRate(1);
    let medium = 0;
    for (let s = 0; s < 200; s++) if (b.select(8, new Rng(s), () => 0)[0]!.question === "medium") medium++;
    expect(medium).toBeGreaterThan(180); // weights 1 vs exp(-0.0625/0.02) = 0.044
  });
  it("state round-trips", () => {
    const b = new ReplayBuffer();
    b.collect("q", group([true, false]));
    b.collect("r", group([true]));
    b.observePassRate(0.9);
    const c = ReplayBuffer.fromState(JSON.parse(JSON.stringify(b.state())));
    expect(c.state()).toEqual(b.state());
    expect(c.isStarted).toBe(true);
  });
  it("selection by hand: Gaussian weights exp(−(acc − 0.5)²/2) and the lowest mean entropy, ties to the newest", () => {
    // acc 0.25 and 0.5 with σ = 1: weights 0.969233 and 1, so the medium question comes first with p = 0.507811
    const b = new ReplayBuffer({ ratio: 1 / 8 });
    b.collect("quarter", group([true, false, false, false]));
    b.collect("half", group([true, true, false, false]));
    b.observePassRate(0.5);
    const draws = 4000;
    let half = 0;
    for (let s = 0; s < draws; s++) if (b.select(8, new Rng(s), () => 0)[0]!.question === "half") half++;
    expect(Math.abs(half / draws - 1 / (1 + Math.exp(-0.0625 / 2)))).toBeLessThan(0.03); // 0.507811, sd 0.008
    // stored answers of "half" in order: entropies 0.7, 0.2, 0.2 (newest) → the newest 0.2 wins the tie
    const c = new ReplayBuffer({ ratio: 1 / 8 });
    const [a1, a2, a3] = [ro(), ro(), ro()];
    c.collect("q", [a1, a2].map((rollout) => ({ rollout, correct: true })).concat([{ rollout: ro(), correct: false }]));
    c.collect("q", [
      { rollout: a3, correct: true },
      { rollout: ro(), correct: false },
    ]);
    c.observePassRate(0.5);
    const H = new Map([
      [a1, 0.7],
      [a2, 0.2],
      [a3, 0.2],
    ]);
    expect(c.select(8, new Rng(0), (r) => H.get(r)!)[0]!.rollout).toBe(a3);
    H.set(a3, 0.21);
    expect(c.select(8, new Rng(0), (r) => H.get(r)!)[0]!.rollout).toBe(a2);
  });
  it("records the step that started replay, and keeps it through state()", () => {
    const b = new ReplayBuffer();
    b.observePassRate(0.3, 1);
    b.observePassRate(0.4, 2);
    b.observePassRate(0.9, 3);
    expect(b.startedAfterStep).toBe(2);
    expect(ReplayBuffer.fromState(b.state()).startedAfterStep).toBe(2);
  });
  it("a saved state whose stored answer lacks behaviour log-probs fails to load, naming question and rollout", () => {
    const b = new ReplayBuffer();
    b.collect("q7", group([true, false]));
    const state = JSON.parse(JSON.stringify(b.state()));
    state.entries[0][1].rollouts[0].behaviorLogprobs = [-1, -1];
    expect(() => ReplayBuffer.fromState(state)).toThrow(MissingBehaviorLogprobsError);
    expect(() => ReplayBuffer.fromState(state)).toThrow(
      /question q7\) rollouts\[0\]: rollout r\d+ .*length 2, tokens 3/,
    );
    delete state.entries[0][1].rollouts[0].behaviorLogprobs;
    expect(() => ReplayBuffer.fromState(state)).toThrow(/behaviorLogprobs\) are missing/);
  });
});
