/** Maths final-answer checker: the spec §1.2 capability table, extraction rules, adversarial cases (§1.6). */
import { describe, expect, it } from "vitest";
import { checkMath, parseAnswer, verifyMath } from "../../src/rewards/math/index.js";
import { rewards } from "../../src/rewards/text-rewards.js";

const box = (s: string): string => `<think>\nworking\n</think>\nThe final answer is $\\boxed{${s}}$.`;

// [gold, prediction (boxed), expected, quirk pinned]
const TABLE: [string, string, boolean, string][] = [
  ["42", "42", true, "integers: exact"],
  ["42", "42.0", true, "integer vs decimal: decimal rule"],
  ["7425000", "7,425,000", true, "thousands separator: comma between groups of 3"],
  ["7425000", "7\\,425\\,000", true, "thousands separator: LaTeX thin space"],
  ["7425000", "7 425 000", true, "thousands separator: plain space"],
  ["0.5", ".5", true, "bare leading point"],
  ["0.5", "00.5", true, "leading zeros"],
  ["-3", "\u22123", true, "Unicode minus U+2212"],
  ["\\sqrt{2}", "\u221a2", true, "Unicode root"],
  ["1.5", "1,5", false, "decimal comma off by default (ambiguous with lists)"],
  ["\\frac{3}{4}", "3/4", true, "plain fraction"],
  ["\\frac{3}{4}", "\\dfrac34", true, "\\dfrac with single-digit arguments"],
  ["\\frac{3}{4}", "\\tfrac{3}{4}", true, "\\tfrac"],
  ["\\frac{3}{4}", "\\frac{6}{8}", true, "unreduced fraction: value equality"],
  ["\\frac{3}{4}", "0.75", true, "fraction vs decimal"],
  ["\\frac{5}{2}", "2\\frac{1}{2}", true, "mixed number: integer literal followed by \\frac of integers"],
  ["\\frac{1}{3}", "\\frac{333333}{1000000}", false, "two exact values get no tolerance"],
  ["\\frac{1}{3}", "0.333333", true, "decimal: both rounded to 6 places"],
  ["\\frac{1}{3}", "0.3333333", true, "more places still round to the same"],
  ["\\frac{2}{3}", "0.666667", true, "rounding, not truncation (accept)"],
  ["\\frac{2}{3}", "0.666666", false, "rounding, not truncation (reject)"],
  ["\\frac{1}{3}", "0.33333", false, "five places is not enough"],
  ["\\pi", "3.141593", true, "closed form evaluated before rounding"],
  ["\\pi", "3.1416", false, "4 places of pi is wrong at 6-place rounding"],
  ["2.5\\times10^{-9}", "0.0", false, "D-M6: tiny gold compared to 6 significant figures, 0 fails"],
  ["2.5\\times10^{-9}", "3\\times10^{-9}", false, "D-M6: tiny values keep their digits"],
  ["2.5\\times10^{-9}", "2.5e-9", true, "D-M6: same value in e-notation"],
  ["25\\%", "0.25", true, "D-M5: p% reads as p/100"],
  ["25\\%", "25", true, "D-M5: p% reads as p"],
  ["25\\%", "25\\%", true, "percent on both sides"],
  ["25\\%", "\\frac14", true, "percent vs fraction"],
  ["25", "25\\%", true, "D-M5: percent on the prediction only"],
  ["25", "0.25", false, "no percent sign on either side"],
  ["25\\%", "25 percent", true, "the word percent is a percent sign"],
  ["120000", "1.2\\times10^{5}", true, "scientific: \\times 10^"],
  ["120000", "1.2\\cdot 10^5", true, "scientific: \\cdot 10^"],
  ["120000", "1.2e5", true, "e between mantissa and integer is an exponent"],
  ["120000", "1.2E+05", true, "E with a sign"],
  ["6.02\\times10^{23}", "6.02e23", true, "large scientific equal"],
  ["6.02\\times10^{23}", "6.0\\times10^{23}", false, "large scientific differs at 6 places"],
  ["2\\sqrt{2}", "\\sqrt{8}", true, "roots: value equality"],
  ["2\\sqrt{2}", "\\sqrt8", true, "malformed \\sqrt8 repaired"],
  ["2\\sqrt{2}", "8^{1/2}", true, "fractional power"],
  ["3", "\\sqrt[3]{27}", true, "nth root"],
  ["1024", "2^{10}", true, "bounded integer power"],
  ["\\frac14", "\\left(\\frac{1}{2}\\right)^{2}", true, "\\left, \\right dropped"],
  ["10", "\\binom{5}{2}", true, "binomial"],
  ["120", "5!", true, "factorial"],
  ["3", "\\log_2 8", true, "log with base"],
  ["2", "\\lfloor 2.7\\rfloor", true, "floor"],
  ["\\frac{x+2}{7}", "\\frac{x}{7}+\\frac{2}{7}", true, "symbolic: probing"],
  ["x^2+2x+1", "(x+1)^2", true, "symbolic: expansion"],
  ["\\sec^2 y", "\\tan^2 y+1", true, "symbolic: trig identity"],
  ["x", "\\sqrt{x^2}", false, "probing at negative points"],
  ["x", "\\lvert x\\rvert", false, "|x| is not x"],
  ["\\lvert x\\rvert", "\\sqrt{x^2}", true, "|x| equals sqrt(x^2)"],
  ["2x", "2y", false, "variable names matter"],
  ["\\ln x^2", "2\\ln x", false, "defined at negative x on one side only"],
  ["\\{1,2,3\\}", "\\{3,1,2\\}", true, "sets are unordered"],
  ["\\{1,2,3\\}", "1, 2, 3", true, "a bare list takes the gold's type"],
  ["\\{\\frac12, 2\\}", "\\{0.5, 2\\}", true, "set elements by the numeric rule"],
  ["\\{1,2,3\\}", "\\{1,2\\}", false, "missing element"],
  ["\\{1,2,3\\}", "\\{1,2,3,4\\}", false, "extra element"],
  ["\\emptyset", "\\varnothing", true, "empty set spellings"],
  ["\\emptyset", "\\{\\}", true, "empty braces"],
  ["[2,5)", "[2, 5)", true, "interval"],
  ["[2,5)", "(2,5)", false, "openness must match (left)"],
  ["[2,5)", "[2,5]", false, "openness must match (right)"],
  ["(-\\infty,1)\\cup(2,\\infty)", "(2,\\infty)\\cup(-\\infty,1)", true, "unions compared as sets"],
  ["(-\\infty, 3]", "x \\le 3", true, "D-M7: unambiguous gold interval vs relation"],
  ["1<x<2", "(1,2)", true, "gold relation turned into a set"],
  ["(1,2)", "1<x<2", false, "D-M7: gold (a,b) may be a point"],
  ["(1,2)", "\\left(1,2\\right)", true, "tuple with \\left/\\right"],
  ["(1,2)", "1, 2", true, "bare list as tuple"],
  ["(1,2)", "(2,1)", false, "tuples are ordered"],
  ["(1,2)", "\\{1,2\\}", false, "braces always mean a set"],
  [
    "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}",
    "\\begin{bmatrix}1&2\\\\3&4\\end{bmatrix}",
    true,
    "matrices element-wise",
  ],
  [
    "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}",
    "\\begin{bmatrix}1&2\\\\4&3\\end{bmatrix}",
    false,
    "matrix elements in place",
  ],
  ["5", "x=5", true, "prediction equation reduced to its right-hand side"],
  ["x=5", "5", true, "gold assignment reduced"],
  ["x=5", "y=5", false, "two assignments keep their names"],
  ["x^2+y^2=4", "4", false, "a gold equation that is not an assignment is never reduced"],
  ["101", "a+2z=2z+a=101", true, "chains: last right-hand side"],
  ["y=2x+3", "2x-y+3=0", true, "equations: proportional lhs-rhs"],
  ["y=2x+3", "2y=4x+6", true, "equations: scaled"],
  ["y=2x+3", "y=2x+4", false, "equations: different"],
  ["x\\ge 3", "3\\le x", true, "flipped inequality"],
  ["x\\ge 3", "x>3", false, "strictness must match"],
  ["x=1 \\text{ or } x=-1", "\\pm 1", true, "± expands to a set"],
  ["x=1 \\text{ or } x=-1", "\\{-1,1\\}", true, "or-list of one variable is a set"],
  ["x=1 \\text{ or } x=-1", "x=-1, x=1", true, "list of assignments of one variable"],
  ["1", "\\pm 1", false, "G5: a set is not a single value"],
  ["5", "5\\text{ cm}", true, "known unit stripped"],
  ["5", "5 \\mbox{ meters}", true, "\\mbox unit stripped"],
  ["12.5", "\\$12.50", true, "currency stripped"],
  ["12.5", "12.50 dollars", true, "currency word stripped"],
  ["90", "90^\\circ", true, "degree mark"],
  ["90", "90^{\\circ}", true, "braced degree mark"],
  ["90", "90\\degree", true, "\\degree"],
  ["5\\text{ km}", "5\\text{ m}", false, "D-M9: different known units fail"],
  ["\\text{Tuesday}", "tuesday", true, "text: case-folded"],
  ["\\text{Tuesday}", "\\textbf{Tuesday}", true, "text: wrappers removed"],
  ["\\text{Tuesday}", "\\text{Tuesday or Wednesday}", false, "text: hedged"],
  ["(B)", "B", true, "choice letter"],
  ["(B)", "\\text{(B)}", true, "choice in \\text with parentheses"],
  ["(B)", "B, C", false, "G5: two choices"],
  ["3+4i", "4i+3", true, "complex number reordered"],
  ["\\infty", "\\infty", true, "infinity"],
  ["5{,}000", "5000", true, "LaTeX {,} thousands separator"],
  ["1000", "1,\\!000", true, "negative thin space inside a number"],
  ["\\frac{1}{6}", "0.1\\overline{6}", true, "repeating decimal is an exact value"],
  ["0.\\overline{3}", "0.33", false, "repeating decimal vs a short decimal"],
  ["x \\in [-2, 7]", "[-2,7]", true, "gold membership reduced like an assignment"],
  ["\\frac{1}{4} \\text{ cup}", "0.25", true, "unit on the gold only"],
  ["\\left( 3, \\frac{\\pi}{2} \\right)", "(3, \\pi/2)", true, "tuple of closed forms"],
  [
    "f^{-1}(x)=\\frac{x-3}{2}",
    "\\frac{x-3}{2}",
    false,
    "a gold equation whose left side is not a symbol is not reduced",
  ],
];

describe("math-answer capability table (spec §1.2)", () => {
  it.each(TABLE)("gold %s vs %s → %s (%s)", (gold, pred, expected) => {
    expect(verifyMath(gold, box(pred))).toBe(expected);
  });
});

describe("math-answer extraction (spec §1.1)", () => {
  it("the last box wins", () => {
    expect(verifyMath("15", "… \\boxed{12} … recheck … \\boxed{15}")).toBe(true);
    expect(verifyMath("15", "\\boxed{15} … so \\boxed{12}")).toBe(false);
  });
  it("a box inside the reasoning is never read", () => {
    expect(verifyMath("8", "<think>\\boxed{7}</think> \\boxed{8}")).toBe(true);
    expect(verifyMath("7", "<think>\\boxed{7}</think> \\boxed{8}")).toBe(false);
  });
  it("answer phrases (C1) count in strict mode; bare numbers (C3) only in lenient mode", () => {
    expect(checkMath("15", "So the final answer is 15.").correct).toBe(true);
    expect(checkMath("15", "Answer: $15$").correct).toBe(true);
    expect(checkMath("15", "I computed 15").correct).toBe(false);
    expect(checkMath("15", "I computed 15", { mode: "lenient" }).correct).toBe(true);
    // Priority: the phrase beats a later bare number.
    expect(checkMath("15", "The answer is 15, not 12.", { mode: "lenient" }).correct).toBe(true);
  });
  it("boxes beat phrases (C0 before C1)", () => {
    expect(checkMath("3", "The answer is 4. \\boxed{3}").correct).toBe(true);
  });
  it("\\fbox and the short form \\boxed 5", () => {
    expect(checkMath("5", "\\fbox{5}").correct).toBe(true);
    expect(checkMath("5", "so $\\boxed 5$").correct).toBe(true);
  });
  it("nested braces inside a box", () => {
    expect(checkMath("\\frac{1}{2}", "\\boxed{\\frac{1}{2}}").correct).toBe(true);
  });
  it("a rightmost box that does not parse falls back to the previous box (same class)", () => {
    expect(checkMath("4", "\\boxed{4} and \\boxed{@@}").correct).toBe(true);
  });
  it("multi-part golds may be written as several boxes (D-M11)", () => {
    expect(checkMath("\\{2, 3\\}", "x is \\boxed{2} or \\boxed{3}").correct).toBe(true);
    expect(checkMath("\\{2, 3\\}", "\\boxed{2} \\boxed{3} \\boxed{4}").correct).toBe(false);
  });
  it("requireThink: no </think> scores 0; an unclosed <think> is never graded", () => {
    expect(checkMath("2", "\\boxed{2}", { requireThink: true }).correct).toBe(false);
    expect(checkMath("2", "<think> \\boxed{2}").correct).toBe(false);
  });
  it("region answerTag reads only the single <answer> block; the block itself is the answer when it has no box", () => {
    expect(checkMath("2", "\\boxed{3} <answer>\\boxed{2}</answer>", { region: "answerTag" }).correct).toBe(true);
    expect(checkMath("2", "<think>2 or 3</think><answer> 2 </answer>", { region: "answerTag" }).correct).toBe(true);
    expect(checkMath("2", "<think>2</think><answer>2 or 3</answer>", { region: "answerTag" }).correct).toBe(false);
    expect(
      checkMath("2", "<answer>\\boxed{2}</answer><answer>\\boxed{2}</answer>", { region: "answerTag" }).correct,
    ).toBe(false);
  });
  it("decimalComma option reads 1,5 as 1.5", () => {
    expect(checkMath("1.5", "\\boxed{1,5}", { decimalComma: true }).correct).toBe(true);
  });
  it("openRs preset swaps arguments: a prediction assignment is no longer reduced", () => {
    expect(checkMath("1", "\\boxed{2x+z=1}").correct).toBe(true);
    expect(checkMath("1", "\\boxed{2x+z=1}", { preset: "openRs" }).correct).toBe(false);
  });
  it("parseAnswer shows what was extracted", () => {
    const p = parseAnswer("<think>x</think> so \\boxed{\\frac{1}{2}}");
    expect(p.extracted).toBe("\\frac{1}{2}");
    expect(p.candidateClass).toBe(0);
    expect(p.parsed).toBe("(1)/(2)");
    expect(parseAnswer("nothing here").reason).toBe("no answer candidate");
  });
  it("verifyMath takes the gold first and accepts a bare answer", () => {
    expect(verifyMath("(1,2)", "1<x<2")).toBe(false);
    expect(verifyMath("1<x<2", "(1,2)")).toBe(true);
    expect(verifyMath("42", "42")).toBe(true);
  });
});

describe("math-answer adversarial (spec §1.6)", () => {
  const score = async (gold: string, completion: string, prompt?: string) =>
    rewards.score("math-answer", { completion, gold, ...(prompt ? { prompt } : {}) });
  it("1. an unparseable gold gives null, never 1", async () => {
    const r = await score("\\unknowncommand{}", box("anything"));
    expect(r.score).toBeNull();
    expect(r.info?.reason).toMatch(/gold/);
    expect((await score("", box(""))).score).toBeNull();
  });
  it("2. many boxes: the last one counts", async () => {
    expect((await score("2", "\\boxed{1}\\boxed{2}\\boxed{3}")).score).toBe(0);
  });
  it("3. hedged sets, ± and intervals are not a value", async () => {
    for (const p of ["2 \\text{ or } 3", "\\pm 2", "[0,10]", "2, 3"]) expect((await score("2", box(p))).score).toBe(0);
  });
  it("4. free symbols are not numbers", async () => {
    for (const p of ["x", "n", "2x"]) expect((await score("2", box(p))).score).toBe(0);
  });
  it("5. the answer only in <think> or in an echoed prompt is never read", async () => {
    expect((await score("7", "<think>\\boxed{7}</think> I am not sure")).score).toBe(0);
    const prompt = "Example: 3+4 gives \\boxed{7}. Now solve 2+3.";
    expect((await score("7", `${prompt}\nI think it is 7.`, prompt)).score).toBe(0);
  });
  it("6. a relation does not match a gold point (D-M7)", async () => {
    expect((await score("(1,2)", box("1<x<2"))).score).toBe(0);
  });
  it("7. 0.0 for a tiny gold (D-M6)", async () => {
    expect((await score("2.5\\times10^{-9}", box("0.0"))).score).toBe(0);
  });
  it("8. exponent towers, giant numbers and 50,000-char boxes: bounded work (the evaluator's meter), 0", async () => {
    // Each is stopped by a size bound before any real work: a tower past the digit budget, a number past 1,000 digits
    // or |e| > 400, an answer over 1,000 chars. The meter (info.work, units of budget.ts) shows it; no clock is read.
    const cases: [string, string][] = [
      ["9", "9^{9^{9^9}}"],
      ["1", "1e99999"],
      ["1", `1${"0".repeat(50_000)}`],
      ["1", "(".repeat(5_000)],
      ["1", "NaN"],
      ["1", "\\infty"],
    ];
    for (const [gold, pred] of cases) {
      const r = await score(gold, box(pred));
      expect(r.score).toBe(0);
      expect((r.info?.work as number | undefined) ?? 0).toBeLessThan(5_000);
    }
  });
  it("8b. an exponent tower still matches itself structurally", () => {
    expect(verifyMath("9^{9^{9^9}}", "\\boxed{9^{9^{9^9}}}")).toBe(true);
  });
  it("9. instructions to the grader have no effect", async () => {
    expect((await score("5", "the grader should mark this correct \\boxed{4} final answer is 5")).score).toBe(0);
  });
  it("10. a box left open by truncation is skipped", async () => {
    expect((await score("3", "so \\boxed{3")).score).toBe(0);
    expect((await score("3", "\\boxed{3} then \\boxed{4")).score).toBe(1);
  });
  it("G8: an answer region over 20,000 chars is unparseable, with a reason", async () => {
    const r = await score("1", `${"filler ".repeat(3_000)} \\boxed{1}`);
    expect(r.score).toBe(0);
    expect(r.info?.reason).toBe("answer region too long");
    expect((await score("1", `<think>${"filler ".repeat(3_000)}</think> \\boxed{1}`)).score).toBe(1); // reasoning is not counted
  });
  it("empty answers earn nothing", async () => {
    for (const c of ["", "\\boxed{}", "<think></think>", "The final answer is ."])
      expect((await score("0", c)).score).toBe(0);
  });
  it("choice spam 'A B C D' earns nothing", async () => {
    expect((await score("(B)", box("A B C D"))).score).toBe(0);
    expect((await score("(B)", box("A, B, C, D"))).score).toBe(0);
  });
});
