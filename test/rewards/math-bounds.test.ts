/**
 * Issue 11, the maths checker: bounded work (sandbox-suite item 4), percent signs, and fast-check properties of the
 * relation rule. Work is asserted through the meter the evaluator exposes (`info.work`, units of budget.ts), never by
 * timing: a hostile answer must end with a defined rule and within a work figure that a regression would exceed.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { checkMath } from "../../src/rewards/math/index.js";
import { rat } from "../../src/rewards/math/ast.js";
import { MATH_WORK_LIMIT } from "../../src/rewards/math/budget.js";
import { rewards } from "../../src/rewards/text-rewards.js";

const box = (s: string): string => `<think>\nworking\n</think>\nThe final answer is $\\boxed{${s}}$.`;
const work = (info: Record<string, unknown> | undefined): number => (info?.work as number | undefined) ?? 0;

/** An 8×8 matrix of 700-bit powers (`b^{e}` with b < 100, e ≈ 100). */
const entry = (i: number, j: number): string => `${((i * 7 + j * 13) % 97) + 2}^{${90 + i + j}}`;
const rows8 = Array.from({ length: 8 }, (_, i) => Array.from({ length: 8 }, (_, j) => entry(i, j)).join("&"));
const DET8 = `\\det\\begin{pmatrix}${rows8.join("\\\\")}\\end{pmatrix}`;

// [prediction, rule that must decide, most work units it may take, quirk]
const HOSTILE: [string, string, number, string][] = [
  ["\\binom{10^{12}}{5\\cdot 10^{11}}", "non-finite", 5_000, "the suite's hang: C(n,k) ≥ 2^k, so +∞ without a loop"],
  ["\\binom{10^{400}}{10^{399}}", "non-finite", 5_000, "binomial of 400-digit numbers"],
  ["\\binom{100000}{50000}", "non-finite", 5_000, "exact cap (k ≤ 2,000), float shortcut"],
  ["\\binom{10^{12}}{5\\cdot 10^{11}} - \\binom{10^{12}}{5\\cdot 10^{11}}", "non-finite", 10_000, "∞ − ∞ is not 0"],
  ["(10^{400})!", "non-finite", 5_000, "factorial of a 400-digit number"],
  ["1001!", "non-finite", 5_000, "just past the exact factorial cap"],
  ["((5!)!)!", "non-finite", 50_000, "factorial tower: 120! exact, then +∞"],
  ["(10^{6})! / (10^{6}-1)!", "non-finite", 5_000, "no symbolic cancellation: ∞/∞"],
  ["9^{9^{9^9}}", "non-finite", 5_000, "power tower"],
  ["2^{2^{2^{2^{2}}}}", "non-finite", 5_000, "power tower of twos"],
  ["10^{10^{10}}", "non-finite", 5_000, "a googol-sized power"],
  ["(2^{10000})^{10000}", "non-finite", 5_000, "power of a power past the digit budget"],
  ["2^{10000}\\cdot 2^{10000}\\cdot 2^{10000}", "non-finite", 5_000, "products past the digit budget"],
  ["1000!", "exact", 2_000_000, "the largest exact factorial, inside the budget"],
  [
    "\\binom{99999}{2000}\\binom{99999}{1999}\\binom{99998}{2000}\\binom{99997}{2000}",
    "work-limit",
    Infinity,
    "four big exact binomials",
  ],
  [DET8, "work-limit", Infinity, "8×8 determinant of 700-bit entries"],
  [
    "\\int_0^1\\int_0^1\\int_0^1\\int_0^1 \\sin(x y z w)\\, dx\\, dy\\, dz\\, dw",
    "work-limit",
    Infinity,
    "nested quadrature",
  ],
  ["\\int_0^1 \\sin(1/x)\\, dx", "non-finite", 2_000_000, "quadrature that does not converge: panel cap"],
  ["\\lim_{x\\to 0}\\lim_{y\\to 0} \\frac{\\sin(x+y)}{x+y}", "non-finite", 2_000_000, "nested limits: too noisy, NaN"],
];

describe("hostile evaluations end with a defined rule after bounded work (no timer)", () => {
  // `unsimplified: "always"` makes every form evaluate (by default only lenient mode evaluates calculus).
  const evaluate = { unsimplified: "always" } as const;
  it.each(HOSTILE)("%s → %s within %d units (%s)", (pred, rule, most) => {
    const r = checkMath("1", box(pred), evaluate);
    expect(r.correct).toBe(false);
    expect(r.info.rule).toBe(rule);
    expect(work(r.info)).toBeLessThanOrEqual(most);
    // Spending is charged before each step, so at most one step is taken past the limit.
    if (rule !== "work-limit") expect(work(r.info)).toBeLessThanOrEqual(MATH_WORK_LIMIT);
    expect(checkMath("1", box(pred), evaluate).info.work).toBe(r.info.work); // deterministic: the same path each time
  });

  it("math-answer and cosine-length score every hostile form (0 or a finite cosine), never hang", async () => {
    for (const [pred] of HOSTILE) {
      const m = await rewards.score("math-answer", { completion: box(pred), gold: "1" });
      expect(m.score).toBe(0);
      const c = await rewards.score("cosine-length", { completion: box(pred), gold: "1", tokens: [1, 2, 3] });
      expect(Number.isFinite(c.score)).toBe(true);
      expect(c.info?.correct).toBe(false);
    }
  });

  it("a hostile gold is bounded too, and still matches itself structurally", () => {
    for (const [gold] of HOSTILE.slice(0, 13)) {
      expect(checkMath(gold, box(gold)).correct).toBe(true);
      const r = checkMath(gold, box("7"));
      expect(r.correct).toBe(false);
      expect(work(r.info)).toBeLessThanOrEqual(MATH_WORK_LIMIT);
    }
  });

  it("random power towers, factorials and binomials of big literals stay within the budget (fast-check)", () => {
    const literal = fc.integer({ min: 2, max: 999 }).map(String);
    const big = fc.oneof(
      literal,
      fc.integer({ min: 2, max: 400 }).map((e) => `10^{${e}}`),
    );
    const expr: fc.Arbitrary<string> = fc.letrec<{ e: string }>((tie) => ({
      e: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        big,
        fc.tuple(tie("e"), tie("e")).map(([a, b]) => `{${a}}^{${b}}`),
        tie("e").map((a) => `(${a})!`),
        fc.tuple(tie("e"), tie("e")).map(([a, b]) => `\\binom{${a}}{${b}}`),
        fc.tuple(tie("e"), tie("e")).map(([a, b]) => `${a}\\cdot ${b}`),
      ),
    })).e;
    fc.assert(
      fc.property(expr, (e) => {
        const r = checkMath("1", box(e));
        expect(typeof r.info.rule === "string" || typeof r.info.reason === "string").toBe(true);
        if (r.info.rule !== "work-limit") expect(work(r.info)).toBeLessThanOrEqual(MATH_WORK_LIMIT);
      }),
      { numRuns: 150, seed: 11 },
    );
  });
});

describe("the meter counts the work it bounds", () => {
  it("an exact binomial's work grows with its loop length (10 < 100 < 1,000 < 2,000 steps)", () => {
    const units = [10, 100, 1_000, 2_000].map((k) => work(checkMath("1", box(`\\binom{99999}{${k}}`)).info));
    for (let i = 1; i < units.length; i++) expect(units[i]!).toBeGreaterThan(units[i - 1]!);
    expect(units[3]! / units[1]!).toBeGreaterThan(20); // at least linear in steps, and steps grow 20×
  });
  it("exact rationals normalise like Euclid on BigInt at every size (the gcd finishes on doubles)", () => {
    const euclid = (a: bigint, b: bigint): bigint => {
      a = a < 0n ? -a : a;
      b = b < 0n ? -b : b;
      while (b !== 0n) [a, b] = [b, a % b];
      return a;
    };
    const big = fc.bigInt({ min: -(2n ** 200n), max: 2n ** 200n });
    fc.assert(
      fc.property(big, big, fc.bigInt({ min: 1n, max: 2n ** 80n }), (a, b, g) => {
        fc.pre(b !== 0n);
        const r = rat(a * g, b * g);
        const e = euclid(a, b);
        const sign = b < 0n ? -1n : 1n;
        expect(r).toEqual({ n: (sign * a) / e, d: (sign * b) / e });
      }),
      { numRuns: 300, seed: 14 },
    );
  });
});

// [gold, prediction, expected, quirk]: two signs compare as written; one sign gives the value and the D-M5 reading.
const PERCENT: [string, string, boolean, string][] = [
  ["20\\%", "0.2", true, "value reading: 20% is 0.2"],
  ["0.2", "20\\%", true, "value reading, the other direction"],
  ["20\\%", "0.2\\%", false, "the suite's false pay: two signs are compared as written"],
  ["0.2\\%", "20\\%", false, "two signs, the other direction"],
  ["20\\%", "20", true, "D-M5: the prediction dropped the sign of a 'what percent' answer"],
  ["20", "20\\%", true, "D-M5: the gold label dropped the sign"],
  ["20", "0.2\\%", false, "neither reading of 0.2% is 20"],
  ["20\\%", "2000", false, "a sign is never invented on the prediction"],
  ["20\\%", "\\frac{1}{5}", true, "value reading with a fraction"],
  ["20\\%", "20 \\text{ percent}", true, "the word in \\text{} is the sign"],
  ["0.2", "20 \\text{ percent}", true, "the word in \\text{}, value reading"],
  ["(20\\%, 50\\%)", "(0.2, 50\\%)", true, "percent rules apply per tuple element"],
  ["(20\\%, 50\\%)", "(0.2\\%, 50\\%)", false, "two signs inside a tuple, as written"],
];

describe("percent signs (D-M5 as amended by issue 11)", () => {
  it.each(PERCENT)("gold %s vs %s → %s (%s)", (gold, pred, expected) => {
    expect(checkMath(gold, box(pred)).correct).toBe(expected);
  });
  it("for p ≠ q, p% never equals q%; p% always equals p/100 in both directions (fast-check)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 99_999 }), fc.integer({ min: 1, max: 99_999 }), (a, b) => {
        const p = (a / 100).toString();
        const q = (b / 100).toString();
        const hundredth = (a / 10_000).toString();
        if (a !== b) expect(checkMath(`${p}\\%`, box(`${q}\\%`)).correct).toBe(false);
        expect(checkMath(`${p}\\%`, box(hundredth)).correct).toBe(true);
        expect(checkMath(hundredth, box(`${p}\\%`)).correct).toBe(true);
        expect(checkMath(`${p}\\%`, box(`${hundredth}\\%`)).correct).toBe(false);
      }),
      { numRuns: 200, seed: 12 },
    );
  });
});

describe("relations in a box (fast-check)", () => {
  it("for a ≠ b, a relation between constants or a false chain never scores against gold b", () => {
    const int = fc.integer({ min: -10_000, max: 10_000 });
    fc.assert(
      fc.property(int, int, (a, b) => {
        fc.pre(a !== b);
        const preds = [`${a} = ${b}`, `x = ${a} = ${b}`, `${a} + ${b - a} = ${b}`, `${b} = ${b}`, `0x + ${a} = ${b}`];
        for (const pred of preds) {
          expect(checkMath(String(b), box(pred)).correct, pred).toBe(false);
        }
        expect(checkMath(String(b), box(`x = ${b}`)).correct).toBe(true);
        expect(checkMath(String(b), box(`y = ${a} + ${b - a}`)).correct).toBe(true);
      }),
      { numRuns: 200, seed: 13 },
    );
  });
});
