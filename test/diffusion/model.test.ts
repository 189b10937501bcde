/**
 * The masked-diffusion LM (src/models/diffusion-lm.ts) and the LLaDA objective (diffusion-objective.ts):
 * bidirectional attention, the autoregressive path unchanged, checkpoints with the model kind, LoRA, the loss against
 * a hand computation, and its gradient by finite differences.
 */
import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyLoRA, noGrad, type Tensor } from "../../src/engine/index.js";
import {
  DiffusionLM,
  createDiffusionModel,
  createModel,
  drawMask,
  isDiffusionLM,
  lladaLoss,
  loadModel,
  maskedDiffusionLoss,
  saveModel,
  type MaskedBatch,
} from "../../src/models/index.js";
import { Rng } from "../../src/util/index.js";
import { gradcheck } from "../engine/gradcheck.js";

const micro = (seed = 1) => createDiffusionModel("micro-char", new Rng(seed), { nLayers: 1 });

describe("DiffusionLM", () => {
  it("adds the mask token as the id after the tokenizer's vocabulary", () => {
    const { model, tokenizer } = micro();
    expect(model.maskId).toBe(tokenizer.vocabSize);
    expect(model.config.vocabSize).toBe(tokenizer.vocabSize + 1);
    expect(isDiffusionLM(model)).toBe(true);
    expect(isDiffusionLM(createModel("micro-char", new Rng(1)).model)).toBe(false);
  });

  it("sees future tokens: changing a later token changes an earlier logit (the decoder's does not)", () => {
    const { model } = micro();
    const a = Int32Array.from([5, 9, 14, 20]);
    const b = Int32Array.from([5, 9, 14, 40]);
    const first = (m: { forward(ids: Int32Array, B: number, T: number): Tensor }, ids: Int32Array) =>
      Array.from(noGrad(() => m.forward(ids, 1, 4)).data.slice(0, 100));
    const diff = (x: number[], y: number[]) => Math.max(...x.map((v, i) => Math.abs(v - y[i]!)));
    expect(diff(first(model, a), first(model, b))).toBeGreaterThan(1e-4);
    const ar = createModel("micro-char", new Rng(1), { nLayers: 1 }).model;
    expect(diff(first(ar, a), first(ar, b))).toBe(0);
  });

  it("has the same weights as the decoder of its vocabulary (same init stream), only attention differs", () => {
    const { model } = micro(7);
    const ar = createModel("micro-char", new Rng(7), { nLayers: 1, vocabSize: model.config.vocabSize }).model;
    expect(model.namedParameters().map(([n]) => n)).toEqual(ar.namedParameters().map(([n]) => n));
    // the last position attends to everything in both, so its logits agree
    const ids = Int32Array.from([5, 9, 14]);
    const last = (m: { forward(ids: Int32Array, B: number, T: number): Tensor }) =>
      Array.from(noGrad(() => m.forward(ids, 1, 3)).data.slice(2 * model.config.vocabSize));
    const d = last(model).map((v, i) => Math.abs(v - last(ar)[i]!));
    expect(Math.max(...d)).toBeLessThan(1e-5);
  });

  it("refuses a KV cache", () => {
    const { model } = micro();
    expect(() => noGrad(() => model.forward(Int32Array.from([5]), 1, 1, { cache: model.newCache(1, 4) }))).toThrow(
      /no KV cache/,
    );
  });

  it("round-trips through a checkpoint, which records the kind and the mask id; LoRA merges", () => {
    const { model, tokenizer } = micro(3);
    applyLoRA(model, { rank: 2, targets: ["qProj", "vProj"], rng: new Rng(4) });
    const dir = mkdtempSync(join(tmpdir(), "rlvr-dlm-"));
    saveModel(dir, model, tokenizer);
    const cfg = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
    expect(cfg).toMatchObject({ rlvr_model_kind: "diffusion", rlvr_mask_token_id: 99, vocab_size: 100 });
    const back = loadModel(dir);
    expect(back.model).toBeInstanceOf(DiffusionLM);
    expect((back.model as DiffusionLM).maskId).toBe(99);
    const ids = Int32Array.from([5, 99, 99, 20]);
    const a = noGrad(() => model.eval().forward(ids, 1, 4));
    const b = noGrad(() => back.model.forward(ids, 1, 4));
    expect(Math.max(...Array.from(a.data).map((v, i) => Math.abs(v - b.data[i]!)))).toBeLessThan(1e-5);
  });

  it("an autoregressive checkpoint's config.json has no kind fields (unchanged format)", () => {
    const { model, tokenizer } = createModel("micro-char", new Rng(3), { nLayers: 1 });
    const dir = mkdtempSync(join(tmpdir(), "rlvr-ar-"));
    saveModel(dir, model, tokenizer);
    const cfg = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
    expect(cfg.rlvr_model_kind).toBeUndefined();
    expect(cfg.architectures).toEqual(["LlamaForCausalLM"]);
  });
});

describe("LLaDA objective", () => {
  const batch = (maskable: number[]): MaskedBatch => ({
    ids: Int32Array.from([5, 9, 14, 20, 30, 31]),
    batch: 2,
    seqLen: 3,
    maskable: Uint8Array.from(maskable),
  });

  it("masks only maskable tokens, about t of them, and weights 1/(t·L_b·B)", () => {
    const b: MaskedBatch = {
      ids: new Int32Array(2000).fill(7),
      batch: 2,
      seqLen: 1000,
      maskable: Uint8Array.from({ length: 2000 }, (_, k) => (k % 1000 < 500 ? 0 : 1)),
    };
    const d = drawMask(b, 99, new Rng(0), [0.2, 0.8]);
    const count = (r: number) => d.inputs.slice(r * 1000, (r + 1) * 1000).filter((x) => x === 99).length;
    expect(d.inputs.slice(0, 500).every((x) => x === 7)).toBe(true);
    expect(count(0) / 500).toBeCloseTo(0.2, 1);
    expect(count(1) / 500).toBeCloseTo(0.8, 1);
    const k = d.inputs.indexOf(99);
    expect(d.targets[k]).toBe(7);
    expect(d.weights[k]).toBeCloseTo(1 / (0.2 * 500 * 2), 8);
  });

  it("equals a hand computation of Σ −log p / (t·L_b·B) over the masked tokens", () => {
    const { model } = micro(2);
    model.eval();
    const b = batch([0, 1, 1, 0, 0, 1]);
    const d = drawMask(b, model.maskId, new Rng(5), [1, 0.5]); // t = 1 masks every maskable token of row 0
    const loss = noGrad(() => maskedDiffusionLoss(model, b, d)).item();
    const logits = noGrad(() => model.forward(d.inputs, 2, 3)).data;
    const V = model.config.vocabSize;
    let hand = 0;
    for (let k = 0; k < 6; k++) {
      if (d.targets[k] === -100) continue;
      const row = Array.from(logits.slice(k * V, (k + 1) * V));
      const mx = Math.max(...row);
      const lse = mx + Math.log(row.reduce((s, v) => s + Math.exp(v - mx), 0));
      const r = k < 3 ? 0 : 1;
      const L = r === 0 ? 2 : 1;
      hand += (lse - row[d.targets[k]!]!) / ([1, 0.5][r]! * L * 2);
    }
    expect(d.inputs[1]).toBe(model.maskId);
    expect(d.inputs[2]).toBe(model.maskId);
    expect(hand).toBeGreaterThan(0);
    expect(loss).toBeCloseTo(hand, 4);
  });

  it("is a seeded draw: same rng, same loss; another rng, another mask", () => {
    const { model } = micro(2);
    model.eval();
    const b = batch([1, 1, 1, 1, 1, 1]);
    const l = (s: number) => noGrad(() => lladaLoss(model, b, new Rng(s))).item();
    expect(l(3)).toBe(l(3));
    const masks = new Set([0, 1, 2, 3, 4, 5].map((s) => drawMask(b, 99, new Rng(s)).inputs.join(",")));
    expect(masks.size).toBeGreaterThan(1);
  });

  it("has the gradient finite differences give (final norm weight and token embedding)", () => {
    const { model } = micro(4);
    model.eval();
    const b = batch([1, 1, 1, 0, 1, 1]);
    const d = drawMask(b, model.maskId, new Rng(1), [0.9, 0.7]);
    gradcheck(
      (w) => {
        model.norm.weight = w;
        return maskedDiffusionLoss(model, b, d);
      },
      [{ data: Array.from(model.norm.weight.data), shape: [...model.norm.weight.shape] }],
      { step: 1e-2, atol: 1e-3, rtol: 3e-2 },
    );
    const emb = model.embedTokens.weight;
    const rows = emb.shape[0]!;
    const cols = emb.shape[1]!;
    const orig = Float32Array.from(emb.data);
    gradcheck(
      (w) => {
        model.embedTokens.weight = w;
        return maskedDiffusionLoss(model, b, d);
      },
      [{ data: Array.from(orig), shape: [rows, cols] }],
      { step: 1e-2, atol: 1e-3, rtol: 3e-2 },
    );
  });
});
