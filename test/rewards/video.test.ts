/** VideoChat-R1 rewards (spec §5): temporal IoU, tracking, multiple choice, grounded QA, and the caption judge. */
import { describe, expect, it } from "vitest";
import {
  makeCaptionRecallReward,
  parseChoice,
  parseGlue,
  parseTimeRange,
  rewards,
  spansIou,
  temporalIou,
} from "../../src/rewards/text-rewards.js";

const wrap = (a: string, extra = ""): string => `<think>\nwatching\n</think>\n<answer>${a}</answer>${extra}`;
const tg = (answer: string, segment: [number, number] = [10, 20]) =>
  rewards.score("temporal-iou", { completion: wrap(answer), gold: { segment, duration: 60 } });

describe("temporal IoU (§5.1)", () => {
  it.each([
    ["12.5 to 20", [12.5, 20], "plain pair"],
    ["from 3 and 7 seconds", [3, 7], "'and' with a unit"],
    ["3s - 7s", [3, 7], "hyphen with s units"],
    ["3\u20137", [3, 7], "en dash"],
    ["01:05 to 01:10", [65, 70], "mm:ss"],
    ["0:01:05 to 0:01:10", [65, 70], "hh:mm:ss"],
    ["from 12.5 to 20 seconds.", [12.5, 20], "a full stop ends the sentence"],
  ] as [string, [number, number], string][])("%j → %j (%s)", (text, range) =>
    expect(parseTimeRange(text)).toEqual(range),
  );
  it("policy last (VideoChat-R1, hackable) grades the last pair; single refuses two", () => {
    expect(parseTimeRange("0 to 5 and later 10 to 20", "last")).toEqual([10, 20]);
    expect(parseTimeRange("0 to 5 and later 10 to 20")).toBeNull();
  });
  it.each([
    ["20 to 10", "reversed"],
    ["-5 to 3", "negative start"],
    ["NaN to 4", "NaN"],
    ["1e9 to 2e9", "exponent notation"],
    ["about ten", "no numbers"],
  ])("%j is unparsed (%s)", (text) => {
    expect(parseTimeRange(text)).toBeNull();
  });
  it("spec example: 12.5–20 vs 10–20 → 0.75; disjoint → 0", async () => {
    expect(temporalIou([10, 20], [12.5, 20])).toBeCloseTo(0.75, 12);
    expect(temporalIou([10, 20], [30, 40])).toBe(0);
    const r = await tg("12.5 to 20");
    expect(r.terms).toEqual({ format: 1, tiou: 0.75 });
    expect(r.score).toBeCloseTo(1.75, 12);
  });
  it("zero-length gold → null; zero-length prediction → 0", async () => {
    expect((await tg("10 to 20", [5, 5])).score).toBeNull();
    expect((await tg("15 to 15")).terms.tiou).toBe(0);
  });
  describe("adversarial (§5.5)", () => {
    it("1. the whole video earns only |gold|/duration", async () =>
      expect((await tg("0 to 60")).terms.tiou).toBeCloseTo(10 / 60, 12));
    it("2. reversed, negative, NaN and huge pairs → 0", async () => {
      for (const a of ["20 to 10", "-5 to 3", "NaN to 4"]) expect((await tg(a)).terms.tiou).toBe(0);
      expect((await tg("1000000 to 2000000")).terms.tiou).toBe(0);
    });
    it("3. a pair outside <answer> → 0", async () => {
      const r = await rewards.score("temporal-iou", {
        completion: "<think>10 to 20</think><answer>unsure</answer>",
        gold: { segment: [10, 20] },
      });
      expect(r.terms.tiou).toBe(0);
    });
    it("3b. several pairs: a single-span answer with two spans is invalid", async () => {
      expect((await tg("10 to 20, or maybe 40 to 50")).terms).toEqual({ format: 0, tiou: 0 });
      expect((await tg("40 to 50, or maybe 10 to 20")).terms).toEqual({ format: 0, tiou: 0 });
    });
  });
});

describe("tracking (§5.2)", () => {
  const gold = {
    boxes: [
      [0, 0, 10, 10],
      [2, 0, 12, 10],
      [4, 0, 14, 10],
      [6, 0, 16, 10],
    ],
  };
  const track = (boxes: unknown, g: object = gold) =>
    rewards.score("tracking-iou", { completion: wrap(JSON.stringify(boxes)), gold: g });
  it("perfect track → 1; frame 0 is excluded from the mean", async () => {
    expect((await track(gold.boxes)).terms).toEqual({ format: 1, trackIou: 1 });
    const wrong0 = [[50, 50, 60, 60], ...gold.boxes.slice(1)];
    expect((await track(wrong0)).terms.trackIou).toBe(1);
  });
  it("absent and zero-area gold frames are excluded; none left → null", async () => {
    const r = await track(
      [
        [0, 0, 10, 10],
        [0, 0, 1, 1],
        [4, 0, 14, 10],
        [6, 0, 16, 10],
      ],
      { ...gold, absent: [false, true, false, false] },
    );
    expect(r.terms.trackIou).toBe(1);
    expect(
      (
        await track(gold.boxes, {
          boxes: [
            [0, 0, 10, 10],
            [0, 0, 0, 0],
          ],
        })
      ).score,
    ).toBeNull();
  });
  it("4. copying the frame-0 box earns only the static-tracker IoU", async () => {
    const r = await track(gold.boxes.map(() => gold.boxes[0]));
    const expected = (8 / 12 + 6 / 14 + 4 / 16) / 3;
    expect(r.terms.trackIou).toBeCloseTo(expected, 12);
    expect(r.info?.staticBaseline).toBeCloseTo(expected, 12);
  });
  it("5. N−1 or N+1 boxes → 0 and format 0", async () => {
    expect((await track(gold.boxes.slice(1))).terms).toEqual({ format: 0, trackIou: 0 });
    expect((await track([...gold.boxes, [0, 0, 1, 1]])).terms).toEqual({ format: 0, trackIou: 0 });
  });
  it("a degenerate predicted box scores 0 for its frame; NaN boxes invalidate the list", async () => {
    const r = await track([gold.boxes[0], [5, 5, 5, 5], gold.boxes[2], gold.boxes[3]]);
    expect(r.terms.trackIou).toBeCloseTo(2 / 3, 12);
    expect(
      (await rewards.score("tracking-iou", { completion: wrap("[[0,0,1,1],[0,0,NaN,1],[0,0,1,1],[0,0,1,1]]"), gold }))
        .terms.trackIou,
    ).toBe(0);
  });
});

describe("multiple choice (§5.3)", () => {
  const options = ["a cat", "a dog", "a bird", "a fish"];
  it.each([
    ["C", "C", "bare letter"],
    ["(C)", "C", "parenthesised"],
    ["C.", "C", "with a full stop"],
    ["C) a bird", "C", "letter with its option text"],
    ["C: a bird", "C", "colon form"],
    ["The answer is C", "C", "leading phrase removed"],
    ["Option B", "B", "'option' removed"],
    ["a bird", "C", "full option text"],
    ["A BIRD!", "C", "option text normalised"],
  ] as [string, string, string][])("%j → %s (%s)", (a, letter) => expect(parseChoice(a, options)).toBe(letter));
  it.each([
    ["A or B", "two letters"],
    ["A B C D", "every letter"],
    ["Definitely C", "the reference reads the D of Definitely"],
    ["E", "letter outside the options"],
    ["C: a dog", "letter with another option's text"],
    ["", "empty"],
  ])("%j → null (%s)", (a) => expect(parseChoice(a, options)).toBeNull());
  it("scores format + accuracy; a gold letter outside the options → null", async () => {
    const r = await rewards.score("video-mcq", { completion: wrap("B"), gold: { answer: "B", options } });
    expect(r.terms).toEqual({ format: 1, accuracy: 1 });
    expect(
      (await rewards.score("video-mcq", { completion: wrap("B"), gold: { answer: "F", options } })).score,
    ).toBeNull();
  });
  it("6. 'A or B', 'A B C D', 'Definitely C' (gold D) → accuracy 0", async () => {
    for (const a of ["A or B", "A B C D", "Definitely C"]) {
      expect(
        (await rewards.score("video-mcq", { completion: wrap(a), gold: { answer: "D", options } })).terms.accuracy,
      ).toBe(0);
    }
  });
});

describe("grounded QA (§5.4)", () => {
  const gold = {
    answer: "A",
    options: ["he opens the door", "he sits down"],
    glue: [
      [3, 8],
      [20, 24],
    ] as [number, number][],
  };
  const gqa = (answer: string, glue: string) =>
    rewards.score("grounded-qa", { completion: wrap(answer, `\n<glue>${glue}</glue>`), gold });
  it("glue parsing and merged-span IoU", () => {
    expect(parseGlue("[(3, 8), (20, 24)]")).toEqual([
      [3, 8],
      [20, 24],
    ]);
    expect(parseGlue("[(8, 3)]")).toBeNull();
    expect(parseGlue("[(1, __import__)]")).toBeNull();
    expect(
      spansIou(
        [[0, 10]],
        [
          [0, 4],
          [3, 6],
        ],
      ),
    ).toBeCloseTo(0.6, 12); // merged to [0,6]
  });
  it("perfect answer → 3", async () => expect((await gqa("A", "[(3, 8), (20, 24)]")).score).toBeCloseTo(3, 12));
  it("7. one glue span covering the whole video → low IoU; [] → 0", async () => {
    expect((await gqa("A", "[(0, 100)]")).terms.glueIou).toBeCloseTo(9 / 100, 12);
    expect((await gqa("A", "[]")).terms.glueIou).toBe(0);
  });
  it("an invalid glue list loses the format term; an empty gold glue → null", async () => {
    expect((await gqa("A", "[(5, 1)]")).terms.format).toBe(0);
    const r = await rewards.score("grounded-qa", { completion: wrap("A"), gold: { ...gold, glue: [[4, 4]] } });
    expect(r.score).toBeNull();
  });
  it("requireThink: false allows a direct answer", async () => {
    const r = await rewards.score(
      "grounded-qa",
      { completion: "<answer>A</answer><glue>[(3,8),(20,24)]</glue>", gold },
      { requireThink: false },
    );
    expect(r.terms.format).toBe(1);
  });
});

describe("caption recall (model-judged, not rule-based)", () => {
  it("is marked modelJudged, not registered, and uses the judge's score", async () => {
    const reward = makeCaptionRecallReward({ judge: async (c, ref) => (c.includes(ref) ? 1 : 0.25) });
    expect(reward.modelJudged).toBe(true);
    expect(rewards.has("caption-recall")).toBe(false);
    const r = await reward.score(
      { completion: wrap("a man walks a dog"), gold: { caption: "a dog" } },
      { requireThink: true },
    );
    expect(r.terms).toEqual({ format: 1, recall: 1 });
  });
  it("a failing or out-of-range judge gives null", async () => {
    const failing = makeCaptionRecallReward({
      judge: async () => {
        throw new Error("down");
      },
    });
    expect(
      (await failing.score({ completion: wrap("x"), gold: { caption: "y" } }, { requireThink: true })).score,
    ).toBeNull();
    const odd = makeCaptionRecallReward({ judge: async () => 7 });
    expect(
      (await odd.score({ completion: wrap("x"), gold: { caption: "y" } }, { requireThink: true })).score,
    ).toBeNull();
  });
});
