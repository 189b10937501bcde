/**
 * The recipe memory estimate (issue 11, item 9): its parameter count is exact against real models of both shapes,
 * its parts are hand-checked on one small recipe, every shipped recipe fits, and a recipe too large is refused
 * with the estimate, the limit and the field that drives it (the one furthest above its default).
 */
import { describe, expect, it } from "vitest";
import { readdirSync } from "node:fs";
import { totalmem } from "node:os";
import { join, resolve } from "node:path";
import { Rng } from "../../src/util/index.js";
import { Transformer } from "../../src/models/transformer.js";
import { parameterCount, parseTransformerConfig, type TransformerConfigInput } from "../../src/models/config.js";
import { estimateMemory, fmtBytes, memoryProblems, modelConfigOf } from "../../src/trainer/memory-estimate.js";
import { loadRecipe, resolveConfig } from "../../src/trainer/recipe.js";

const ROOT = resolve(import.meta.dirname, "../..");
const base = {
  name: "mem",
  outDir: "/tmp/rlvr-mem-unused",
  model: { type: "new", dModel: 16, nLayers: 1, nHeads: 2, maxSeqLen: 32 },
  task: { name: "addition", options: { maxDigits: 1 }, trainExamples: 10, testExamples: 4 },
  train: { promptsPerStep: 2, groupSize: 4, maxCompletionTokens: 8, microBatchSize: 4 },
  algorithm: { kl: { beta: 0 } },
  eval: { examples: 4 },
};

describe("parameterCount", () => {
  const shapes: Array<[string, TransformerConfigInput]> = [
    [
      "gpt2, tied",
      { arch: "gpt2", vocabSize: 50, dModel: 16, nLayers: 2, nHeads: 2, nKvHeads: 2, dFf: 40, maxSeqLen: 12 },
    ],
    [
      "gpt2, untied",
      {
        arch: "gpt2",
        vocabSize: 50,
        dModel: 16,
        nLayers: 1,
        nHeads: 4,
        nKvHeads: 4,
        dFf: 64,
        maxSeqLen: 9,
        tieEmbeddings: false,
      },
    ],
    [
      "llama, GQA",
      {
        arch: "llama",
        vocabSize: 70,
        dModel: 32,
        nLayers: 2,
        nHeads: 4,
        nKvHeads: 2,
        dFf: 48,
        maxSeqLen: 16,
        tieEmbeddings: false,
      },
    ],
    [
      "qwen2 biases, head_dim set",
      {
        arch: "llama",
        vocabSize: 30,
        dModel: 24,
        nLayers: 3,
        nHeads: 3,
        nKvHeads: 1,
        headDim: 10,
        dFf: 20,
        maxSeqLen: 8,
        qkvBias: true,
      },
    ],
  ];
  it.each(shapes)("%s: equals the parameters a real model has", (_name, input) => {
    const c = parseTransformerConfig(input);
    const real = new Transformer(c, new Rng(0)).namedParameters().reduce((n, [, p]) => n + p.data.length, 0);
    expect(parameterCount(c)).toBe(real);
  });
});

describe("estimateMemory", () => {
  it("adds up the hand-computed parts of a small recipe", () => {
    const c = resolveConfig(base);
    const m = modelConfigOf(c)!;
    const P = parameterCount(m);
    const est = estimateMemory(c, m, 10, 300);
    const T = 18; // 10 prompt tokens + 8 completion tokens, under maxSeqLen 32
    expect(est.tensors[0]!.bytes).toBe(4 * P * 4); // weights, gradients, Adam m and v
    expect(est.tensors[1]!.bytes).toBe(0); // beta 0: no reference
    expect(est.tensors[2]!.bytes).toBe(4 * 2 * 1 * 8 * 2 * T * 8 + 4 * 8 * (m.vocabSize + 2 * T)); // K and V: (L, B, Hkv, T, hd)
    expect(est.tensors[3]!.bytes).toBe(4 * 4 * T * (1 * (10 * 16 + 4 * 64 + 2 * 2 * T) + 3 * m.vocabSize));
    expect(est.heap[0]!.bytes).toBe(8 * (1024 + 40 * T));
    expect(est.heap[1]!.bytes).toBe(14 * 300);
    expect(est.tensorLimit).toBe(totalmem());
  });
  it("grows linearly with groupSize in the sampling parts", () => {
    const m = modelConfigOf(resolveConfig(base))!;
    const at = (g: number) =>
      estimateMemory(resolveConfig({ ...base, train: { ...base.train, groupSize: g } }), m, 10, 300);
    const [a, b] = [at(4), at(8)];
    expect(b.heap[0]!.bytes).toBe(2 * a.heap[0]!.bytes);
    expect(b.tensors[0]!.bytes).toBe(a.tensors[0]!.bytes);
  });
  it("every shipped recipe fits this machine", () => {
    for (const f of readdirSync(join(ROOT, "recipes")).filter((n) => n.endsWith(".yaml"))) {
      expect(() => loadRecipe(join(ROOT, "recipes", f)), f).not.toThrow();
    }
  });
});

describe("memoryProblems", () => {
  it("refuses groupSize 1e8 naming train.groupSize, the estimate and both limits", () => {
    const c = resolveConfig(base);
    const probs = memoryProblems({ ...c, train: { ...c.train, groupSize: 1e8 } });
    expect(probs.map((p) => p.path)).toEqual(["train.groupSize", "train.groupSize"]);
    expect(probs[0]!.message).toMatch(
      /needs about [\d.]+ GiB of tensor memory, more than the limit of .* \(os\.totalmem\(\)\): the KV cache/,
    );
    expect(probs[1]!.message).toMatch(
      /of JS heap, more than the limit .*V8 heap limit.*rollout records of one step \(200000000 rows\)/,
    );
  });
  it("names the field furthest above its default among those that drive the largest part", () => {
    const c = resolveConfig(base);
    expect(memoryProblems({ ...c, train: { ...c.train, promptsPerStep: 1e8 } })[0]!.path).toBe("train.promptsPerStep");
    expect(memoryProblems({ ...c, task: { ...c.task, trainExamples: 1e11 } })[0]!.path).toBe("task.trainExamples");
  });
  it("is empty for a recipe that fits, and resolveConfig refuses one that does not", () => {
    expect(memoryProblems(resolveConfig(base))).toEqual([]);
    expect(() => resolveConfig({ ...base, train: { ...base.train, groupSize: 1e8 } })).toThrow(
      /train\.groupSize: the recipe needs about/,
    );
  });
  it("formats sizes", () => {
    expect([fmtBytes(512), fmtBytes(1536), fmtBytes(3 * 2 ** 30), fmtBytes(2 ** 50)]).toEqual([
      "512 B",
      "1.5 KiB",
      "3.0 GiB",
      "1.0 PiB",
    ]);
  });
});
