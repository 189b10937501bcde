/**
 * The scene generator and the image tasks (src/tasks/vision/): hand-computed boxes of each shape, exact re-rendering,
 * seeded determinism, gold completions earning full reward, adversarial answers earning nothing on the correct term,
 * the few-shot train split, and COCO export of a scene.
 */
import { describe, expect, it } from "vitest";
import { Rng } from "../../src/util/rng.js";
import { fromCoco, toCoco } from "../../src/util/coco.js";
import { getTask } from "../../src/tasks/index.js";
import { drawScene, objectBox, renderScene, sceneAnnotation, type Scene } from "../../src/tasks/vision/scene.js";
import { ALL_CLASSES, type DetectionGold } from "../../src/tasks/vision/tasks.js";
import { detectionMap } from "../../src/tasks/vision/detection-map.js";
import type { Example } from "../../src/tasks/types.js";

const base = { colour: "red", texture: "solid", x: 0, y: 0 } as const;

describe("scene generator", () => {
  it("gives tight pixel boxes (hand-computed, pixel centres)", () => {
    expect(objectBox({ ...base, shape: "square", x: 2, y: 3, size: 4 }, 40, 40)).toEqual([2, 3, 6, 7]);
    expect(objectBox({ ...base, shape: "circle", size: 8 }, 40, 40)).toEqual([0, 0, 8, 8]);
    // apex row 0: half-width 0.25 at v = 0.5 misses the centres 3.5 and 4.5, so the triangle starts on row 1
    expect(objectBox({ ...base, shape: "triangle", size: 8 }, 40, 40)).toEqual([0, 1, 8, 8]);
    expect(objectBox({ ...base, shape: "square", x: 36, y: 0, size: 8 }, 40, 40)).toEqual([36, 0, 40, 8]); // clipped
  });

  it("paints textures: stripes alternate every two rows, hollow leaves the centre white", () => {
    const scene: Scene = {
      width: 12,
      height: 12,
      objects: [
        { ...base, shape: "square", texture: "striped", size: 8, box: [0, 0, 8, 8] },
        { ...base, colour: "blue", shape: "square", texture: "hollow", x: 0, y: 0, size: 12, box: [0, 0, 12, 12] },
      ],
    };
    const img = renderScene({ ...scene, objects: [scene.objects[0]!] });
    expect(img.at(1, 0, 0)).toBeCloseTo(0.9, 6); // stripe
    expect(img.at(1, 2, 0)).toBeCloseTo(0.9 * 0.35 + 0.65, 6); // tint between stripes
    const hollow = renderScene({ ...scene, objects: [scene.objects[1]!] });
    expect(hollow.at(0, 5, 2)).toBeCloseTo(0.9, 6); // blue outline
    expect([0, 1, 2].map((c) => hollow.at(6, 6, c))).toEqual([1, 1, 1]); // white inside
  });

  it("is seeded and keeps overlaps under the limit", () => {
    const o = { size: 40, minObjects: 3, maxObjects: 5, minSize: 8, maxSize: 16, maxOverlap: 0.2 };
    const a = drawScene(new Rng(7), o);
    expect(drawScene(new Rng(7), o)).toEqual(a);
    expect(a.objects.length).toBeGreaterThanOrEqual(3);
    for (const obj of a.objects) expect(objectBox(obj, 40, 40)).toEqual(obj.box);
    expect(() => drawScene(new Rng(0), { ...o, minSize: 2 })).toThrow(/minSize/);
  });

  it("exports its annotations as COCO JSON", () => {
    const scene = drawScene(new Rng(3), {
      size: 40,
      minObjects: 2,
      maxObjects: 2,
      minSize: 8,
      maxSize: 12,
      maxOverlap: 0,
    });
    const rec = sceneAnnotation(scene, "s.png");
    expect(fromCoco(toCoco([rec]))).toEqual([rec]);
    expect(rec.objects[0]!.label).toMatch(/^(red|green|blue|yellow) (solid|striped|hollow) (circle|square|triangle)$/);
  });
});

describe.each(["vision-detection", "vision-grounding", "vision-classify"])("%s", (name) => {
  const task = getTask(name, {});
  const train = task.generate("train", 12, 1);
  const test = task.generate("test", 6, 1);

  it("carries one rendered image per example, equal to its scene re-rendered", () => {
    for (const e of [...train, ...test]) {
      expect(e.prompt.split("<image>").length - 1).toBe(1);
      expect(e.images).toHaveLength(1);
      const img = e.images![0]!;
      expect(img.ref).toBe(e.id);
      expect(renderScene((e.gold as { scene: Scene }).scene).data).toEqual(img.data);
    }
    expect(task.generate("train", 12, 1).map((e) => e.prompt)).toEqual(train.map((e) => e.prompt));
  });

  it("never shares a scene between train and test", () => {
    const key = (e: (typeof train)[number]) => JSON.stringify(e.gold);
    const trainKeys = new Set(task.generate("train", 60, 2).map(key));
    for (const e of task.generate("test", 20, 2)) expect(trainKeys.has(key(e))).toBe(false);
  });

  it("gives the gold completion full reward and the correct term 1", async () => {
    for (const e of test) {
      const r = await task.score(e, e.goldCompletion);
      expect(r.terms.correct, e.goldCompletion).toBe(1);
      const max = name === "vision-detection" ? 3 : 2;
      expect(r.score).toBeCloseTo(max, 6);
    }
  });

  it("gives nothing on the correct term to empty, malformed or spray answers", async () => {
    const e = test[0]!;
    for (const bad of [
      "",
      "<answer></answer>",
      "<answer>everything</answer>",
      `<answer>${ALL_CLASSES.join(", ")}</answer>`,
      `<answer>${JSON.stringify(Array.from({ length: 30 }, (_, i) => ({ Position: [i, i, i + 20, i + 20], Confidence: 1 })))}</answer>`,
      "<answer>(0,0),(1000,1000)</answer>",
    ]) {
      const r = await task.score(e, bad);
      expect(r.terms.correct, bad).toBe(0);
    }
  });
});

describe("vision-classify few-shot", () => {
  it("repeats k examples per class in the train split, all classes covered", () => {
    const task = getTask("vision-classify", { shotsPerClass: 2 });
    const train = task.generate("train", 200, 0);
    const distinct = new Set(train.map((e) => e.prompt + JSON.stringify(e.gold)));
    expect(distinct.size).toBe(2 * ALL_CLASSES.length);
    const labels = new Set(train.map((e) => (e.gold as { label: string }).label));
    expect(labels.size).toBe(ALL_CLASSES.length);
    expect(train[0]!.prompt).toBe(train[2 * ALL_CLASSES.length]!.prompt);
    const choices = (train[0]!.gold as { classList: string[] }).classList;
    expect(choices.length).toBeGreaterThanOrEqual(3);
    expect(choices).toContain((train[0]!.gold as { label: string }).label);
  });
});

describe("vision-classify vary", () => {
  /** The attribute a question varies in: the one on which its choices differ. */
  const varied = (classList: string[]) =>
    (["colour", "texture", "shape"] as const).filter((_, i) => new Set(classList.map((c) => c.split(" ")[i])).size > 1);

  it("draws each question's varied attribute from the listed ones only", () => {
    const coarse = getTask("vision-classify", { vary: ["colour", "shape"] }).generate("train", 60, 1);
    const seen = coarse.map((e) => varied((e.gold as { classList: string[] }).classList));
    expect(seen.every((v) => v.length === 1 && v[0] !== "texture")).toBe(true);
    expect(new Set(seen.map((v) => v[0])).size).toBe(2);
    const texture = getTask("vision-classify", { vary: ["texture"] }).generate("test", 20, 1);
    for (const e of texture) {
      const g = e.gold as { classList: string[]; label: string };
      expect(varied(g.classList)).toEqual(["texture"]);
      expect(g.classList).toHaveLength(3); // solid, striped, hollow
      expect(g.classList).toContain(g.label);
    }
  });

  it("keeps the default stream (all three attributes) as before, and rejects a repeated or empty list", () => {
    const a = getTask("vision-classify", {}).generate("test", 10, 3);
    const b = getTask("vision-classify", { vary: ["colour", "texture", "shape"] }).generate("test", 10, 3);
    expect(b.map((e) => e.prompt)).toEqual(a.map((e) => e.prompt));
    expect(() => getTask("vision-classify", { vary: [] })).toThrow(/vary/);
    expect(() => getTask("vision-classify", { vary: ["colour", "colour"] })).toThrow(/vary/);
  });
});

describe("detection mAP (Visual-RFT's detection metric)", () => {
  const task = getTask("vision-detection", {});
  const test = task.generate("test", 8, 4) as Example<DetectionGold>[];

  it("is 1 for the gold answers, 0 for none, and lower when boxes are shifted", () => {
    expect(
      detectionMap(
        test,
        test.map((e) => e.goldCompletion),
      ).map,
    ).toBeCloseTo(1, 9);
    expect(
      detectionMap(
        test,
        test.map(() => ""),
      ).map,
    ).toBe(0);
    const shifted = test.map((e) => {
      const boxes = e.gold.boxes.map(([x1, y1, x2, y2]) => [x1! + 2, y1!, x2! + 2, y2!]);
      return `<answer>${JSON.stringify(boxes.map((b) => ({ Position: b, Confidence: 1 })))}</answer>`;
    });
    const m = detectionMap(test, shifted).map;
    expect(m).toBeGreaterThan(0);
    expect(m).toBeLessThan(1);
    expect(() => detectionMap(test, [])).toThrow(/8 examples but 0 completions/);
  });
});
