/**
 * Tensor and module names in Hugging Face spelling, shared by checkpoints (./checkpoint.ts) and LoRA adapter folders
 * (./adapter.ts, whose tensor names follow PEFT: `base_model.model.<HF module path>.lora_A.weight`).
 */

/** Our parameter name → its Hugging Face name: camelCase segments to snake_case, under "model." except the head. */
export function hfName(name: string): string {
  const snake = name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  return snake.startsWith("lm_head.") ? snake : `model.${snake}`;
}

/** The HF module path of our module path: `layers.0.selfAttn.qProj` → `model.layers.0.self_attn.q_proj`. */
export function hfModulePath(path: string): string {
  return hfName(`${path}.weight`).slice(0, -".weight".length);
}

/** PEFT's tensor names of the two LoRA factors of the module at our path `path`. */
export function peftKeys(path: string): { a: string; b: string } {
  const p = `base_model.model.${hfModulePath(path)}`;
  return { a: `${p}.lora_A.weight`, b: `${p}.lora_B.weight` };
}
