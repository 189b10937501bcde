/**
 * The vision-language model (src/models/vision-lm.ts, vision-encoder.ts): image tokens enter only at their
 * placeholders (causal attention leaves earlier positions untouched), placeholder counts are checked, the vision ids
 * are never sampled, a finite-difference check of a patch-embedding gradient, and a checkpoint round trip.
 */
import { describe, expect, it } from "vitest";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { backward, crossEntropy, noGrad, reshape } from "../../src/engine/index.js";
import { loadModel, saveModel } from "../../src/models/checkpoint.js";
import { createModel } from "../../src/models/registry.js";
import { CharTokenizer } from "../../src/models/tokenizer.js";
import { parseVisionConfig, tokensPerImage } from "../../src/models/vision-config.js";
import {
  VisionLanguageModel,
  VisionTokenizer,
  countImageMarkers,
  newVisionLM,
  videoPrompt,
} from "../../src/models/vision-lm.js";
import { loadHfTokenizer } from "../../src/models/hf-tokenizer.js";
import { Rng } from "../../src/util/rng.js";
import { RgbImage } from "../../src/util/image.js";

const DECODER = { arch: "llama" as const, dModel: 32, nLayers: 2, nHeads: 4, nKvHeads: 2, dFf: 64, maxSeqLen: 128 };
const VISION = { imageSize: 8, patchSize: 2, mergeSize: 2, dModel: 16, nLayers: 1, nHeads: 2, dFf: 32 };

function noise(seed: number, w = 10, h = 7): RgbImage {
  const rng = new Rng(seed);
  return new RgbImage(
    w,
    h,
    Float32Array.from({ length: w * h * 3 }, () => rng.random()),
    `noise/${seed}`,
  );
}

function build() {
  return newVisionLM(DECODER, VISION, new CharTokenizer(), new Rng(3));
}

describe("vision config", () => {
  it("counts image tokens and rejects sizes the patches do not tile", () => {
    expect(tokensPerImage(parseVisionConfig(VISION))).toBe(4); // (8 / 2 / 2)^2
    expect(tokensPerImage(parseVisionConfig({}))).toBe(16); // defaults: (32 / 4 / 2)^2
    expect(() => parseVisionConfig({ imageSize: 10, patchSize: 4 })).toThrow(/vision.imageSize: .*multiple of/);
    expect(() => parseVisionConfig({ dModel: 30, nHeads: 4 })).toThrow(/vision.nHeads/);
  });
});

describe("VisionTokenizer", () => {
  it("expands <image> into start, pads and end, and decodes them away", () => {
    const { model, tokenizer } = build();
    const { start, end, pad } = model.visionIds;
    expect([start, end, pad]).toEqual([99, 100, 101]);
    const ids = tokenizer.encode("a<image>b");
    expect(ids).toEqual([...tokenizer.base.encode("a"), start, pad, pad, pad, pad, end, ...tokenizer.base.encode("b")]);
    expect(tokenizer.decode(ids)).toBe("ab");
    expect(countImageMarkers(videoPrompt([0, 0.5]))).toBe(2);
    expect(videoPrompt([0, 0.5])).toBe("t=0.0s <image>\nt=0.5s <image>\n");
  });
});

describe("VisionLanguageModel", () => {
  it("image tokens change logits from their placeholders on, never before", () => {
    const { model, tokenizer } = build();
    const ids = [tokenizer.bosId!, ...tokenizer.encode("look <image> now")];
    const firstPad = ids.indexOf(model.visionIds.pad);
    const run = (img: RgbImage) =>
      noGrad(() => model.forward(Int32Array.from(ids), 1, ids.length, { images: [[img]] })).data;
    const a = run(noise(1)),
      b = run(noise(2));
    const v = model.config.vocabSize;
    const diffAt = (t: number) =>
      Math.max(...Array.from({ length: v }, (_, j) => Math.abs(a[t * v + j]! - b[t * v + j]!)));
    for (let t = 0; t < firstPad; t++) expect(diffAt(t)).toBe(0);
    for (let t = firstPad; t < ids.length; t++) expect(diffAt(t)).toBeGreaterThan(1e-6);
  });

  it("gives the vision ids -1e9, so sampling never draws them", () => {
    const { model, tokenizer } = build();
    const ids = Int32Array.from(tokenizer.encode("hi"));
    const logits = noGrad(() => model.forward(ids, 1, ids.length)).data;
    const v = model.config.vocabSize;
    for (const id of [99, 100, 101]) expect(logits[v + id]).toBeLessThan(-1e8);
  });

  it("checks placeholders against images, row by row", () => {
    const { model, tokenizer } = build();
    const ids = Int32Array.from(tokenizer.encode("<image><image>"));
    expect(() => model.forward(ids, 1, ids.length, { images: [[noise(1)]] })).toThrow(
      /row 0 has 8 image pad tokens but 1 image\(s\) of 4 tokens/,
    );
    expect(() => model.forward(ids, 1, ids.length)).toThrow(/row 0 has 8 image pad tokens but 0 image/);
    expect(() => model.forward(ids, 1, ids.length, { images: [[], []] })).toThrow(/images for 2 rows, batch is 1/);
    const text = createModel("micro-char", new Rng(0)).model;
    expect(() => text.forward(Int32Array.of(5, 6), 1, 2, { images: [[noise(1)]] })).toThrow(/text-only model/);
  });

  it("back-propagates into the patch embedding (finite differences)", () => {
    const { model, tokenizer } = build();
    const ids = Int32Array.from([1, ...tokenizer.encode("<image>ok")]);
    const targets = Int32Array.from(ids, (_, t) => (t + 1 < ids.length && ids[t + 1]! < 99 ? ids[t + 1]! : -100));
    const images = [[noise(4)]];
    const lossOf = () =>
      crossEntropy(reshape(model.forward(ids, 1, ids.length, { images }), [ids.length, 102]), targets, {
        ignoreIndex: -100,
      });
    const loss = lossOf();
    backward(loss);
    const w = model.visual.patchEmbed.weight;
    for (const i of [0, 7, 40]) {
      const g = w.grad![i]!;
      const h = 1e-2;
      const keep = w.data[i]!;
      w.data[i] = keep + h;
      const up = noGrad(lossOf).item();
      w.data[i] = keep - h;
      const down = noGrad(lossOf).item();
      w.data[i] = keep;
      expect(Math.abs((up - down) / (2 * h) - g)).toBeLessThan(2e-3 + 0.02 * Math.abs(g));
    }
    expect(Math.max(...Array.from(w.grad!, Math.abs))).toBeGreaterThan(1e-4);
  });

  it("saves and loads in the decoder's checkpoint format, with the encoder beside it", () => {
    const { model, tokenizer } = build();
    const dir = mkdtempSync(join(tmpdir(), "rlvr-vlm-"));
    saveModel(dir, model, tokenizer);
    const loaded = loadModel(dir);
    expect(loaded.model).toBeInstanceOf(VisionLanguageModel);
    const m2 = loaded.model as VisionLanguageModel;
    expect(m2.visual.config).toEqual(model.visual.config);
    const ids = Int32Array.from(tokenizer.encode("x<image>y"));
    const images = [[noise(9)]];
    const a = noGrad(() => model.eval().forward(ids, 1, ids.length, { images })).data;
    const b = noGrad(() => m2.forward(ids, 1, ids.length, { images })).data;
    expect(Array.from(b)).toEqual(Array.from(a));
    expect(m2.tokenizerFor(loaded.tokenizer).encode("<image>")).toEqual(tokenizer.encode("<image>"));
  });

  it("saves a Hugging Face text tokenizer as tokenizer.json under the vision wrapper", () => {
    const hf = loadHfTokenizer(join(import.meta.dirname, "..", "fixtures", "parity", "llama", "tokenizer.json"), {
      eosId: 297,
    });
    const { model, tokenizer } = newVisionLM(DECODER, VISION, hf, new Rng(5));
    const dir = mkdtempSync(join(tmpdir(), "rlvr-vlm-hf-"));
    saveModel(dir, model, tokenizer);
    expect(existsSync(join(dir, "tokenizer.json"))).toBe(true);
    const loaded = loadModel(dir);
    expect(loaded.tokenizer).toBeInstanceOf(VisionTokenizer);
    expect(loaded.tokenizer.encode("Hello <image>")).toEqual(tokenizer.encode("Hello <image>"));
    expect(loaded.tokenizer.decode(tokenizer.encode("Hello <image> world"))).toBe("Hello  world");
  });
});
