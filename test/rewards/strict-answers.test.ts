/**
 * Issue 11, holes 2 and 3: structured answers read out of surrounding text. A box list is exactly one JSON value
 * (only the documented repairs), and a single-span temporal answer holds exactly one span, or (`spans: "union"`)
 * every span is scored as one set. The lenient readers survive only under names that say what they are
 * (`parser: "visual-rft-lenient"`, `spans: "last"`, the papers' presets); the cases below pin that they still pay
 * the hacks, so their docs' "hackable" stays true.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { parseBoxList, parseTimeSpans, readSpans, rewards, spansIou } from "../../src/rewards/text-rewards.js";
import { parseJsonAnswer } from "../../src/rewards/text/json-answer.js";

const THINK = "<think>\nlooking\n</think>\n";
const BOX = { Position: [0, 0, 10, 10], Confidence: 1 };
const LIST = JSON.stringify([BOX]);
const det = (answer: string, boxes: number[][] = [[0, 0, 10, 10]], o: object = {}) =>
  rewards.score("box-detection", { completion: `${THINK}<answer>${answer}</answer>`, gold: { boxes } }, o);
const tg = (answer: string, o: object = {}, segment: [number, number] = [10, 20]) =>
  rewards.score("temporal-iou", { completion: `${THINK}<answer>${answer}</answer>`, gold: { segment } }, o);
const LIST_OPTS = { positionKey: "Position", confidenceKey: "Confidence", maxItems: 100, coordSpace: "pixel" as const };

describe("hole 2: a box list is exactly one JSON value", () => {
  it("the gold list itself is read (control)", async () => expect((await det(LIST)).score).toBeCloseTo(3, 12));
  it.each([
    [`${LIST} // IoU = 1.0, verified`, "a comment after the list"],
    [`Here are the boxes: ${LIST}`, "prose before the list"],
    [`${LIST} done`, "prose after the list"],
    [`${LIST}${LIST}`, "two lists back to back"],
    [`[${LIST}]`, "a list of lists"],
    [JSON.stringify({ boxes: [BOX], iou: 1 }), "an object holding the list"],
    [JSON.stringify(BOX), "a bare item, not a list"],
    ["```json\n" + LIST + "\n```", "a code fence (not a documented repair)"],
  ] as [string, string][])("%j earns nothing, format included (%s)", async (answer) => {
    expect((await det(answer)).terms).toEqual({ iou: 0, confidence: 0, format: 0 });
  });
  it('{"boxes": [], "iou": 1.0} is not an empty list: 0 on an image with no gold boxes (was 3)', async () => {
    expect((await det('{"boxes": [], "iou": 1.0}', [])).score).toBe(0);
    expect((await det("[]", [])).score).toBe(3); // the honest empty answer
  });
  it.each([
    [{ ...BOX, iou: 1 }, "an extra key"],
    [JSON.parse('{"Position": [0,0,10,10], "position": [0,0,99,99]}'), "keys equal after lowercasing"],
    [JSON.parse('{"__proto__": {"Position": [0,0,10,10]}}'), "a __proto__ item"],
    [{ Position: [0, 0, 10, 10], Confidence: null }, "an explicit null confidence"],
  ] as [unknown, string][])("an item %j invalidates the list (%s)", (item) => {
    expect(parseBoxList(JSON.stringify([item]), LIST_OPTS)).toBeNull();
  });
  it("documented repairs only: single quotes (§4.1), truncation with repairTruncated (D-B9), extraKeys", async () => {
    expect((await det(LIST.replace(/"/g, "'"))).terms.iou).toBe(1);
    const cut = `[${JSON.stringify(BOX)}, {"Posi`;
    expect((await det(cut)).terms.iou).toBe(0);
    expect((await det(cut, [[0, 0, 10, 10]], { repairTruncated: true })).terms.iou).toBe(1);
    const labelled = JSON.stringify([{ ...BOX, label: "cat" }]);
    expect((await det(labelled)).terms.iou).toBe(0);
    expect((await det(labelled, [[0, 0, 10, 10]], { extraKeys: ["label"] })).terms.iou).toBe(1);
  });
  it('the paper\'s slice survives only as parser "visual-rft-lenient" (and preset visualRft): hackable', async () => {
    const hack = `${LIST} // IoU = 1.0, verified`;
    expect((await det(hack, [[0, 0, 10, 10]], { parser: "visual-rft-lenient" })).terms.iou).toBe(1);
    expect((await det(hack, [[0, 0, 10, 10]], { preset: "visualRft" })).score).toBeCloseTo(3, 12);
  });
  it("tracking reads one JSON list too", async () => {
    const boxes = [
      [0, 0, 10, 10],
      [1, 0, 11, 10],
    ];
    const track = (a: string) =>
      rewards.score("tracking-iou", { completion: `${THINK}<answer>${a}</answer>`, gold: { boxes } });
    expect((await track(JSON.stringify(boxes))).score).toBe(2);
    const list = JSON.stringify(boxes);
    for (const a of [`${list} // verified`, JSON.stringify({ boxes }), `track: ${list}`]) {
      expect((await track(a)).terms).toEqual({ format: 0, trackIou: 0 });
    }
  });
  it("property: words before or after a valid list always make it unreadable (fast-check)", () => {
    const word = fc.string({ minLength: 1, maxLength: 12 }).filter((w) => /[A-Za-z]/.test(w));
    fc.assert(
      fc.property(word, fc.boolean(), (w, before) => {
        const text = before ? `${w} ${LIST}` : `${LIST} ${w}`;
        expect(parseBoxList(text, LIST_OPTS)).toBeNull();
        expect("error" in parseJsonAnswer(text, { repairs: ["singleQuotes"] })).toBe(true);
      }),
      { numRuns: 200, seed: 21 },
    );
  });
});

describe("hole 3: many time spans, one paid", () => {
  it.each([
    ["0 to 5, 5 to 10, 10 to 20", "a spray ending on the gold"],
    ["1 to 2; 3 to 4; 5 to 6; 10 to 20", "a longer spray ending on the gold"],
    ["10 to 20, or maybe 40 to 50", "the gold first, then a hedge"],
    ["between 30 and 40, or between 10 and 20", "two 'and' pairs"],
    ["0 - 10 - 20", "a chain"],
    ["10 to 20 // IoU = 1.0", "a claim after the span"],
    ["10 to 20 (segment 2 of 3)", "another number in the prose"],
  ] as [string, string][])("%j → 0, format included (%s)", async (answer) => {
    expect((await tg(answer)).terms).toEqual({ format: 0, tiou: 0 });
  });
  it("one span in words is read (control)", async () => {
    expect((await tg("The event runs from 10 to 20 seconds.")).terms).toEqual({ format: 1, tiou: 1 });
  });
  it('spans: "union" scores every span as one set (hand-computed)', async () => {
    expect((await tg("0 to 5, 10 to 20", { spans: "union" })).terms.tiou).toBeCloseTo(10 / 15, 12);
    expect((await tg("10 to 15, 15 to 20", { spans: "union" })).terms.tiou).toBe(1);
    expect((await tg("0 to 60", { spans: "union" })).terms.tiou).toBeCloseTo(10 / 60, 12);
    expect((await tg("0 to 5, 7, 10 to 20", { spans: "union" })).terms.tiou).toBe(0); // a stray number
  });
  it('spans: "last" and preset videoChatR1 keep the paper\'s rule, which pays the spray (hackable)', async () => {
    expect((await tg("0 to 5, 5 to 10, 10 to 20", { spans: "last" })).terms.tiou).toBe(1);
    expect((await tg("0 to 5, 5 to 10, 10 to 20", { preset: "videoChatR1" })).score).toBe(2);
  });
  it("parseTimeSpans refuses malformed members and caps the count", () => {
    expect(parseTimeSpans("1 to 2, 20 to 10")).toEqual({ error: "a malformed or reversed span" });
    expect("error" in parseTimeSpans(Array.from({ length: 101 }, (_, i) => `${i} to ${i + 1}`).join(", "))).toBe(true);
    expect(readSpans("1 to 2, 3 to 4", "single")).toEqual({ error: "2 spans where exactly one is expected" });
  });

  const span = fc
    .tuple(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 30 }))
    .map(([a, l]) => [a, a + l] as [number, number]);
  it("property: under union, spans whose union differs from the gold never get IoU 1 (fast-check)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(span, { minLength: 1, maxLength: 8 }), async (spans) => {
        const text = spans.map(([a, b]) => `${a} to ${b}`).join(", ");
        const covered = (t: number) => spans.some(([a, b]) => a <= t && t < b);
        let equal = true; // compare the unions on a grid of half-seconds (all ends are integers)
        for (let t = 0.25; t < 100; t += 0.5) if (covered(t) !== (t > 10 && t < 20)) equal = false;
        const r = await tg(text, { spans: "union" });
        if (!equal) expect(r.terms.tiou).toBeLessThan(1);
        else expect(r.terms.tiou).toBe(1);
        expect(r.terms.tiou).toBeCloseTo(spansIou([[10, 20]], spans), 12);
      }),
      { numRuns: 300, seed: 22 },
    );
  });
  it("property: under single, an answer with two or more spans earns 0 (fast-check)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(span, { minLength: 2, maxLength: 6 }), async (spans) => {
        const r = await tg(spans.map(([a, b]) => `${a} to ${b}`).join(" or "));
        expect(r.score).toBe(0);
      }),
      { numRuns: 200, seed: 23 },
    );
  });
});
