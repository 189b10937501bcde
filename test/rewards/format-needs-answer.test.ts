/**
 * Issue 11, hole 5: format credit for garbage content. With `formatRequiresAnswer` (on by default) the format term of
 * a structured answer pays only when the content parses as the family's answer type; `false`, and the presets that
 * reproduce a paper's rule (`visualRft`, `videoChatR1`), keep the tag-only term, which the garbage below still earns.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { parseBoxList, readSpans, rewards } from "../../src/rewards/text-rewards.js";

const THINK = "<think>\nlooking\n</think>\n";
const wrap = (answer: string): string => `${THINK}<answer>${answer}</answer>`;
const term = async (name: string, answer: string, gold: unknown, o: object = {}) =>
  (await rewards.score(name, { completion: wrap(answer), gold }, o)).terms.format;
const HUGE = "1" + "0".repeat(4_999);
const LONG_FINITE = "10." + "0".repeat(4_997);
const item = (pos: string): string => `[{"Position": ${pos}, "Confidence": 1}]`;
const LIST_OPTS = { positionKey: "Position", confidenceKey: "Confidence", maxItems: 100, coordSpace: "pixel" as const };

const BOX_GARBAGE: [string, string][] = [
  [item("[10, 10, 0, 0]"), "an inverted box"],
  [item("[NaN, 0, 10, 10]"), "NaN"],
  [item("[0, 0, 1e400, 10]"), "1e400 (Infinity)"],
  [item("[0, 0, 0xC, 10]"), "a hex literal"],
  [item('["0", "0", "10", "10"]'), "string coordinates"],
  [item(`[0, 0, ${HUGE}, 10]`), "a 5,000-digit number"],
  [item(`[0, 0, ${LONG_FINITE}, 10]`), "a 5,000-digit number that is finite"],
  ['[{"__proto__": {"Position": [0, 0, 10, 10]}}]', "a __proto__ item"],
  ["there is a cat near the middle", "prose"],
];

describe("box-detection: the format term needs a valid box list", () => {
  const gold = { boxes: [[0, 0, 10, 10]] };
  it.each(BOX_GARBAGE)("%s → format 0 (%s)", async (answer) => {
    expect(await term("box-detection", answer, gold)).toBe(0);
    expect(await term("box-detection", answer, gold, { formatRequiresAnswer: false })).toBe(1);
    expect(await term("box-detection", answer, gold, { preset: "visualRft" })).toBe(1); // the paper's rule: hackable
  });
  it("a valid list, even a wrong one, keeps its format credit", async () => {
    expect(await term("box-detection", item("[50, 50, 60, 60]"), gold)).toBe(1);
  });
  it("property: format 1 implies the answer parses as a box list (fast-check)", async () => {
    const parts = fc.constantFrom(
      "[",
      "]",
      "{",
      "}",
      ",",
      '"Position": ',
      "[0,0,10,10]",
      "[10,10,0,0]",
      "1e400",
      "NaN",
      '"x"',
      " ",
      "0xC",
    );
    await fc.assert(
      fc.asyncProperty(fc.array(parts, { maxLength: 14 }), async (ps) => {
        const answer = ps.join("");
        const f = await term("box-detection", answer, gold);
        const parsed = parseBoxList(answer, LIST_OPTS);
        if (f === 1) expect(parsed).not.toBeNull();
      }),
      { numRuns: 300, seed: 31 },
    );
  });
});

const SPAN_GARBAGE: [string, string][] = [
  ["20 to 10", "an inverted span"],
  ["NaN to NaN", "NaN"],
  ["1e400 to 1e401", "exponent notation"],
  ["0xC to 0xD", "hex"],
  ["'10' to '20'", "quoted numbers"],
  [`${HUGE} to ${HUGE}1`, "5,000-digit numbers"],
  ["somewhere in the middle of the clip", "prose"],
  ["", "nothing (whitespace only is already refused by the tags rule)"],
];

describe("temporal-iou: the format term needs exactly one valid span", () => {
  const gold = { segment: [10, 20] };
  it.each(SPAN_GARBAGE)("%j → format 0 (%s)", async (answer) => {
    expect(await term("temporal-iou", answer, gold)).toBe(0);
  });
  it("formatRequiresAnswer: false and preset videoChatR1 keep the tag-only term (hackable)", async () => {
    for (const [answer] of SPAN_GARBAGE.slice(0, 7)) {
      expect(await term("temporal-iou", answer, gold, { formatRequiresAnswer: false })).toBe(1);
      expect(await term("temporal-iou", answer, gold, { preset: "videoChatR1" })).toBe(1);
    }
  });
  it("a valid but wrong span keeps its format credit", async () => {
    expect(await term("temporal-iou", "40 to 50", gold)).toBe(1);
  });
  it("property: format 1 implies exactly one valid span (fast-check)", async () => {
    const parts = fc.constantFrom("10", "20", " to ", " and ", "-", "NaN", "e", ".", ":", "s", " ", "x", "1e400", "0x");
    await fc.assert(
      fc.asyncProperty(fc.array(parts, { maxLength: 10 }), async (ps) => {
        const answer = ps.join("");
        if ((await term("temporal-iou", answer, gold)) === 1) expect("spans" in readSpans(answer, "single")).toBe(true);
      }),
      { numRuns: 300, seed: 32 },
    );
  });
});

describe("tracking, multiple choice and grounded QA", () => {
  const boxes = [
    [0, 0, 10, 10],
    [1, 0, 11, 10],
    [2, 0, 12, 10],
  ];
  it.each([
    ["[[0,0,10,10],[11,0,1,10],[2,0,12,10]]", "an inverted box"],
    ['[[0,0,10,10],["1",0,11,10],[2,0,12,10]]', "a string coordinate"],
    ["[[0,0,10,10],[1,0,1e400,10],[2,0,12,10]]", "1e400"],
    [`[[0,0,10,10],[1,0,${LONG_FINITE},10],[2,0,12,10]]`, "a 5,000-digit number"],
    ['[[0,0,10,10],{"__proto__":[1,0,11,10]},[2,0,12,10]]', "a __proto__ item"],
    ["the object moves right", "prose"],
  ] as [string, string][])("tracking %s → format 0 (%s)", async (answer) => {
    expect(await term("tracking-iou", answer, { boxes })).toBe(0);
  });
  it("tracking: formatRequiresAnswer: false pays tags only", async () => {
    expect(await term("tracking-iou", "the object moves right", { boxes }, { formatRequiresAnswer: false })).toBe(1);
  });
  it.each([
    ["I am not sure", "prose"],
    ["A or B", "a hedge"],
    ["Z", "a letter past the options"],
  ])("video-mcq %j → format 0 (%s)", async (answer) => {
    const gold = { answer: "A", options: ["x", "y"] };
    expect(await term("video-mcq", answer, gold)).toBe(0);
    expect(await term("video-mcq", answer, gold, { formatRequiresAnswer: false })).toBe(1);
  });
  it("grounded-qa: prose in <answer> or a reversed glue span → format 0", async () => {
    const gold = { answer: "A", options: ["x", "y"], glue: [[3, 8]] };
    const gqa = (a: string, glue: string, o: object = {}) =>
      rewards.score("grounded-qa", { completion: `${wrap(a)}\n<glue>${glue}</glue>`, gold }, o);
    expect((await gqa("maybe", "[(3, 8)]")).terms.format).toBe(0);
    expect((await gqa("maybe", "[(3, 8)]", { formatRequiresAnswer: false })).terms.format).toBe(1);
    expect((await gqa("A", "[(8, 3)]")).terms.format).toBe(0);
    expect((await gqa("A", `[(3, ${LONG_FINITE})]`)).terms.format).toBe(0);
    expect((await gqa("B", "[(3, 8)]")).terms.format).toBe(1); // a valid wrong choice
  });
});
