/**
 * Property tests (fast-check) on every parser of the text-checkable rewards: arbitrary and hostile strings up to
 * 64 KB never throw and return a result of the documented shape. Cost is bounded without a wall clock (issue 20
 * item 11): the maths checker reports the work it spent (`info.work`, units of rewards/math/budget.ts), which must
 * stay within its budget; the other parsers have no counter, so each call gets a generous CPU-time bound (1 s of
 * process CPU for 64 KB, 20× the old 50 ms wall figure), which a quadratic scan of 64 KB (~4·10⁹ steps) still breaks
 * while scheduler pauses on a loaded machine do not count.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { MATH_WORK_LIMIT } from "../../src/rewards/math/budget.js";
import {
  checkMath,
  formatOptions,
  formatScore,
  parseAnswer,
  parseAnswerString,
  parseBoxList,
  parseChoice,
  parseGlue,
  parseGrid,
  parseGroundingBox,
  parsePlan,
  parseTimeRange,
  rewards,
  textRewards,
  verifyMath,
} from "../../src/rewards/text-rewards.js";

const FRAGMENTS = [
  "\\boxed{",
  "\\boxed ",
  "\\fbox{",
  "{",
  "}",
  "\\{",
  "\\}",
  "$",
  "$$",
  "\\(",
  "\\)",
  "\\[",
  "\\]",
  "<think>",
  "</think>",
  "<answer>",
  "</answer>",
  "<glue>",
  "</glue>",
  "(",
  ")",
  "[",
  "]",
  "((((",
  "1e99999",
  "9^{9^{9^9}}",
  "\\frac{",
  "\\frac12",
  "\\sqrt",
  "\\sqrt[",
  " ",
  "\n",
  "\t",
  "1,000",
  "1 000 ",
  "0.",
  ".5",
  "the answer is ",
  "final answer is ",
  "answer: ",
  "0 to ",
  "12.5 to 20",
  "- ",
  ".",
  "\\left(",
  "\\right)",
  "x^",
  "^",
  "_",
  "|",
  "\\text{",
  "\\text{ or }",
  "model_id = [",
  "subtasks = [",
  "access_list = [",
  "'",
  '"',
  "[[",
  "1,",
  "\\",
  "A B C D ",
  "9",
  "00:00:",
  "e",
  "E+",
  "\\pm",
  "=",
  "<",
  "<=",
  "\\begin{pmatrix}",
  "\\end{pmatrix}",
  "&",
  "\\\\",
  "%",
  "\\%",
  "NaN",
  "Infinity",
  "-",
  "\u2212",
  "\u221a",
  "\u00b0",
  '{"Position": [0,0,1,1], "Confidence": 1}',
  "(1,2),(3,4)",
  "(1, ",
  ",",
  "\\cup",
  "\\infty",
  "or",
  "x",
  "\u0000",
  "\ud83d\ude00",
];

/** Hostile strings: one fragment repeated to up to 64 KB, or a random mix of fragments and noise, possibly repeated. */
const hostile = fc.oneof(
  fc
    .tuple(fc.constantFrom(...FRAGMENTS), fc.integer({ min: 1, max: 65_536 }))
    .map(([f, n]) => f.repeat(Math.ceil(n / f.length)).slice(0, n)),
  fc
    .tuple(
      fc.array(fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ maxLength: 8 })), { maxLength: 60 }),
      fc.integer({ min: 1, max: 2_000 }),
    )
    .map(([parts, times]) => parts.join("").repeat(times).slice(0, 65_536)),
  fc.string({ maxLength: 300, unit: "binary" }),
);

/** Generous process-CPU bound per call (ms); see the header. */
const CPU_LIMIT_MS = 1_000;

/** Process CPU time (user + system, ms) spent by f, and its result. */
function cpu<T>(f: () => T): { ms: number; out: T } {
  const c0 = process.cpuUsage();
  const out = f();
  const c = process.cpuUsage(c0);
  return { ms: (c.user + c.system) / 1_000, out };
}

/** The maths checker's work meter, when the result carries one. */
const mathWork = (out: unknown): number => {
  const info = (out as { info?: { work?: unknown } } | null)?.info;
  return typeof info?.work === "number" ? info.work : 0;
};

const PARSERS: Record<string, (s: string) => unknown> = {
  "checkMath (strict)": (s) => checkMath("\\frac{1}{2}", s),
  "checkMath (lenient)": (s) => checkMath("x^2+1", s, { mode: "lenient" }),
  "checkMath (whole 64 KB region)": (s) =>
    checkMath("(1,2)", s, { mode: "lenient", region: "all", maxRegionChars: 70_000 }),
  "verifyMath (bare answer)": (s) => verifyMath("42", s),
  "verifyMath (hostile gold)": (s) => verifyMath(s, "\\boxed{1}"),
  parseAnswer: (s) => parseAnswer(s),
  parseAnswerString: (s) => parseAnswerString(s),
  "format-tags": (s) => formatScore(s, formatOptions.parse({})),
  "format-tags visualRft": (s) => formatScore(s, formatOptions.parse({ preset: "visualRft" })),
  "format-tags openR1": (s) => formatScore(s, formatOptions.parse({ preset: "openR1" })),
  parseBoxList: (s) =>
    parseBoxList(s, { positionKey: "Position", confidenceKey: "Confidence", maxItems: 100, coordSpace: "pixel" }),
  parseTimeRange: (s) => parseTimeRange(s),
  parseChoice: (s) => parseChoice(s, ["a", "b", "c", "d"]),
  parseGlue: (s) => parseGlue(s),
  parseGrid: (s) => parseGrid(s, 9),
  parsePlan: (s) => parsePlan(s, 3),
  parseGroundingBox: (s) => parseGroundingBox(s),
};

describe("parsers never throw and stay fast on hostile input (fast-check)", () => {
  for (const [name, parse] of Object.entries(PARSERS)) {
    it(name, () => {
      fc.assert(
        fc.property(hostile, (s) => {
          const { ms, out } = cpu(() => parse(s));
          const where = `${name} on ${JSON.stringify(s.slice(0, 60))}… (${s.length} chars)`;
          expect(mathWork(out), where).toBeLessThanOrEqual(MATH_WORK_LIMIT);
          expect(ms, `${where}: ${ms.toFixed(1)} ms of CPU`).toBeLessThan(CPU_LIMIT_MS);
        }),
        { numRuns: 40, seed: 4 },
      );
    });
  }
});

describe("every text reward on hostile completions (fast-check)", () => {
  for (const spec of textRewards) {
    it(`${spec.name} returns a finite score or null, never throws`, async () => {
      const options = spec.options.parse({});
      await fc.assert(
        fc.asyncProperty(hostile, async (completion) => {
          const c0 = process.cpuUsage();
          const r = await spec.score(
            { completion, gold: spec.exampleGold, tokens: [1, 2, 3], turns: [completion, completion, completion] },
            options,
          );
          const c = process.cpuUsage(c0);
          expect(r.score === null || Number.isFinite(r.score)).toBe(true);
          for (const v of Object.values(r.terms)) expect(Number.isFinite(v)).toBe(true);
          expect(mathWork(r)).toBeLessThanOrEqual(MATH_WORK_LIMIT);
          expect((c.user + c.system) / 1_000).toBeLessThan(4 * CPU_LIMIT_MS); // generous CPU bound: one run, no retry
        }),
        { numRuns: 25, seed: 5 },
      );
    });
  }
});

describe("semantic properties", () => {
  it("maths: any integer equals itself boxed, and differs from its successor", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), (n) => {
        expect(verifyMath(n.toString(), `\\boxed{${n}}`)).toBe(true);
        expect(verifyMath(n.toString(), `\\boxed{${n + 1n}}`)).toBe(false);
      }),
      { numRuns: 200, seed: 6 },
    );
  });
  it("maths: a fraction equals its decimal to 6 places, and a boxed hedge of two values never matches", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 999 }), fc.integer({ min: 1, max: 999 }), (a, b) => {
        expect(verifyMath(`\\frac{${a}}{${b}}`, `\\boxed{${(a / b).toFixed(6)}}`)).toBe(true);
        if (a !== b) expect(verifyMath(String(a), `\\boxed{${a}, ${b}}`)).toBe(false);
      }),
      { numRuns: 200, seed: 7 },
    );
  });
  it("maths: appending boxes after the gold box never helps unless they are the gold", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 99 }),
        fc.array(fc.integer({ min: 100, max: 200 }), { minLength: 1, maxLength: 5 }),
        (g, extra) => {
          const text = `\\boxed{${g}}` + extra.map((e) => `\\boxed{${e}}`).join(" ");
          expect(verifyMath(String(g), text)).toBe(false);
        },
      ),
      { numRuns: 100, seed: 8 },
    );
  });
  it("registry: scores are within [min, maxScore] for the example golds", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 200 }), async (c) => {
        for (const spec of textRewards) {
          const r = await rewards.score(spec.name, { completion: c, gold: spec.exampleGold, tokens: [] });
          if (r.score !== null) expect(r.score).toBeLessThanOrEqual((spec.maxScore ?? 1) + 1e-12);
        }
      }),
      { numRuns: 30, seed: 9 },
    );
  });
});
