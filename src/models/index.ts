/** models layer: decoder-only transformers (GPT-2 and Llama/Qwen2 shapes), the masked-diffusion LM, tokenizers, checkpoints, registry. */
export * from "./config.js";
export { Transformer, DecoderLayer, tokenLogprobs, type ForwardOptions } from "./transformer.js";
export { KVCache } from "./kv-cache.js";
export * from "./tokenizer.js";
export * from "./hf-tokenizer.js";
export * from "./checkpoint.js";
export * from "./adapter.js";
export * from "./registry.js";
export * from "./diffusion-lm.js";
export * from "./diffusion-objective.js";
export * from "./export/index.js";
