/** Format tags (spec §2), cosine length (§3.1) and soft overlong punishment (§3.2): tables and adversarial cases. */
import { describe, expect, it } from "vitest";
import { formatOptions, formatScore } from "../../src/rewards/format.js";
import {
  cosineOptions,
  cosineScaled,
  overlongOptions,
  overlongPenalty,
  rewards,
} from "../../src/rewards/text-rewards.js";

const fmt = (text: string, o: object = {}): number => formatScore(text, formatOptions.parse(o));

describe("format-tags (§2.2)", () => {
  it.each([
    ["<think>a</think><answer>b</answer>", 1, "minimal valid"],
    ["  <think>\na\n</think>\n\n<answer>\nb\n</answer>\n", 1, "whitespace around blocks allowed"],
    ["<answer>b</answer><think>a</think>", 0, "order matters"],
    ["<think>a</think>", 0, "missing answer"],
    ["Sure! <think>a</think><answer>b</answer>", 0, "text before the first block"],
    ["<think>a</think> so <answer>b</answer>", 0, "text between blocks"],
  ] as [string, number, string][])("%j → %d (%s)", (text, expected) => expect(fmt(text)).toBe(expected));

  it("thinkOpenedInPrompt prepends <think> before checking", () => {
    expect(fmt("a\n</think>\n<answer>b</answer>", { thinkOpenedInPrompt: true })).toBe(1);
    expect(fmt("a\n</think>\n<answer>b</answer>")).toBe(0);
  });
  it("closingTags rule: every closing tag present (SAKE paper)", () => {
    expect(fmt("junk</think> more </answer>", { rule: "closingTags" })).toBe(1);
    expect(fmt("junk</think>", { rule: "closingTags" })).toBe(0);
  });
  it.each([
    ["openRs", "a\n</think>\nanswer", 1, "one \\n</think>\\n"],
    ["openRsTagCount", "<think>\na\n</think>\nb", 1, "0.5 + 0.5"],
    ["openRsTagCount", "<think>\na</think>b", 0.5, "only the open tag counts"],
    ["openR1", "<think>\na\n</think>\n<answer>\nb\n</answer>", 1, "strict newline layout"],
    ["openR1", "<think>a</think><answer>b</answer>", 0, "no newlines"],
    ["visualRft", "<think>a</think> <answer>b</answer>", 1, "lazy full match"],
    [
      "visualRft",
      "<think>a</think><answer>1</answer> x <answer>2</answer>",
      1,
      "reference passes two answers (why ours is exact-once)",
    ],
    ["videoChatR1", "  <think>a</think><answer>b</answer>  ", 1, "stripped first"],
    ["robotxR1", "<reasoning>a</reasoning><answer>b", 0.5, "tags averaged"],
    ["exgrpo", "<think>\na\n</think> b", 1, "starts with think block"],
  ] as [string, string, number, string][])("preset %s on %j → %d (%s)", (preset, text, expected) =>
    expect(fmt(text, { preset })).toBe(expected),
  );

  describe("adversarial (§2.3)", () => {
    it("1. two answer blocks", () => expect(fmt("<think>a</think><answer>1</answer><answer>2</answer>")).toBe(0));
    it("2. answer nested in think", () =>
      expect(fmt("<think> x <answer>x</answer> </think><answer>y</answer>")).toBe(0));
    it("3. empty content", () => expect(fmt("<think></think><answer> </answer>")).toBe(0));
    it("4. wrong case, attributes, spaces", () => {
      for (const t of [
        "<think>a</think><Answer>b</Answer>",
        "<think>a</think><answer id=1>b</answer>",
        "<think>a</think>< answer>b</answer>",
      ])
        expect(fmt(t)).toBe(0);
    });
    it("5. free text after </answer>", () => expect(fmt("<think>a</think><answer>b</answer> trailing")).toBe(0));
    it("6. prompt opened <think> and the completion opens it again", () =>
      expect(fmt("<think>a</think><answer>b</answer>", { thinkOpenedInPrompt: true })).toBe(0));
    it("unclosed tags", () => expect(fmt("<think>a<answer>b")).toBe(0));
  });
});

describe("cosine-length (§3.1)", () => {
  const o = cosineOptions.parse({});
  it.each([
    [0, true, 1.0],
    [500, true, 0.75],
    [1000, true, 0.5],
    [2000, true, 0.5],
    [0, false, -1.0],
    [500, false, -0.75],
    [1000, false, -0.5],
    [2000, false, -0.5],
  ] as const)("L=%d correct=%s → %d (spec worked values, maxLen 1000)", (L, correct, expected) => {
    expect(cosineScaled(L, correct, o)).toBeCloseTo(expected, 12);
  });
  it("openRs values: wrong at 0 → 0.0, at maxLen → -0.5, and the unclamped cosine wraps at 2×maxLen", () => {
    const r = { ...o, minWrong: 0, clampProgress: false };
    expect(cosineScaled(0, false, r)).toBeCloseTo(0, 12);
    expect(cosineScaled(1000, false, r)).toBeCloseTo(-0.5, 12);
    expect(cosineScaled(2000, true, r)).toBeCloseTo(1, 12);
  });
  it("scores through the registry with sampler tokens; unparseable gold → null; missing tokens → null", async () => {
    const good = await rewards.score("cosine-length", {
      completion: "</think>\\boxed{4}",
      gold: "4",
      tokens: new Array(500).fill(1),
    });
    expect(good.score).toBeCloseTo(0.75, 12);
    expect(
      (await rewards.score("cosine-length", { completion: "\\boxed{4}", gold: "\\bad{", tokens: [1] })).score,
    ).toBeNull();
    expect((await rewards.score("cosine-length", { completion: "\\boxed{4}", gold: "4" })).score).toBeNull();
    const chars = await rewards.score("cosine-length", { completion: "\\boxed{4}", gold: "4" }, { preset: "openRs" });
    expect(chars.info?.length).toBe(9);
  });
  describe("adversarial (§3.3)", () => {
    it("1. an empty completion is wrong at p = 0 → -1", async () => {
      expect((await rewards.score("cosine-length", { completion: "", gold: "4", tokens: [] })).score).toBe(-1);
    });
    it("2. a completion 2×maxLen long is clamped, not wrapped", () =>
      expect(cosineScaled(2000, false, o)).toBeCloseTo(-0.5, 12));
    it("3. length is the sampler's token count, not re-tokenised text", async () => {
      const r = await rewards.score("cosine-length", {
        completion: "\\boxed{4}",
        gold: "4",
        tokens: new Array(1000).fill(0),
      });
      expect(r.score).toBeCloseTo(0.5, 12);
    });
    it("4. padding a correct answer only lowers the value", () => {
      expect(cosineScaled(900, true, o)).toBeLessThan(cosineScaled(100, true, o));
    });
  });
});

describe("overlong (§3.2)", () => {
  const o = overlongOptions.parse({ maxLen: 4096, cache: 512 });
  it.each([
    [3584, 0],
    [3840, -0.5],
    [4096, -1],
    [5000, -1],
    [100, 0],
  ] as const)("L=%d → %d (spec example)", (L, v) => {
    expect(overlongPenalty(L, o)).toBeCloseTo(v, 12);
  });
  it("cache 0 is a hard cut-off; factor scales; cache > maxLen is a config error", () => {
    const hard = overlongOptions.parse({ maxLen: 10, cache: 0 });
    expect(overlongPenalty(10, hard)).toBe(0);
    expect(overlongPenalty(11, hard)).toBe(-1);
    expect(overlongPenalty(3840, { ...o, factor: 2 })).toBeCloseTo(-1, 12);
    expect(() => overlongOptions.parse({ maxLen: 10, cache: 20 })).toThrow(/cache/);
  });
  it("needs token ids (null without them)", async () => {
    expect((await rewards.score("overlong", { completion: "x", gold: null })).score).toBeNull();
    expect((await rewards.score("overlong", { completion: "x", gold: null, tokens: [1, 2] })).score).toBe(0);
  });
  it("adversarial: text crafted to look short does not change the sampler count", async () => {
    const r = await rewards.score(
      "overlong",
      { completion: "", gold: null, tokens: new Array(5000).fill(0) },
      { maxLen: 4096, cache: 512 },
    );
    expect(r.score).toBe(-1);
  });
});

describe("format-tags wd1 preset (xiaohangt/wd1 reward_func.py)", () => {
  const good = "<reasoning>\nthink\n</reasoning>\n<answer>\n4\n</answer>\n";
  it.each([
    [good, 1.0, "strict 0.5 + xmlcount 4 × 0.125; soft fails because Python '.' does not cross the newlines"],
    [
      "<reasoning>\nmulti\nline\n</reasoning>\n<answer>\n4\n</answer>\n",
      0.5,
      "Python '.' does not cross newlines: strict and soft both fail, xmlcount 0.5",
    ],
    [`${good}xx`, 0.5 - 0.002 - 0.002, "trailing text: strict fails, 0.001 per char in both count terms"],
    ["<reasoning>r</reasoning> <answer>4</answer>", 0.5, "soft only"],
  ] as [string, number, string][])("%j → %d (%s)", (text, v) =>
    expect(fmt(text, { preset: "wd1" })).toBeCloseTo(v, 12),
  );
});
