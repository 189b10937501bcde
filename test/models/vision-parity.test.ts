/**
 * Parity of the vision-language model with PyTorch: test/fixtures/vision was made by scripts/make-parity-fixture.py
 * (--only vision; scripts/vision_fixture.py): transformers' LlamaForCausalLM as the decoder, a hand-written torch twin
 * of the encoder (a real stride-P Conv2d patch embedding, torch's attention and LayerNorm), image tokens put in with
 * masked_scatter as Qwen2-VL does. Checked on every backend: bilinear resizes, logits, loss and gradients to 1e-4.
 */
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import {
  availableBackends,
  backward,
  crossEntropy,
  readSafetensors,
  reshape,
  setBackend,
  type BackendName,
} from "../../src/engine/index.js";
import { hfName, loadModel } from "../../src/models/checkpoint.js";
import { VisionLanguageModel } from "../../src/models/vision-lm.js";
import { RgbImage, resizeBilinear } from "../../src/util/image.js";

const DIR = join(import.meta.dirname, "..", "fixtures", "vision");

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

describe.each(availableBackends() as BackendName[])("vision-language parity with PyTorch (%s backend)", (name) => {
  const exp = readSafetensors(join(DIR, "expected.safetensors")).tensors;
  const image = (i: number): RgbImage => {
    const t = exp[`image.${i}`]!;
    return new RgbImage(t.shape[1]!, t.shape[0]!, Float32Array.from(t.data), `fixture/${i}`);
  };

  it("resizes as F.interpolate(bilinear, align_corners=False)", () => {
    for (const i of [0, 1, 2]) {
      const r = exp[`resized.${i}`]!;
      const mine = resizeBilinear(image(i), r.shape[1]!, r.shape[0]!);
      expect(maxAbsDiff(mine.data, r.data)).toBeLessThan(1e-6);
    }
  });

  it("matches logits, loss and encoder and decoder gradients to 1e-4", () => {
    setBackend(name);
    const { model } = loadModel(DIR);
    expect(model).toBeInstanceOf(VisionLanguageModel);
    const [b, t] = exp["input_ids"]!.shape as [number, number];
    const ids = Int32Array.from(exp["input_ids"]!.data);
    const targets = Int32Array.from(exp["targets"]!.data);
    const logits = model.forward(ids, b, t, { images: [[image(0)], [image(1), image(2)]] }); // (B, T, V)
    const v = model.config.vocabSize;
    const want = exp["logits"]!.data;
    let worst = 0;
    for (let i = 0; i < b * t; i++)
      for (let j = 0; j < v; j++) {
        const got = logits.data[i * v + j]!;
        if (j >= v - 3)
          expect(got).toBeLessThan(-1e8); // the vision ids are never sampled
        else worst = Math.max(worst, Math.abs(got - want[i * v + j]!));
      }
    expect(worst).toBeLessThan(1e-4);
    const loss = crossEntropy(reshape(logits, [b * t, v]), targets, { ignoreIndex: -100 });
    expect(Math.abs(loss.item() - exp["loss"]!.data[0]!)).toBeLessThan(1e-4);
    backward(loss);
    const params = new Map(model.namedParameters().map(([n, p]) => [hfName(n), p]));
    const gradNames = Object.keys(exp).filter((k) => k.startsWith("grad."));
    expect(gradNames.filter((g) => g.includes("visual")).length).toBeGreaterThan(6);
    for (const g of gradNames) {
      const p = params.get(g.slice(5));
      expect(p?.grad, g).toBeTruthy();
      expect(maxAbsDiff(p!.grad!, exp[g]!.data), g).toBeLessThan(1e-4);
    }
  });
});
