/** The reward registry and weighted mixes: every registered reward gives its own gold completion full score. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  combineTerms,
  formatTagsReward,
  mathAnswerReward,
  mixRewards,
  RewardRegistry,
  rewards,
  textRewards,
} from "../../src/rewards/index.js";

describe("registry-wide gold test", () => {
  const specs = rewards.list();
  it("registers every text-checkable family", () => {
    for (const s of textRewards) expect(rewards.has(s.name)).toBe(true);
    expect(specs.length).toBeGreaterThanOrEqual(textRewards.length);
  });
  // Rewards that run code or a simulator have no one-string gold completion; their golds are scored in their own
  // suites (test/kernel/reward.test.ts, test/car/reward.test.ts). Pin the list so a new reward cannot slip out.
  const hasGold = (s: (typeof specs)[number]) => !!s.goldCompletion && s.exampleGold !== undefined && !s.modelJudged;
  it("only the code- and simulator-run rewards lack a gold completion", () => {
    expect(
      specs
        .filter((s) => !hasGold(s))
        .map((s) => s.name)
        .sort(),
    ).toEqual(["kernel-correct", "kernel-speed", "mpc-car-driving"]);
  });
  for (const spec of specs.filter(hasGold)) {
    it(`${spec.name}: its gold completion earns full score`, async () => {
      const options = spec.options.parse({});
      const completion = spec.goldCompletion!(spec.exampleGold, options);
      const result = await rewards.score(spec.name, { completion, gold: spec.exampleGold, tokens: [] });
      expect(result.score, JSON.stringify(result.info)).toBeCloseTo(spec.maxScore ?? 1, 9);
    });
  }
  it("every reward has a description and an options schema with defaults", () => {
    for (const spec of specs) {
      expect(spec.description.length).toBeGreaterThan(10);
      expect(() => spec.options.parse({})).not.toThrow();
    }
  });
});

describe("RewardRegistry", () => {
  it("rejects duplicate names and lists known names for unknown ones", () => {
    const reg = new RewardRegistry();
    reg.register(mathAnswerReward);
    expect(() => reg.register(mathAnswerReward)).toThrow(/already registered/);
    expect(() => reg.get("nope")).toThrow(/known: math-answer/);
  });
  it("a checker that throws yields null with the error, never an exception", async () => {
    const reg = new RewardRegistry();
    reg.register({
      name: "boom",
      description: "throws",
      options: z.object({}),
      score: () => {
        throw new Error("bad");
      },
    });
    expect(await reg.score("boom", { completion: "", gold: null })).toEqual({
      score: null,
      terms: {},
      info: { error: "bad" },
    });
  });
  it("invalid options are rejected by the schema", async () => {
    await expect(rewards.score("math-answer", { completion: "", gold: "1" }, { floatRounding: -1 })).rejects.toThrow();
  });
});

describe("weighted mixes (VideoChat-R1 style)", () => {
  const ok = { score: 1, terms: { correct: 1 } };
  const half = { score: 0.5, terms: { format: 0.5 } };
  it("combineTerms sums weighted parts and prefixes their terms", () => {
    const r = combineTerms([
      { name: "acc", weight: 2, result: ok },
      { name: "fmt", weight: 1, result: half },
    ]);
    expect(r.score).toBe(2.5);
    expect(r.terms).toEqual({ "acc.correct": 1, "fmt.format": 0.5, acc: 2, fmt: 0.5 });
  });
  it("a null part makes the mix null; gateOnFormat multiplies accuracy by format", () => {
    expect(
      combineTerms([
        { name: "acc", weight: 1, result: { score: null, terms: {} } },
        { name: "fmt", weight: 1, result: half },
      ]).score,
    ).toBeNull();
    expect(
      combineTerms(
        [
          { name: "acc", weight: 1, result: ok },
          { name: "fmt", weight: 0, result: { score: 0, terms: {} } },
        ],
        { gateOnFormat: "fmt" },
      ).score,
    ).toBe(0);
  });
  it("mixRewards builds a registrable reward from parts (Open-RS: accuracy + format)", async () => {
    const mix = mixRewards("math-with-format", "maths accuracy plus format", [
      { name: "accuracy", reward: mathAnswerReward, weight: 1 },
      { name: "format", reward: formatTagsReward, weight: 1 },
    ]);
    expect(mix.maxScore).toBe(2);
    const reg = new RewardRegistry();
    reg.register(mix);
    const r = await reg.score("math-with-format", {
      completion: "<think>x</think><answer>\\boxed{3}</answer>",
      gold: "3",
    });
    expect(r.score).toBe(2);
    const wrong = await reg.score("math-with-format", { completion: "<think>x</think> \\boxed{4}", gold: "3" });
    expect(wrong.score).toBe(0);
  });
});
