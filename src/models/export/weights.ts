/**
 * A model's weights as plain float32 arrays keyed by rlvr parameter name, with LoRA adapters merged
 * (W + (alpha/r) B A, as `saveModel` does), and the diffusion-LM refusal shared by every export format.
 */
import { ConfigError } from "../../util/index.js";
import { LoRALinear } from "../../engine/index.js";
import { isDiffusionLM } from "../diffusion-lm.js";
import type { Transformer } from "../transformer.js";

/** One weight: row-major float32 data and its PyTorch-order shape. */
export interface PlainWeight {
  data: Float32Array;
  shape: number[];
}

/** Every parameter of `model` except LoRA factors; LoRA-wrapped linears give their merged weight. */
export function plainWeights(model: Transformer): Map<string, PlainWeight> {
  if (isDiffusionLM(model))
    throw new ConfigError("export: masked-diffusion LMs have no llama.cpp or transformers equivalent");
  const out = new Map<string, PlainWeight>();
  for (const [name, t] of model.namedParameters()) {
    if (!/\.lora[AB]$/.test(name)) out.set(name, { data: t.data, shape: [...t.shape] });
  }
  for (const [path, mod] of model.namedModules()) {
    if (!(mod instanceof LoRALinear)) continue;
    const merged = mod.merge().weight;
    out.set(`${path}.weight`, { data: merged.data, shape: [...merged.shape] });
  }
  return out;
}

/** The weight named `name`, or an error naming it. */
export function weightOf(weights: Map<string, PlainWeight>, name: string): PlainWeight {
  const w = weights.get(name);
  if (!w) throw new ConfigError(`export: the model has no parameter "${name}"`);
  return w;
}

/** Stacks weights along their first dimension (q, k, v into one fused projection). */
export function concatRows(parts: PlainWeight[]): PlainWeight {
  const data = new Float32Array(parts.reduce((n, p) => n + p.data.length, 0));
  let o = 0;
  for (const p of parts) {
    data.set(p.data, o);
    o += p.data.length;
  }
  const rows = parts.reduce((n, p) => n + p.shape[0]!, 0);
  return { data, shape: [rows, ...parts[0]!.shape.slice(1)] };
}
