/**
 * Image I/O (src/util/image.ts) and COCO annotations (src/util/coco.ts): real files on disk (the two committed test
 * images of test/fixtures/vision, made by scripts/make-vision-images.ts), alpha over white, hand-computed bilinear
 * values, COCO's xywh boxes, and bad input that must fail with the file's name.
 */
import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PNG } from "pngjs";
import { ConfigError } from "../../src/util/errors.js";
import { RgbImage, decodeImage, encodePng, readImage, resizeBilinear, writeImage } from "../../src/util/image.js";
import { fromCoco, readCoco, toCoco, writeCoco, type AnnotatedImage } from "../../src/util/coco.js";
import { quadrantColour } from "../../scripts/make-vision-images.js";

const DIR = join(import.meta.dirname, "..", "fixtures", "vision");

describe("image files", () => {
  it("decodes the committed PNG exactly", () => {
    const img = readImage(join(DIR, "quadrants.png"));
    expect([img.width, img.height, img.ref]).toEqual([8, 6, join(DIR, "quadrants.png")]);
    for (let y = 0; y < 6; y++)
      for (let x = 0; x < 8; x++) expect([0, 1, 2].map((c) => img.at(x, y, c))).toEqual(quadrantColour(x, y));
  });

  it("decodes the committed JPEG close to the pattern at the quadrant centres (lossy)", () => {
    const img = readImage(join(DIR, "quadrants.jpg"));
    expect([img.width, img.height]).toEqual([8, 6]);
    for (const [x, y] of [
      [1, 1],
      [6, 1],
      [1, 4],
      [6, 4],
    ] as const)
      for (let c = 0; c < 3; c++) expect(Math.abs(img.at(x, y, c) - quadrantColour(x, y)[c]!)).toBeLessThan(0.2);
  });

  it("composites alpha over white", () => {
    const png = new PNG({ width: 2, height: 1 });
    png.data.set([255, 0, 0, 0, 255, 0, 0, 128]); // transparent red, half-transparent red
    const img = decodeImage(PNG.sync.write(png));
    expect(Array.from(img.data.subarray(0, 3))).toEqual([1, 1, 1]);
    expect(img.at(1, 0, 0)).toBeCloseTo(1, 6);
    expect(img.at(1, 0, 1)).toBeCloseTo(1 - 128 / 255, 6);
  });

  it("writes PNG that reads back bit-exactly (8-bit values)", () => {
    const img = new RgbImage(
      3,
      2,
      Float32Array.from({ length: 18 }, (_, i) => i / 17),
    );
    const path = join(mkdtempSync(join(tmpdir(), "rlvr-img-")), "x.png");
    writeImage(path, img);
    const back = readImage(path);
    for (let i = 0; i < 18; i++) expect(back.data[i]).toBeCloseTo(Math.round((i / 17) * 255) / 255, 6);
    expect(encodePng(img).equals(readFileSync(path))).toBe(true);
  });

  it("resizes bilinearly with half-pixel centres (hand-computed)", () => {
    // 2 → 4 pixels: source x = (i + 0.5) / 2 - 0.5 = -0.25 (clamped to 0), 0.25, 0.75, 1.25 (clamped to the edge)
    const img = new RgbImage(2, 1, Float32Array.of(0, 0, 0, 1, 1, 1));
    const out = resizeBilinear(img, 4, 1);
    expect([0, 1, 2, 3].map((x) => out.at(x, 0, 0))).toEqual([0, 0.25, 0.75, 1]);
    expect(resizeBilinear(img, 2, 1)).toBe(img);
  });

  it("names only its ref and size in JSON (rollout records carry references, not pixels)", () => {
    const img = new RgbImage(2, 2, undefined, "vision-scene/train/3");
    expect(JSON.parse(JSON.stringify({ images: [img] }))).toEqual({
      images: [{ ref: "vision-scene/train/3", width: 2, height: 2 }],
    });
  });

  it("refuses what is not an image, naming the file", () => {
    expect(() => decodeImage(Buffer.from("hello world"), "notes.txt")).toThrow(/notes.txt: not a PNG or JPEG/);
    const png = readFileSync(join(DIR, "quadrants.png"));
    expect(() => decodeImage(png.subarray(0, 40), "cut.png")).toThrow(ConfigError);
    expect(() => readImage(join(DIR, "missing.png"))).toThrow(/missing.png: cannot read image \(ENOENT\)/);
    expect(() => writeImage(join(tmpdir(), "x.gif"), new RgbImage(1, 1))).toThrow(/\.png, \.jpg/);
    expect(() => new RgbImage(2, 2, new Float32Array(3))).toThrow(/do not fill 2x2x3/);
  });
});

describe("COCO annotations", () => {
  const images: AnnotatedImage[] = [
    {
      file: "a.png",
      width: 64,
      height: 48,
      objects: [
        { label: "red circle", box: [10, 20, 30, 60] },
        { label: "blue square", box: [0, 0, 5, 5] },
      ],
    },
    { file: "b.png", width: 64, height: 48, objects: [{ label: "red circle", box: [1, 2, 3, 4], score: 0.5 }] },
  ];

  it("writes xywh boxes, areas and categories numbered in first-seen order", () => {
    const doc = toCoco(images);
    expect(doc.categories).toEqual([
      { id: 1, name: "red circle" },
      { id: 2, name: "blue square" },
    ]);
    expect(doc.annotations[0]).toEqual({
      id: 1,
      image_id: 1,
      category_id: 1,
      bbox: [10, 20, 20, 40],
      area: 800,
      iscrowd: 0,
    });
    expect(doc.annotations[2]!.score).toBe(0.5);
  });

  it("reads back what it writes, through a file", () => {
    const path = join(mkdtempSync(join(tmpdir(), "rlvr-coco-")), "ann.json");
    writeCoco(path, images);
    expect(readCoco(path)).toEqual(images);
  });

  it("refuses dangling ids and bad boxes, naming the entry", () => {
    const doc = toCoco(images);
    expect(() => fromCoco({ ...doc, annotations: [{ ...doc.annotations[0]!, image_id: 9 }] }, "x.json")).toThrow(
      /x.json: annotations\[0\] names image_id 9/,
    );
    expect(() => fromCoco({ ...doc, annotations: [{ ...doc.annotations[0]!, bbox: [0, 0, -1, 2] }] })).toThrow(
      /bbox must be/,
    );
    expect(() => fromCoco({ images: [] })).toThrow(/"images" and "annotations"/);
  });
});
