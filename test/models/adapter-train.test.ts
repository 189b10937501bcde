/**
 * LoRA in the trainer (`lora` in a recipe; src/trainer/warm-start.ts): SFT trains an adapter that is merged into the
 * start model, RL trains a fresh adapter on that start, each checkpoint carries the RL adapter in adapter/ naming the
 * start by hash, and a run resumed from such a checkpoint ends with the same weights as an uninterrupted one.
 */
import { describe, expect, it } from "vitest";
import { existsSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { noGrad } from "../../src/engine/index.js";
import { baseWeightsHash, loraLayers, readAdapterConfig } from "../../src/models/adapter.js";
import { loadModel, loadModelWithAdapter } from "../../src/models/checkpoint.js";
import type { Transformer } from "../../src/models/transformer.js";
import { resolveConfig } from "../../src/trainer/recipe.js";
import { buildModel } from "../../src/trainer/model-setup.js";
import { train } from "../../src/trainer/train.js";

const config = (outDir: string) =>
  resolveConfig({
    name: "lora-run",
    outDir,
    seed: 7,
    model: { type: "new", dModel: 16, nLayers: 1, nHeads: 2, maxSeqLen: 32 },
    task: { name: "addition", options: { maxDigits: 1 }, trainExamples: 40, testExamples: 4 },
    lora: { rank: 2, alpha: 4, targets: ["qProj", "vProj", "upProj"] },
    algorithm: { loss: { entropyCoef: 0.05 } }, // a gradient even when every reward in a group is equal
    sft: { enabled: true, steps: 3, batchSize: 4, lr: 0.05 },
    train: { steps: 4, promptsPerStep: 2, groupSize: 4, maxCompletionTokens: 6, lr: 0.05 },
    eval: { every: 0, examples: 4, atStart: false },
    checkpoint: { every: 2, keepLast: 3, keepBest: false },
    log: { progress: false, sampleGroups: 0 },
  });

const ids = Int32Array.from([5, 9, 14, 20, 3, 7]);
const logits = (m: Transformer) => Array.from(noGrad(() => m.eval().forward(ids, 2, 3)).data);
const weight = (m: Transformer, name: string) => Array.from(m.namedParameters().find(([n]) => n === name)![1].data);

describe("LoRA training runs", () => {
  it("SFT trains only adapters (merged into the start); RL's adapter is saved apart, on the start as its base", async () => {
    const c = config(mkdtempSync(join(tmpdir(), "rlvr-lora-run-")));
    const res = await train(c, { warn: () => {} });
    const ck = join(res.runDir, "checkpoints");
    const init = buildModel(c.model, c.seed).model;
    const start = loadModel(join(ck, "start")).model;
    expect(existsSync(join(ck, "start", "adapter"))).toBe(false); // the start is a plain, merged model
    // SFT moved the adapted layers (merged in), and nothing else
    expect(weight(start, "layers.0.selfAttn.qProj.weight")).not.toEqual(weight(init, "layers.0.selfAttn.qProj.weight"));
    for (const n of ["layers.0.selfAttn.kProj.weight", "layers.0.mlp.downProj.weight", "embedTokens.weight"])
      expect(weight(start, n), n).toEqual(weight(init, n));
    // RL's adapters: in step-4/adapter, based on the start, and they moved the policy
    const adapter = join(ck, "step-4", "adapter");
    expect(readAdapterConfig(adapter)).toMatchObject({ r: 2, lora_alpha: 4, rlvr_base_sha256: baseWeightsHash(start) });
    const unmerged = loadModelWithAdapter(join(ck, "start"), adapter).model;
    expect(loraLayers(unmerged)).toHaveLength(3);
    const merged = loadModel(join(ck, "step-4")).model;
    const [a, b] = [logits(unmerged), logits(merged)];
    for (let i = 0; i < a.length; i++) expect(b[i]).toBeCloseTo(a[i]!, 4);
    expect(logits(start)).not.toEqual(a);
    for (const n of ["layers.0.selfAttn.kProj.weight", "layers.0.mlp.downProj.weight"])
      expect(weight(merged, n), n).toEqual(weight(start, n));
  });

  it("a LoRA run resumed at step 2 ends with the weights of an uninterrupted run", async () => {
    const whole = config(mkdtempSync(join(tmpdir(), "rlvr-lora-whole-")));
    const resWhole = await train(whole, { warn: () => {} });
    const split = config(mkdtempSync(join(tmpdir(), "rlvr-lora-split-")));
    await train(split, { stopAfter: 2, warn: () => {} });
    const resSplit = await train(split, { warn: () => {} });
    expect(resSplit.step).toBe(4);
    const a = loadModel(join(resWhole.runDir, "checkpoints", "step-4")).model;
    const b = loadModel(join(resSplit.runDir, "checkpoints", "step-4")).model;
    for (const [n, p] of a.namedParameters()) expect(weight(b, n), n).toEqual(Array.from(p.data));
  });
});
