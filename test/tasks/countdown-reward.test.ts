/** countdown-expression: the safe parser, the number rule, the answer block, and adversarial outputs. */
import { describe, expect, it } from "vitest";
import {
  parseExpression,
  scoreCountdown,
  countdownOptions,
  solveCountdown,
  usesNumbers,
} from "../../src/rewards/countdown.js";
import { rewards } from "../../src/rewards/registry.js";
import { boxedSpans } from "../../src/rewards/boxed-format.js";

const o = countdownOptions.parse({});
const gold = { numbers: [3, 5, 2], target: 16 };
const score = (c: string, opts = o) => scoreCountdown(c, gold, opts).score;

describe("parseExpression", () => {
  it.each([
    ["1+2*3", 7], // precedence
    ["(1+2)*3", 9],
    ["8-4-2", 2], // left associative
    ["8/4/2", 1],
    ["8-(4-2)", 6],
    [" 3 * ( 5 + 2 ) ", 21],
    ["1.5*2", 3],
  ])("%s = %d", (text, value) => expect(parseExpression(text).value).toBeCloseTo(value, 12));

  it("records literals in order", () => expect(parseExpression("(3+5)*2").literals).toEqual([3, 5, 2]));
  it("division by zero gives a non-finite value, not a throw", () =>
    expect(Number.isFinite(parseExpression("1/0").value)).toBe(false));
  it.each(["", "-3+5", "3**2", "3^2", "2(3)", "(3+5", "3+5)", "3+", "abc", "3,5", "Math.max(3,5)", "1..2", "3 4"])(
    "rejects %j",
    (text) => expect(() => parseExpression(text)).toThrow(),
  );
  it("bounds nesting and length", () => {
    expect(() => parseExpression("(".repeat(60) + "1" + ")".repeat(60))).toThrow(/nesting/);
    expect(() => parseExpression("1+".repeat(150) + "1")).toThrow(/longer/);
  });
});

describe("usesNumbers", () => {
  it("multiset rules", () => {
    expect(usesNumbers([3, 5, 2], [3, 5, 2], true)).toBeNull();
    expect(usesNumbers([3, 5], [3, 5, 2], true)).toMatch(/does not use 2/);
    expect(usesNumbers([3, 5], [3, 5, 2], false)).toBeNull();
    expect(usesNumbers([3, 3, 5, 2], [3, 5, 2], false)).toMatch(/more often/);
    expect(usesNumbers([4], [3, 5, 2], false)).toMatch(/not given/);
    expect(usesNumbers([5, 5], [5, 5, 2], false)).toBeNull(); // repeated given numbers may each be used
  });
});

describe("scoreCountdown", () => {
  it("correct, in any order and bracketing", () => {
    expect(score("<answer>(3+5)*2</answer>")).toBe(1);
    expect(score("<answer> 2*(5+3) </answer>")).toBe(1);
    expect(score("I think.\n<answer>(5+3)*2</answer>")).toBe(1);
  });
  it("valid expression, wrong value: format credit 0.1 in the partial term", () => {
    const r = scoreCountdown("<answer>3+5+2</answer>", gold, o);
    expect(r.score).toBeCloseTo(0.1, 12);
    expect(r.terms).toEqual({ correct: 0, partial: 0.1 });
  });
  it("formatCredit 0 makes it binary", () =>
    expect(score("<answer>3+5+2</answer>", { ...o, formatCredit: 0 })).toBe(0));
  it('region "all" reads the whole completion', () => expect(score("(3+5)*2", { ...o, region: "all" })).toBe(1));
  it('region "boxed" reads the single box', () => {
    const b = { ...o, region: "boxed" as const };
    expect(score("\\boxed{(3+5)*2}", b)).toBe(1);
    expect(score("\\boxed{3+5+2}", b)).toBeCloseTo(0.1, 12);
    expect(score("\\boxed{3+5+2}\\boxed{(3+5)*2}", b)).toBe(0); // hedging
    expect(score("\\boxed{(3+5)*2", b)).toBe(0); // unclosed
    expect(score("(3+5)*2", b)).toBe(0);
  });
  it("useAll false allows a subset", () => {
    expect(scoreCountdown("<answer>3+5</answer>", { numbers: [3, 5, 2], target: 8 }, o).score).toBe(0);
    expect(
      scoreCountdown("<answer>3+5</answer>", { numbers: [3, 5, 2], target: 8 }, { ...o, useAll: false }).score,
    ).toBe(1);
  });
  it("bad gold is unscorable (null), never 0 or 1", () => {
    expect(scoreCountdown("<answer>1</answer>", { numbers: [], target: 1 }, o).score).toBeNull();
    expect(scoreCountdown("<answer>1</answer>", { numbers: [1], target: NaN }, o).score).toBeNull();
    expect(scoreCountdown("<answer>1</answer>", null as never, o).score).toBeNull();
  });

  // Adversarial: each must earn nothing.
  it.each([
    ["no answer block", "(3+5)*2"],
    ["two answer blocks (hedging)", "<answer>3+5+2</answer><answer>(3+5)*2</answer>"],
    ["the target itself", "<answer>16</answer>"],
    ["a number used twice", "<answer>(3+5)*2+0*2</answer>"],
    ["a number not given", "<answer>8*2+3-5+2-2</answer>"],
    ["digits glued by a space", "<answer>1 6+3-5+2-2</answer>"],
    ["unary minus", "<answer>-(3-5)*... </answer>"],
    ["code", "<answer>eval('16')</answer>"],
    ["exponent", "<answer>2**4</answer>"],
    ["prose around the expression", "<answer>it is (3+5)*2</answer>"],
    ["empty", "<answer></answer>"],
    ["close before open", "</answer>(3+5)*2<answer>"],
    ["division by zero with all numbers", "<answer>(3+5)/(2-2)</answer>"],
  ])("%s scores 0", (_why, completion) => expect(score(completion)).toBe(0));

  it("division by zero that uses the numbers correctly counts as a wrong value", () => {
    expect(scoreCountdown("<answer>3/(5-5)+2</answer>", { numbers: [3, 5, 5, 2], target: 1 }, o).score).toBeCloseTo(
      0.1,
      12,
    );
  });
});

describe("registry entry", () => {
  it("is registered, and its gold completion earns full score", async () => {
    const spec = rewards.get("countdown-expression");
    const g = spec.exampleGold as typeof gold;
    const r = await rewards.score("countdown-expression", { completion: spec.goldCompletion!(g, o), gold: g });
    expect(r.score).toBe(spec.maxScore);
  });
  it("rejects unknown options naming the field", async () => {
    await expect(rewards.score("countdown-expression", { completion: "", gold }, { useall: true })).rejects.toThrow(
      /useall/,
    );
  });
  it("solveCountdown finds a solution or says none exists", () => {
    const e = solveCountdown([3, 5, 2], 16)!;
    expect(parseExpression(e).value).toBe(16);
    expect(solveCountdown([1, 1], 5)).toBeNull();
  });
});

describe("boxed-format", () => {
  it.each([
    ["\\boxed{357}", 1],
    ["  \\boxed{357}\n", 1], // surrounding whitespace is fine
    ["\\boxed{(3+5)*2}", 1],
    ["\\boxed{\\frac{1}{2}}", 1], // nested braces are matched
    ["\\boxed{}", 0],
    ["\\boxed{ }", 0],
    ["\\boxed{357", 0], // unclosed
    ["\\boxed{3}\\boxed{5}", 0],
    ["\\boxed{3} \\boxed{5", 0], // a second, unclosed box still counts as a second box
    ["x = \\boxed{357}", 0],
    ["\\boxed{357}.", 0],
    ["357", 0],
  ])("%j → %d", async (completion, want) => {
    expect((await rewards.score("boxed-format", { completion, gold: null })).score).toBe(want);
  });
  it.each([
    ["7+5=12 \\boxed{12}", 1], // working before the box
    ["\\boxed{12}", 1], // working is allowed, not required
    ["7+5=12 \\boxed{12} done", 0], // nothing may follow the box
    ["7+5=12 \\boxed{12}\\boxed{13}", 0],
    ["\\boxed{11} 7+5=12 \\boxed{12}", 0], // a box inside the working is a second box
    ["7+5=12 \\boxed{}", 0],
    ["7+5=12", 0],
  ])("with workBefore: %j → %d", async (completion, want) => {
    expect((await rewards.score("boxed-format", { completion, gold: null }, { workBefore: true })).score).toBe(want);
  });
  it("boxedSpans finds brace-matched boxes in order", () => {
    expect(boxedSpans("a \\boxed{1} b \\boxed{{2}} c \\boxed{3").map((s) => s.content)).toEqual(["1", "{2}"]);
  });
});
