/**
 * Named built-in model configs (an open set: `registerModel` rejects duplicate names). Each pairs a transformer
 * config with the char tokenizer, for the built-in tasks; real pretrained models load from a checkpoint
 * directory instead (./checkpoint.ts).
 */
import { ConfigError, type Rng } from "../util/index.js";
import { parseTransformerConfig, type TransformerConfigInput } from "./config.js";
import { CharTokenizer, type Tokenizer } from "./tokenizer.js";
import { Transformer } from "./transformer.js";

/** A registered model: a config (vocabSize comes from the tokenizer) and what it is for. */
export interface ModelSpec {
  name: string;
  description: string;
  config: Omit<TransformerConfigInput, "vocabSize">;
}

const specs = new Map<string, ModelSpec>();

/** Adds a named model; a second registration under the same name throws. */
export function registerModel(spec: ModelSpec): void {
  if (specs.has(spec.name)) throw new ConfigError(`registerModel: a model named "${spec.name}" is already registered`);
  specs.set(spec.name, spec);
}

/** Every registered model, in registration order. */
export function listModels(): ModelSpec[] {
  return [...specs.values()];
}

/** The registered spec of `name`; an unknown name is a ConfigError listing the registered ones. */
export function getModelSpec(name: string): ModelSpec {
  const spec = specs.get(name);
  if (!spec) throw new ConfigError(`unknown model "${name}"; registered: ${[...specs.keys()].join(", ")}`);
  return spec;
}

/** A freshly initialised model of the named spec with the char tokenizer. */
export function createModel(
  name: string,
  rng: Rng,
  overrides: Partial<TransformerConfigInput> = {},
): { model: Transformer; tokenizer: Tokenizer } {
  const spec = getModelSpec(name);
  const tokenizer = new CharTokenizer();
  const config = parseTransformerConfig({ ...spec.config, vocabSize: tokenizer.vocabSize, ...overrides });
  return { model: new Transformer(config, rng), tokenizer };
}

registerModel({
  name: "tiny-char",
  description: "Llama-shaped char model, ~1.3M parameters (4 layers, d 160, GQA 4/2): the built-in tasks' default",
  config: {
    arch: "llama",
    dModel: 160,
    nLayers: 4,
    nHeads: 4,
    nKvHeads: 2,
    dFf: 512,
    maxSeqLen: 256,
    tieEmbeddings: true,
  },
});
registerModel({
  name: "tiny-char-gpt",
  description: "GPT-2-shaped char model, ~1.3M parameters (4 layers, d 160, 4 heads)",
  config: {
    arch: "gpt2",
    dModel: 160,
    nLayers: 4,
    nHeads: 4,
    nKvHeads: 4,
    dFf: 640,
    maxSeqLen: 256,
    tieEmbeddings: true,
  },
});
registerModel({
  name: "micro-char",
  description: "Llama-shaped char model, ~22k parameters, for fast tests",
  config: {
    arch: "llama",
    dModel: 32,
    nLayers: 2,
    nHeads: 4,
    nKvHeads: 2,
    dFf: 64,
    maxSeqLen: 128,
    tieEmbeddings: true,
  },
});
