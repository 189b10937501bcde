/**
 * Issue 11, hole 4: two answer blocks, the last one paid. The hedging rule (G5) is checked once, in `answerBlock`
 * (src/rewards/text/region.ts), and every family that reads an answer block goes through it. Each case pins one
 * family or one way of hedging; the property at the end covers every text reward at once.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { answerBlock, answerRegion, rewards, textRewards } from "../../src/rewards/text-rewards.js";
import { countdownExpression } from "../../src/rewards/countdown.js";

const PUZZLE = "1030020001000001";
const SOLUTION = "1432324121434321";
const THINK = "<think>\nworking\n</think>\n";
const score = async (name: string, completion: string, gold: unknown, o: object = {}) =>
  (await rewards.score(name, { completion, gold }, o)).score;

describe("answerBlock: the shared rule", () => {
  it.each([
    ["<answer>x</answer>", "x", "one block"],
    ["a <answer> x </answer> b", " x ", "text around the block is not read"],
    ["<answer>x</answer><answer>y</answer>", null, "two blocks"],
    ["<answer>x</answer><answer>y", null, "an extra unclosed open tag"],
    ["<answer>x</answer></answer>", null, "an extra close tag"],
    ["<answer><answer>x</answer></answer>", null, "nested blocks"],
    ["</answer>x<answer>", null, "close before open"],
    ["no block", null, "none"],
  ] as [string, string | null, string][])("%j → %j (%s)", (c, text) => expect(answerBlock(c).text).toBe(text));
  it('"last" (a paper\'s rule) takes the last complete block; a custom tag is read the same way', () => {
    expect(answerBlock("<answer>x</answer><answer>y</answer>", { blocks: "last" }).text).toBe("y");
    expect(answerBlock("<glue>a</glue><glue>b</glue>", { tag: "glue" }).text).toBeNull();
    expect(answerBlock("<glue>a</glue>", { tag: "glue" }).text).toBe("a");
  });
  it("the reason names what is wrong; a block over the cap is refused", () => {
    const reason = "more than one <answer> block";
    expect(answerBlock("<answer>x</answer><answer>y</answer>")).toEqual({ text: null, reason });
    expect(answerBlock("<answer>x</answer>", { maxChars: 0 }).text).toBeNull();
  });
  it("answerRegion answerTag (the maths and car readers) applies the same rule; its API is unchanged", () => {
    expect(answerRegion("<answer>1</answer>", { mode: "answerTag" }).text).toBe("1");
    expect(answerRegion("<answer>1</answer><answer>2</answer>", { mode: "answerTag" }).text).toBeNull();
    expect(answerRegion("<answer>1</answer><answer>2</answer>", { mode: "answerTag", blocks: "last" }).text).toBe("2");
  });
  it("a region after </think> (or the whole completion) holding two answer blocks is a hedge too", () => {
    const c = "<think>x</think><answer>\\boxed{41}</answer><answer>\\boxed{42}</answer>";
    expect(answerRegion(c, { mode: "afterThink" }).text).toBeNull();
    expect(answerRegion(c, { mode: "all" }).text).toBeNull();
    expect(answerRegion(c, { mode: "afterThink", blocks: "last" }).text).not.toBeNull();
    expect(answerRegion("<think>x</think><answer>\\boxed{42}</answer>", { mode: "afterThink" }).text).not.toBeNull();
  });
});

describe("every family: a wrong block followed by the right one earns nothing", () => {
  const two = (wrong: string, right: string): string => `${THINK}<answer>${wrong}</answer>\n<answer>${right}</answer>`;
  it("sudoku: 4444… then the solution → 0; answerBlocks: last (wd1, hackable) pays it", async () => {
    const c = two("4".repeat(16), SOLUTION);
    expect(await score("sudoku-cells", c, { puzzle: PUZZLE, solution: SOLUTION })).toBe(0);
    expect(await score("sudoku-cells", c, { puzzle: PUZZLE, solution: SOLUTION }, { answerBlocks: "last" })).toBe(1);
  });
  it("temporal-iou: a wrong span then the gold span → 0, format included", async () => {
    expect(await score("temporal-iou", two("0 to 5", "10 to 20"), { segment: [10, 20] })).toBe(0);
  });
  it("box-detection: [] then the gold boxes → 0", async () => {
    const c = two("[]", JSON.stringify([{ Position: [0, 0, 10, 10], Confidence: 1 }]));
    expect(await score("box-detection", c, { boxes: [[0, 0, 10, 10]] })).toBe(0);
  });
  it("class-match, video-mcq, box-grounding, tracking-iou → 0", async () => {
    expect(await score("class-match", two("dog", "cat"), { label: "cat" })).toBe(0);
    expect(await score("video-mcq", two("A", "B"), { answer: "B", options: ["x", "y"] })).toBe(0);
    expect(await score("box-grounding", two("(0,0),(5,5)", "(10,10),(50,50)"), { box: [10, 10, 50, 50] })).toBe(0);
    const boxes = [
      [0, 0, 10, 10],
      [1, 0, 11, 10],
    ];
    expect(await score("tracking-iou", two("[]", JSON.stringify(boxes)), { boxes })).toBe(0);
  });
  it("grounded-qa: two glue blocks lose the format and glue terms", async () => {
    const gold = { answer: "A", options: ["x", "y"], glue: [[3, 8]] };
    const completion = `${THINK}<answer>A</answer><glue>[(0,1)]</glue><glue>[(3,8)]</glue>`;
    const r = await rewards.score("grounded-qa", { completion, gold });
    expect(r.terms).toEqual({ format: 0, glueIou: 0, accuracy: 1 });
  });
  it("kg-answer: two answer blocks in the last turn → em 0", async () => {
    const last = `${THINK}<answer>ibuprofen</answer><answer>aspirin</answer>`;
    const turns = ["<entities>\na\n</entities>", "<groups>\nb\n</groups>", last];
    const r = await rewards.score("kg-answer", { completion: turns.join("\n"), gold: { answers: ["aspirin"] }, turns });
    expect(r.terms.em).toBe(0);
  });
  it("math-answer in its default region (after </think>): two answer blocks → 0", async () => {
    expect(await score("math-answer", two("\\boxed{41}", "\\boxed{42}"), "42")).toBe(0);
    expect(await score("math-answer", `${THINK}<answer>\\boxed{42}</answer>`, "42")).toBe(1);
  });
  it("math-answer with region answerTag, and countdown → 0", async () => {
    expect(await score("math-answer", two("41", "42"), "42", { region: "answerTag" })).toBe(0);
    const gold = { numbers: [3, 5, 2], target: 16 };
    const options = countdownExpression.options.parse({});
    const r = countdownExpression.score({ completion: two("3+5+2", "(3+5)*2"), gold }, options);
    expect(r).toMatchObject({ score: 0 });
  });
  it("hedging in reverse order (right block first) is no better", async () => {
    expect(await score("sudoku-cells", two(SOLUTION, "4".repeat(16)), { puzzle: PUZZLE, solution: SOLUTION })).toBe(0);
    expect(await score("temporal-iou", two("10 to 20", "0 to 5"), { segment: [10, 20] })).toBe(0);
  });
});

describe("property: adding a second answer block never raises any text reward's score (fast-check)", () => {
  const known = fc.constantFrom("42", SOLUTION, "10 to 20", "[]", "A", "aspirin");
  const content = fc.oneof(fc.string({ maxLength: 40 }), known);
  for (const spec of textRewards) {
    it(spec.name, async () => {
      if (!spec.goldCompletion || spec.exampleGold === undefined) return;
      const o = spec.options.parse({});
      const gold = spec.goldCompletion(spec.exampleGold, o);
      const base = await rewards.score(spec.name, { completion: gold, gold: spec.exampleGold, tokens: [1, 2] });
      await fc.assert(
        fc.asyncProperty(content, fc.boolean(), async (b, before) => {
          const extra = `<answer>${b}</answer>`;
          const completion = before ? `${extra}\n${gold}` : `${gold}\n${extra}`;
          const r = await rewards.score(spec.name, { completion, gold: spec.exampleGold, tokens: [1, 2] });
          if (r.score !== null && base.score !== null) expect(r.score).toBeLessThanOrEqual(base.score + 1e-12);
        }),
        { numRuns: 30, seed: 11 },
      );
    });
  }
});
