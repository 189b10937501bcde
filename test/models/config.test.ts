import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fromHfConfig, parseTransformerConfig, toHfConfig } from "../../src/models/config.js";

const FIXTURES = join(import.meta.dirname, "..", "fixtures", "parity");
const readJson = (p: string) => JSON.parse(readFileSync(p, "utf8")) as Record<string, unknown>;

describe("transformer config", () => {
  it("reads a transformers-5 Llama config.json (rope_theta nested in rope_parameters)", () => {
    const c = fromHfConfig(readJson(join(FIXTURES, "llama", "config.json")));
    expect(c).toMatchObject({
      arch: "llama",
      vocabSize: 300,
      dModel: 64,
      nLayers: 2,
      nHeads: 4,
      nKvHeads: 2,
      dFf: 128,
      maxSeqLen: 128,
      ropeTheta: 10000,
      normEps: 1e-6,
      tieEmbeddings: false,
      qkvBias: false,
    });
  });
  it("reads a Qwen2 config.json as the llama shape with q/k/v biases and a tied head", () => {
    const c = fromHfConfig(readJson(join(FIXTURES, "qwen2", "config.json")));
    expect(c).toMatchObject({ arch: "llama", qkvBias: true, tieEmbeddings: true });
  });
  it("round-trips through HF field names", () => {
    const c = parseTransformerConfig({
      arch: "llama",
      vocabSize: 99,
      dModel: 32,
      nLayers: 2,
      nHeads: 4,
      nKvHeads: 2,
      dFf: 64,
      maxSeqLen: 64,
      qkvBias: true,
    });
    const hf = toHfConfig(c);
    expect(hf).toMatchObject({
      model_type: "qwen2",
      hidden_size: 32,
      num_key_value_heads: 2,
      intermediate_size: 64,
      tie_word_embeddings: true,
    });
    expect(fromHfConfig(JSON.parse(JSON.stringify(hf)))).toEqual(c);
    const g = parseTransformerConfig({
      arch: "gpt2",
      vocabSize: 99,
      dModel: 32,
      nLayers: 1,
      nHeads: 4,
      nKvHeads: 4,
      dFf: 128,
      maxSeqLen: 64,
      dropout: 0.1,
    });
    expect(fromHfConfig(JSON.parse(JSON.stringify(toHfConfig(g))))).toEqual(g);
  });
  it("names the bad field", () => {
    expect(() =>
      parseTransformerConfig({
        arch: "llama",
        vocabSize: 10,
        dModel: 30,
        nLayers: 1,
        nHeads: 4,
        nKvHeads: 3,
        dFf: 8,
        maxSeqLen: 8,
      }),
    ).toThrow(/model\.nKvHeads: nKvHeads 3 must divide nHeads 4[\s\S]*model\.nHeads/);
    expect(() => parseTransformerConfig({ arch: "bert" })).toThrow(/model\.arch/);
  });
  it("rejects HF configs it cannot run", () => {
    const base = readJson(join(FIXTURES, "llama", "config.json"));
    expect(() => fromHfConfig({ ...base, model_type: "gemma" })).toThrow(/model_type "gemma" is not supported/);
    expect(() => fromHfConfig({ ...base, rope_parameters: { rope_type: "yarn", rope_theta: 1 } })).toThrow(
      /rope scaling "yarn"/,
    );
    expect(() => fromHfConfig({ ...base, attention_bias: true })).toThrow(/attention_bias/);
  });
});
