/** nn modules: Module base class, Linear, Embedding, LayerNorm, RMSNorm, LoRA. */
export * from "./module.js";
export * from "./linear.js";
export * from "./norm.js";
export * from "./lora.js";
