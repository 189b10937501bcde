/** Visual-RFT boxes and classes (spec §4) and the COCO-style mAP utility. */
import { describe, expect, it } from "vitest";
import {
  boxIou,
  classAccuracy,
  cocoMap,
  detectionOptions,
  detectionTerms,
  greedyMatch,
  hungarianMatch,
  rewards,
  type Box,
  type PredBox,
} from "../../src/rewards/text-rewards.js";

const answer = (items: unknown): string => `<think>\nlooking\n</think>\n<answer>${JSON.stringify(items)}</answer>`;
const det = (boxes: number[][], items: unknown, o: object = {}) =>
  rewards.score("box-detection", { completion: answer(items), gold: { boxes } }, o);
const GOLD = [
  [0, 0, 10, 10],
  [20, 20, 30, 30],
];
const WORKED = [
  { Position: [0, 0, 10, 10], Confidence: 0.9 },
  { Position: [21, 21, 30, 30], Confidence: 0.6 },
  { Position: [50, 50, 60, 60], Confidence: 0.3 },
];

describe("box IoU and matching (§4.1)", () => {
  it.each([
    [[0, 0, 10, 10], [0, 0, 10, 10], 1, "identical"],
    [[0, 0, 10, 10], [10, 0, 20, 10], 0, "touching boxes score 0 (no +1 pixel)"],
    [[20, 20, 30, 30], [21, 21, 30, 30], 0.81, "worked example"],
    [[0, 0, 10, 10], [5, 0, 15, 10], 1 / 3, "half overlap"],
  ] as [number[], number[], number, string][])("%j vs %j → %d (%s)", (a, b, v) =>
    expect(boxIou(a as Box, b as Box)).toBeCloseTo(v, 12),
  );

  it("worked example: iou 1.81/3; confidence (0.9+0.6+0.7)/3 under the reference rule, × 2/3 under ours", async () => {
    const ref = await det(GOLD, WORKED, { confidenceRule: "reference" });
    expect(ref.terms.iou).toBeCloseTo(1.81 / 3, 12);
    expect(ref.terms.confidence).toBeCloseTo(2.2 / 3, 12);
    expect(ref.terms.format).toBe(1);
    const ours = await det(GOLD, WORKED);
    expect(ours.terms.confidence).toBeCloseTo((2.2 / 3) * (2 / 3), 12);
  });
  it("IoU of exactly 0.5 is unmatched (strict >); inclusive option matches it", () => {
    const preds: PredBox[] = [{ box: [0, 0, 10, 10], confidence: 1 }];
    const gold: Box[] = [[0, 0, 10, 5]];
    expect(greedyMatch(preds, gold, 0.5, false).gold[0]).toBe(-1);
    expect(greedyMatch(preds, gold, 0.5, true).gold[0]).toBe(0);
  });
  it("greedy goes by confidence; Hungarian maximises total IoU", async () => {
    // The confident prediction takes gold 0 greedily, leaving pred 1 unmatched; Hungarian swaps them.
    const preds: PredBox[] = [
      { box: [0, 0, 10, 10], confidence: 0.9 },
      { box: [1, 0, 11, 10], confidence: 0.1 },
    ];
    const gold: Box[] = [
      [1, 0, 11, 10],
      [-3, 0, 7, 10],
    ];
    const g = greedyMatch(preds, gold, 0.5, false);
    const h = await hungarianMatch(preds, gold, 0.5, false);
    expect(g.iou.reduce((a, b) => a + b)).toBeLessThan(h.iou.reduce((a, b) => a + b) + 1e-12);
    expect(h.gold).toEqual([1, 0]);
    expect((await det(GOLD, WORKED, { matching: "hungarian" })).terms.iou).toBeCloseTo(1.81 / 3, 12);
  });
  it("D-B6: no gold and no prediction → 1; no gold but predictions → 0", async () => {
    expect((await det([], [])).terms).toMatchObject({ iou: 1, confidence: 1 });
    expect((await det([], [{ Position: [0, 0, 5, 5], Confidence: 0.1 }])).terms).toMatchObject({
      iou: 0,
      confidence: 0,
    });
  });
  it("D-B5: a degenerate gold box → null", async () => {
    expect((await det([[0, 0, 0, 10]], [])).score).toBeNull();
  });
  it("key names are configurable and case-insensitive; norm1000 coordinates convert with imageSize", async () => {
    expect(
      (
        await det(GOLD, [{ bbox_2d: [0, 0, 10, 10], confidence: 1 }, { BBOX_2D: [20, 20, 30, 30] }], {
          positionKey: "bbox_2d",
        })
      ).terms.iou,
    ).toBeCloseTo(1, 12);
    const r = await rewards.score("box-detection", {
      completion: answer([{ Position: [0, 0, 500, 500], Confidence: 1 }]),
      gold: { boxes: [[0, 0, 500, 500]], coordSpace: "norm1000", imageSize: [200, 100] },
    });
    expect(r.terms.iou).toBeCloseTo(1, 12);
  });
  it("single quotes are repaired once; truncated JSON is not", async () => {
    const single = "<think>x</think><answer>[{'Position': [0,0,10,10], 'Confidence': 1}]</answer>";
    expect(
      (await rewards.score("box-detection", { completion: single, gold: { boxes: [[0, 0, 10, 10]] } })).terms.iou,
    ).toBe(1);
    const cut = '<think>x</think><answer>[{"Position": [0,0,10,10], "Confidence": 1}, {"Posi</answer>';
    expect(
      (await rewards.score("box-detection", { completion: cut, gold: { boxes: [[0, 0, 10, 10]] } })).terms.iou,
    ).toBe(0);
  });
});

describe("box-detection adversarial (§4.3)", () => {
  const small = [
    [10, 10, 20, 20],
    [60, 60, 70, 70],
  ];
  it("1. one box covering the whole image → unmatched → iou 0, confidence 0", async () => {
    const r = await det(small, [{ Position: [0, 0, 100, 100], Confidence: 1 }]);
    expect(r.terms).toMatchObject({ iou: 0, confidence: 0 });
  });
  it("2. 100 grid boxes with c = 0 → both terms ≈ 0.02; 101 boxes invalidate the list", async () => {
    const grid = Array.from({ length: 100 }, (_, i) => ({
      Position: [(i % 10) * 10, Math.floor(i / 10) * 10, (i % 10) * 10 + 10, Math.floor(i / 10) * 10 + 10],
      Confidence: 0,
    }));
    const r = await det(small, grid);
    expect(r.terms.iou).toBeLessThanOrEqual(0.02 + 1e-12);
    expect(r.terms.confidence).toBeLessThanOrEqual(0.02 + 1e-12);
    const ref = detectionTerms(
      grid.map((g) => ({ box: g.Position as Box, confidence: 0 })),
      small as Box[],
      greedyMatch(
        grid.map((g) => ({ box: g.Position as Box, confidence: 0 })),
        small as Box[],
        0.5,
        false,
      ),
      "reference",
    );
    expect(ref.confidence).toBeCloseTo(0.98, 12); // the reference pays spam
    const over = [...grid, { Position: [0, 0, 1, 1], Confidence: 0 }];
    expect((await det(small, over)).terms).toMatchObject({ iou: 0, confidence: 0 });
  });
  it("3. one far-away box with c = 0 → confidence 0 (the reference gives 1)", async () => {
    expect((await det(small, [{ Position: [80, 80, 90, 90], Confidence: 0 }])).terms.confidence).toBe(0);
    expect(
      (await det(small, [{ Position: [80, 80, 90, 90], Confidence: 0 }], { confidenceRule: "reference" })).terms
        .confidence,
    ).toBe(1);
  });
  it("6. NaN, negative width, x1 > x2, confidence outside [0,1] → the list is invalid", async () => {
    for (const bad of [
      [{ Position: [0, 0, "NaN", 5], Confidence: 1 }],
      [{ Position: [5, 0, 0, 5], Confidence: 1 }],
      [{ Position: [10, 10, 20, 20], Confidence: 2 }],
      [{ Position: [10, 10, 20], Confidence: 1 }],
    ]) {
      expect((await det(small, [{ Position: [10, 10, 20, 20], Confidence: 1 }, ...bad])).terms).toMatchObject({
        iou: 0,
        confidence: 0,
      });
    }
  });
  it("7. a duplicate shifted by one pixel lowers both terms; an identical duplicate is deduped", async () => {
    const gold = [[10, 10, 20, 20]];
    const one = await det(gold, [{ Position: [10, 10, 20, 20], Confidence: 1 }]);
    const dup = await det(gold, [
      { Position: [10, 10, 20, 20], Confidence: 1 },
      { Position: [11, 10, 21, 20], Confidence: 1 },
    ]);
    expect(dup.terms.iou).toBeLessThan(one.terms.iou);
    expect(dup.terms.confidence).toBeLessThan(one.terms.confidence);
    const same = await det(gold, [
      { Position: [10, 10, 20, 20], Confidence: 1 },
      { Position: [10, 10, 20, 20], Confidence: 1 },
    ]);
    expect(same.terms).toEqual(one.terms);
  });
  it("boxes outside <answer>, or two answer blocks, earn nothing", async () => {
    const c = `<think>[{"Position": [10,10,20,20], "Confidence": 1}]</think><answer>none</answer>`;
    expect((await rewards.score("box-detection", { completion: c, gold: { boxes: small } })).terms.iou).toBe(0);
    const two = answer([{ Position: [10, 10, 20, 20] }]) + "<answer>[]</answer>";
    expect((await rewards.score("box-detection", { completion: two, gold: { boxes: small } })).terms.iou).toBe(0);
  });
});

describe("class-match (§4.1 step 7, D-B7)", () => {
  const gold = { label: "Golden Retriever", aliases: ["golden"] };
  it.each([
    ["golden retriever", 1, "case and spaces"],
    ["Golden_Retriever", 1, "underscores"],
    ["golden-retriever", 1, "hyphens"],
    ["golden", 1, "alias"],
    ["retriever", 0, "no substring credit"],
    ["golden retriever dog", 0, "no superstring credit"],
  ] as [string, number, string][])("%j → %d (%s)", (a, v) => expect(classAccuracy(a, gold)).toBe(v));
  it("classList restricts answers", () =>
    expect(classAccuracy("golden", { ...gold, classList: ["Golden Retriever"] })).toBe(0));
  it("4. empty answer or a class list → 0 (the reference's substring test gives 1)", async () => {
    for (const a of ["", "cat dog bird golden retriever"]) {
      const r = await rewards.score("class-match", { completion: `<think>x</think><answer>${a}</answer>`, gold });
      expect(r.terms.accuracy).toBe(0);
    }
  });
  it("5. 'not a cat', or the label only in the reasoning → 0", async () => {
    expect(
      (
        await rewards.score("class-match", {
          completion: "<think>x</think><answer>not a cat</answer>",
          gold: { label: "cat" },
        })
      ).terms.accuracy,
    ).toBe(0);
    expect(
      (
        await rewards.score("class-match", {
          completion: "<think>cat</think><answer>dog</answer>",
          gold: { label: "cat" },
        })
      ).terms.accuracy,
    ).toBe(0);
  });
  it("NFKC folds full-width letters; a Cyrillic look-alike stays different", () => {
    expect(classAccuracy("\uff43\uff41\uff54", { label: "cat" })).toBe(1);
    expect(classAccuracy("\u0441at", { label: "cat" })).toBe(0);
  });
  it("empty gold label → null", async () =>
    expect(
      (await rewards.score("class-match", { completion: "<answer>x</answer>", gold: { label: " " } })).score,
    ).toBeNull());
});

describe("cocoMap", () => {
  const g = (image: string, box: number[], label = "cat") => ({ image, label, box: box as Box });
  it("hand-computed AP: TP, FP, TP → (51 + 50·2/3)/101 at every threshold", () => {
    const gold = [g("a", [0, 0, 10, 10]), g("a", [20, 20, 30, 30])];
    const dets = [
      { ...g("a", [0, 0, 10, 10]), score: 0.9 },
      { ...g("a", [50, 50, 60, 60]), score: 0.8 },
      { ...g("a", [20, 20, 30, 30]), score: 0.7 },
    ];
    const r = cocoMap(gold, dets);
    const ap = (51 + (50 * 2) / 3) / 101;
    expect(r.map).toBeCloseTo(ap, 12);
    expect(r.map50).toBeCloseTo(ap, 12);
  });
  it("perfect detections → 1; none → 0; IoU 0.81 counts up to threshold 0.80 only", () => {
    const gold = [g("a", [20, 20, 30, 30])];
    expect(cocoMap(gold, [{ ...gold[0]!, score: 1 }]).map).toBeCloseTo(1, 12);
    expect(cocoMap(gold, []).map).toBe(0);
    const r = cocoMap(gold, [{ ...g("a", [21, 21, 30, 30]), score: 1 }]);
    expect(r.map).toBeCloseTo(7 / 10, 12); // thresholds .50 … .80 pass (7 of 10)
    expect(r.map75).toBeCloseTo(1, 12);
  });
  it("classes and images are kept apart", () => {
    const gold = [g("a", [0, 0, 10, 10], "cat"), g("b", [0, 0, 10, 10], "dog")];
    const r = cocoMap(gold, [
      { ...g("b", [0, 0, 10, 10], "cat"), score: 1 },
      { ...g("b", [0, 0, 10, 10], "dog"), score: 1 },
    ]);
    expect(r.perClass).toEqual({ cat: 0, dog: 1 });
  });
  it("options schema has the spec defaults", () => {
    expect(detectionOptions.parse({})).toMatchObject({
      iouThreshold: 0.5,
      inclusive: false,
      matching: "greedy",
      confidenceRule: "ours",
      maxItems: 100,
    });
  });
});

describe("box-detection visualRft preset (reference parity)", () => {
  it("repairs truncated JSON, uses the reference confidence rule and the lazy format regex", async () => {
    const cut =
      '<think>x</think><answer>[{"Position": [0,0,10,10], "Confidence": 1}, {"Position": [20,20,30,30], "Conf</answer>';
    const r = await rewards.score(
      "box-detection",
      {
        completion: cut,
        gold: {
          boxes: [
            [0, 0, 10, 10],
            [20, 20, 30, 30],
          ],
        },
      },
      { preset: "visualRft" },
    );
    expect(r.terms.iou).toBeCloseTo(0.5, 12);
    expect((await det(GOLD, WORKED, { preset: "visualRft" })).terms.confidence).toBeCloseTo(2.2 / 3, 12);
    const two = "<think>x</think><answer>[]</answer> <answer>[]</answer>";
    expect(
      (await rewards.score("box-detection", { completion: two, gold: { boxes: [] } }, { preset: "visualRft" })).terms
        .format,
    ).toBe(1);
  });
});

describe("box-grounding (GIoU + 1, 0–1000 grid)", () => {
  const score = (answer: string, box = [100, 100, 300, 300]) =>
    rewards.score("box-grounding", { completion: `<think>x</think><answer>${answer}</answer>`, gold: { box } });
  it.each([
    ["(100,100),(300,300)", 2, "exact box: GIoU 1"],
    ["(100, 100), (200, 300)", 1.5, "half the box: IoU 0.5, hull = union"],
    [
      "(400,400),(500,500)",
      1 - (160_000 - 50_000) / 160_000,
      "disjoint: GIoU = 0 − (hull − union)/hull, hull 400×400, union 50,000",
    ],
    ["(0,0),(100,100) then (100,100),(300,300)", 0, "two boxes: not a single-box answer"],
    ["the box is (100,100),(300,300)", 2, "words around the one box are allowed"],
  ] as [string, number, string][])("%j → %d (%s)", async (a, v) => expect((await score(a)).score).toBeCloseTo(v, 12));
  it('boxes: "last" (hackable) grades the last box and ignores the rest', async () => {
    const c = "<think>x</think><answer>(0,0),(100,100) then (100,100),(300,300)</answer>";
    const r = await rewards.score(
      "box-grounding",
      { completion: c, gold: { box: [100, 100, 300, 300] } },
      { boxes: "last" },
    );
    expect(r.score).toBeCloseTo(2, 12);
  });
  it("adversarial: the whole grid, reversed or degenerate boxes, NaN, boxes outside <answer>", async () => {
    const whole = (await score("(0,0),(1000,1000)")).score!;
    expect(whole).toBeCloseTo(1 + 40_000 / 1_000_000, 12); // IoU 0.04, hull = union
    expect(whole).toBeLessThan(1.1);
    for (const a of ["(300,300),(100,100)", "(100,100),(100,300)", "(NaN,1),(2,3)", ""])
      expect((await score(a)).score).toBe(0);
    const outside = await rewards.score("box-grounding", {
      completion: "<think>(100,100),(300,300)</think><answer>?</answer>",
      gold: { box: [100, 100, 300, 300] },
    });
    expect(outside.score).toBe(0);
  });
  it("a degenerate gold box → null", async () => expect((await score("(1,1),(2,2)", [5, 5, 5, 9])).score).toBeNull());
});
