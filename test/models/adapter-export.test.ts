/**
 * Export of LoRA models (src/models/export): an adapter folder merged on export gives the in-memory LoRA model's
 * logits, and `roundTripWeights` passes weights through the GGUF types exactly as the export stores them.
 */
import { describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyLoRA, noGrad } from "../../src/engine/index.js";
import { loraLayers, saveAdapter } from "../../src/models/adapter.js";
import { loadModel, loadModelWithAdapter, saveModel } from "../../src/models/checkpoint.js";
import { decodeQ8_0, encodeQ8_0 } from "../../src/models/export/quantize.js";
import { exportHf, roundTripWeights } from "../../src/models/export/index.js";
import { createModel } from "../../src/models/registry.js";
import type { Transformer } from "../../src/models/transformer.js";
import { Rng } from "../../src/util/index.js";

const tmp = () => mkdtempSync(join(tmpdir(), "rlvr-adapter-export-"));
const ids = Int32Array.from([5, 9, 14, 20, 3, 7, 11, 2]);
const logits = (m: Transformer): Float32Array => noGrad(() => m.eval().forward(ids, 2, 4)).data as Float32Array;

function tuned(): { baseDir: string; model: Transformer } {
  const { model, tokenizer } = createModel("micro-char", new Rng(3));
  const baseDir = tmp();
  saveModel(baseDir, model, tokenizer);
  applyLoRA(model, { rank: 4, alpha: 8, targets: ["qProj", "vProj", "downProj"], rng: new Rng(5) });
  const r = new Rng(9);
  for (const [, lin] of loraLayers(model))
    for (let i = 0; i < lin.loraB.size; i++) lin.loraB.data[i] = r.normal() * 0.1;
  return { baseDir, model };
}

describe("LoRA export", () => {
  it("base + adapter folder, merged on export, gives the in-memory LoRA model's logits", () => {
    const { baseDir, model } = tuned();
    const adapter = tmp();
    saveAdapter(adapter, model);
    const { model: withAdapter, tokenizer } = loadModelWithAdapter(baseDir, adapter);
    const out = join(tmp(), "hf");
    exportHf(out, withAdapter, tokenizer);
    const exported = loadModel(out).model;
    expect(loraLayers(exported)).toHaveLength(0);
    const want = logits(model);
    const got = logits(exported);
    for (let i = 0; i < want.length; i++) expect(got[i]).toBeCloseTo(want[i]!, 5);
  });

  it("roundTripWeights q8_0: matrices take the Q8_0 values, 1-D norms stay, LoRA is merged first", () => {
    const { model } = tuned();
    const before = new Map(model.namedParameters().map(([n, p]) => [n, Float32Array.from(p.data)]));
    const report = roundTripWeights(model, "q8_0");
    expect(loraLayers(model)).toHaveLength(0);
    // micro-char: every matrix row is 32 or 64 wide (a multiple of 32), so no F16 fallback; 5 norms stay F32
    expect(report).toMatchObject({ f16: 0, f32: 5 });
    expect(report.q8_0).toBe(model.namedParameters().length - 5);
    for (const [name, p] of model.namedParameters()) {
      if (p.shape.length === 1) expect(Array.from(p.data)).toEqual(Array.from(before.get(name)!));
    }
    const emb = model.namedParameters().find(([n]) => n === "embedTokens.weight")![1];
    const raw = before.get("embedTokens.weight")!;
    expect(Array.from(emb.data)).toEqual(Array.from(decodeQ8_0(encodeQ8_0(raw))));
    // a Q8_0 value is within half a step (max|x| / 127 / 2 per block) of the original
    expect(report.maxAbsError).toBeGreaterThan(0);
    expect(report.maxAbsError).toBeLessThan(0.01);
  });

  it("roundTripWeights f32 changes nothing but merging; f16 changes matrices by at most 2^-11 relative", () => {
    const { model } = tuned();
    const want = Array.from(logits(model));
    expect(roundTripWeights(model, "f32")).toMatchObject({ q8_0: 0, f16: 0, maxAbsError: 0 });
    const got = logits(model);
    for (let i = 0; i < want.length; i++) expect(got[i]).toBeCloseTo(want[i]!, 5);
    const before = model.namedParameters().map(([, p]) => Float32Array.from(p.data));
    expect(roundTripWeights(model, "f16").f16).toBeGreaterThan(0);
    model.namedParameters().forEach(([, p], k) => {
      for (let i = 0; i < p.data.length; i++) {
        expect(Math.abs(p.data[i]! - before[k]![i]!)).toBeLessThanOrEqual(Math.abs(before[k]![i]!) * 2 ** -11 + 1e-7);
      }
    });
  });
});
