/**
 * LoRA adapters saved apart from their base (src/models/adapter.ts): the PEFT layout, save → load onto the base gives
 * the in-memory model's logits bit for bit, merging gives the same logits as the unmerged model, the wrong base is a
 * clear error, and a checkpoint of a LoRA model carries its adapter folder.
 */
import { describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyLoRA, mergeLoRA, noGrad, readSafetensors } from "../../src/engine/index.js";
import {
  ADAPTER_CONFIG,
  ADAPTER_WEIGHTS,
  baseWeightsHash,
  loadAdapter,
  loraLayers,
  readAdapterConfig,
  saveAdapter,
} from "../../src/models/adapter.js";
import { ADAPTER_DIR, loadModel, loadModelWithAdapter, saveModel } from "../../src/models/checkpoint.js";
import { createModel } from "../../src/models/registry.js";
import type { Transformer } from "../../src/models/transformer.js";
import { CheckpointError, Rng } from "../../src/util/index.js";

const tmp = () => mkdtempSync(join(tmpdir(), "rlvr-adapter-"));
const ids = Int32Array.from([5, 9, 14, 20, 3, 7, 11, 2]);
const logits = (m: Transformer): Float32Array => noGrad(() => m.eval().forward(ids, 2, 4)).data as Float32Array;

/** A saved base and, in memory, the same base with trained-looking (non-zero, seeded) adapters on q, v and down. */
function baseAndTuned(): {
  baseDir: string;
  tuned: Transformer;
  tokenizer: ReturnType<typeof createModel>["tokenizer"];
} {
  const { model, tokenizer } = createModel("micro-char", new Rng(3));
  const baseDir = tmp();
  saveModel(baseDir, model, tokenizer);
  applyLoRA(model, { rank: 4, alpha: 8, targets: ["qProj", "vProj", "downProj"], rng: new Rng(5) });
  const r = new Rng(9);
  for (const [, lin] of loraLayers(model))
    for (let i = 0; i < lin.loraB.size; i++) lin.loraB.data[i] = r.normal() * 0.1;
  return { baseDir, tuned: model, tokenizer };
}

describe("LoRA adapter folders (PEFT layout)", () => {
  it("writes adapter_config.json and adapter_model.safetensors with PEFT's names and shapes", () => {
    const { tuned } = baseAndTuned();
    const dir = tmp();
    saveAdapter(dir, tuned, { base: "runs/x/checkpoints/start" });
    const cfg = JSON.parse(readFileSync(join(dir, ADAPTER_CONFIG), "utf8"));
    expect(cfg).toMatchObject({
      peft_type: "LORA",
      task_type: "CAUSAL_LM",
      r: 4,
      lora_alpha: 8,
      lora_dropout: 0,
      bias: "none",
      target_modules: ["down_proj", "q_proj", "v_proj"],
      base_model_name_or_path: "runs/x/checkpoints/start",
    });
    expect(cfg.rlvr_base_sha256).toMatch(/^[0-9a-f]{64}$/);
    const t = readSafetensors(join(dir, ADAPTER_WEIGHTS)).tensors;
    // micro-char: d 32, 2 layers, 4 heads of 8 with 2 KV heads (v_proj is 16 wide), dFf 64
    expect(t["base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight"]!.shape).toEqual([4, 32]);
    expect(t["base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight"]!.shape).toEqual([32, 4]);
    expect(t["base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight"]!.shape).toEqual([16, 4]);
    expect(t["base_model.model.model.layers.1.mlp.down_proj.lora_A.weight"]!.shape).toEqual([4, 64]);
    expect(Object.keys(t)).toHaveLength(2 * 3 * 2); // A and B × 3 modules × 2 layers
  });

  it("save → load onto the base gives the in-memory LoRA model's logits exactly", () => {
    const { baseDir, tuned } = baseAndTuned();
    const dir = tmp();
    saveAdapter(dir, tuned);
    const back = loadModelWithAdapter(baseDir, dir);
    expect(loraLayers(back.model).map(([p]) => p)).toEqual(loraLayers(tuned).map(([p]) => p));
    expect(Array.from(logits(back.model))).toEqual(Array.from(logits(tuned)));
    // only the adapters train after loading, as after applyLoRA
    const trainable = back.model.namedParameters().filter(([, p]) => p.requiresGrad);
    expect(trainable.every(([n]) => /\.lora[AB]$/.test(n))).toBe(true);
    expect(trainable).toHaveLength(12);
  });

  it("the adapters change the logits (so the test above can fail), and merging keeps them", () => {
    const { baseDir, tuned } = baseAndTuned();
    const base = loadModel(baseDir).model;
    const diff = Math.max(...Array.from(logits(base), (v, i) => Math.abs(v - logits(tuned)[i]!)));
    expect(diff).toBeGreaterThan(1e-3);
    const unmerged = Array.from(logits(tuned));
    expect(mergeLoRA(tuned)).toHaveLength(6);
    const merged = logits(tuned);
    for (let i = 0; i < merged.length; i++) expect(merged[i]).toBeCloseTo(unmerged[i]!, 5);
  });

  it("refuses an adapter put on another base, naming both hashes", () => {
    const { tuned } = baseAndTuned();
    const dir = tmp();
    saveAdapter(dir, tuned);
    const other = createModel("micro-char", new Rng(4)).model;
    expect(() => loadAdapter(dir, other)).toThrow(CheckpointError);
    expect(() => loadAdapter(dir, other)).toThrow(/trained on another base.*hash/);
    // the hash is of the base weights: unchanged by adapters, changed by merging them in
    const cfg = readAdapterConfig(dir);
    expect(baseWeightsHash(tuned)).toBe(cfg.rlvr_base_sha256);
    mergeLoRA(tuned);
    expect(baseWeightsHash(tuned)).not.toBe(cfg.rlvr_base_sha256);
  });

  it("refuses a model that already has adapters, a tensor of the wrong shape, and a malformed config", () => {
    const { baseDir, tuned } = baseAndTuned();
    const dir = tmp();
    saveAdapter(dir, tuned);
    expect(() => loadAdapter(dir, tuned)).toThrow(/already has LoRA adapters/);
    const cfgPath = join(dir, ADAPTER_CONFIG);
    const good = readFileSync(cfgPath, "utf8");
    writeFileSync(cfgPath, good.replace('"r": 4', '"r": 2'));
    expect(() => loadModelWithAdapter(baseDir, dir)).toThrow(/has shape \(4, 32\) but the module needs \(2, 32\)/);
    writeFileSync(cfgPath, good.replace('"peft_type": "LORA"', '"peft_type": "IA3"'));
    expect(() => readAdapterConfig(dir)).toThrow(/peft_type must be "LORA"/);
    expect(() => readAdapterConfig(tmp())).toThrow(/no adapter_config.json/);
    expect(() => saveAdapter(tmp(), loadModel(baseDir).model)).toThrow(/no LoRA adapters/);
  });

  it("a checkpoint of a LoRA model holds the merged model and its adapter folder, which rebuilds it unmerged", () => {
    const { baseDir, tuned, tokenizer } = baseAndTuned();
    const ck = tmp();
    saveModel(ck, tuned, tokenizer);
    expect(existsSync(join(ck, ADAPTER_DIR, ADAPTER_CONFIG))).toBe(true);
    const plain = loadModel(ck).model; // merged: a plain model
    expect(loraLayers(plain)).toHaveLength(0);
    const want = logits(tuned);
    const got = logits(plain);
    for (let i = 0; i < want.length; i++) expect(got[i]).toBeCloseTo(want[i]!, 5);
    const rebuilt = loadModelWithAdapter(baseDir, join(ck, ADAPTER_DIR)).model;
    expect(Array.from(logits(rebuilt))).toEqual(Array.from(want));
    // the merged checkpoint is not the adapter's base
    expect(() => loadModelWithAdapter(ck, join(ck, ADAPTER_DIR))).toThrow(/another base/);
  });
});
