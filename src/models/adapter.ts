/**
 * LoRA adapters saved and loaded apart from their base model, in the layout of Hugging Face PEFT so that users (and
 * `PeftModel.from_pretrained`) recognise it:
 *
 *   adapter_config.json        peft_type "LORA", task_type "CAUSAL_LM", r, lora_alpha, lora_dropout, target_modules
 *                              (the wrapped modules' last names, HF spelling: ["q_proj", "v_proj"]), bias "none",
 *                              base_model_name_or_path, and rlvr_base_sha256: the hash of the base's weights
 *   adapter_model.safetensors  base_model.model.<HF module path>.lora_A.weight (r, in) and .lora_B.weight (out, r)
 *
 * Departures from PEFT: every adapter of one folder has the same rank and alpha (PEFT's rank_pattern and
 * alpha_pattern are not written, and a folder that has them is refused); loading checks the base by the hash of its
 * weights (`baseWeightsHash`), so an adapter put on the wrong base is an error naming both hashes, not silent
 * garbage. Loading wraps exactly the modules that have tensors in the file.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { CheckpointError, Rng, fmtShape, writeFileAtomic } from "../util/index.js";
import { LoRALinear, applyLoRA, readSafetensors, saveSafetensors, type Tensor } from "../engine/index.js";
import { hfModulePath, hfName, peftKeys } from "./adapter-names.js";
import type { Transformer } from "./transformer.js";

/** File names of an adapter folder (PEFT's). */
export const ADAPTER_CONFIG = "adapter_config.json";
export const ADAPTER_WEIGHTS = "adapter_model.safetensors";

/** What adapter_config.json holds (the fields rlvr writes and reads). */
export interface AdapterConfig {
  peft_type: "LORA";
  task_type: "CAUSAL_LM";
  r: number;
  lora_alpha: number;
  lora_dropout: number;
  target_modules: string[];
  bias: "none";
  base_model_name_or_path: string | null;
  /** sha256 of the base's weights (`baseWeightsHash`). */
  rlvr_base_sha256: string;
}

/** Every LoRA-wrapped Linear of `model`, by module path. */
export function loraLayers(model: Transformer): [string, LoRALinear][] {
  return model.namedModules().filter((e): e is [string, LoRALinear] => e[1] instanceof LoRALinear);
}

/**
 * sha256 (hex) of the base model's weights: every parameter except LoRA factors, in HF-name order, each as its name,
 * shape and float32 bytes. A LoRA-wrapped layer contributes its frozen base weight, so a model gives the same hash
 * before and after adapters are put on it (and the hash changes when the adapters are merged in).
 */
export function baseWeightsHash(model: Transformer): string {
  const params = model
    .namedParameters()
    .filter(([n]) => !/\.lora[AB]$/.test(n))
    .map(([n, t]) => [hfName(n), t] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const h = createHash("sha256");
  for (const [name, t] of params) {
    h.update(`${name}:${t.shape.join("x")}\n`);
    h.update(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
  }
  return h.digest("hex");
}

/** Options of `saveAdapter`. */
export interface SaveAdapterOptions {
  /** Where the base lives (written as base_model_name_or_path; default null). */
  base?: string;
}

/** Writes the LoRA adapters of `model` to `dir` (created if needed) in PEFT's layout; returns the config written. */
export function saveAdapter(dir: string, model: Transformer, opts: SaveAdapterOptions = {}): AdapterConfig {
  const layers = loraLayers(model);
  if (layers.length === 0) throw new CheckpointError(`saveAdapter ${dir}: the model has no LoRA adapters`);
  const [, first] = layers[0]!;
  const tensors: Record<string, Tensor> = {};
  for (const [path, lin] of layers) {
    if (lin.rank !== first.rank || lin.alpha !== first.alpha || lin.dropoutP !== first.dropoutP) {
      throw new CheckpointError(
        `saveAdapter ${dir}: ${path} has rank ${lin.rank}, alpha ${lin.alpha}, dropout ${lin.dropoutP} but ` +
          `${layers[0]![0]} has ${first.rank}, ${first.alpha}, ${first.dropoutP}; one folder holds one rank and alpha`,
      );
    }
    const k = peftKeys(path);
    tensors[k.a] = lin.loraA;
    tensors[k.b] = lin.loraB;
  }
  const targets = [...new Set(layers.map(([p]) => hfModulePath(p).split(".").pop()!))].sort();
  const config: AdapterConfig = {
    peft_type: "LORA",
    task_type: "CAUSAL_LM",
    r: first.rank,
    lora_alpha: first.alpha,
    lora_dropout: first.dropoutP,
    target_modules: targets,
    bias: "none",
    base_model_name_or_path: opts.base ?? null,
    rlvr_base_sha256: baseWeightsHash(model),
  };
  mkdirSync(dir, { recursive: true });
  saveSafetensors(join(dir, ADAPTER_WEIGHTS), tensors, { format: "pt" });
  writeFileAtomic(join(dir, ADAPTER_CONFIG), JSON.stringify(config, null, 2) + "\n");
  return config;
}

/** Reads and checks adapter_config.json of `dir`. */
export function readAdapterConfig(dir: string): AdapterConfig {
  const path = join(dir, ADAPTER_CONFIG);
  if (!existsSync(path)) throw new CheckpointError(`${dir}: no ${ADAPTER_CONFIG}; is this an adapter folder?`);
  let c: Record<string, unknown>;
  try {
    c = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  } catch (err) {
    throw new CheckpointError(`${path}: not valid JSON`, { cause: err });
  }
  const bad = (field: string, want: string) =>
    new CheckpointError(`${path}: ${field} must be ${want}, got ${JSON.stringify(c[field])}`);
  if (c.peft_type !== "LORA") throw bad("peft_type", '"LORA"');
  if (!(Number.isInteger(c.r) && (c.r as number) > 0)) throw bad("r", "a positive integer");
  if (!(typeof c.lora_alpha === "number" && c.lora_alpha > 0)) throw bad("lora_alpha", "a positive number");
  const dropout = c.lora_dropout ?? 0;
  if (!(typeof dropout === "number" && dropout >= 0 && dropout < 1)) throw bad("lora_dropout", "a number in [0, 1)");
  if ((c.bias ?? "none") !== "none") throw bad("bias", '"none" (rlvr adapters train no biases)');
  for (const f of ["rank_pattern", "alpha_pattern"]) {
    const v = c[f];
    if (v !== undefined && v !== null && Object.keys(v as object).length > 0)
      throw bad(f, "empty (one rank per folder)");
  }
  if (typeof c.rlvr_base_sha256 !== "string")
    throw bad("rlvr_base_sha256", "the sha256 of the base's weights (written by rlvr's saveAdapter)");
  return c as unknown as AdapterConfig;
}

/** Options of `loadAdapter`. */
export interface LoadAdapterOptions {
  /** Skip the base-hash check (default false). */
  skipBaseCheck?: boolean;
  /** Stream for the dropout masks of further training (default Rng(0)). */
  rng?: Rng;
}

/**
 * Puts the adapters of folder `dir` on `model` (in place; every other parameter is frozen, as `applyLoRA` does) and
 * returns the wrapped module paths. The model must be the adapters' base: a different base (by weight hash), a model
 * that already has adapters, or a tensor with no module or the wrong shape is a CheckpointError.
 */
export function loadAdapter(dir: string, model: Transformer, opts: LoadAdapterOptions = {}): string[] {
  const config = readAdapterConfig(dir);
  if (loraLayers(model).length > 0) throw new CheckpointError(`${dir}: the model already has LoRA adapters`);
  if (!opts.skipBaseCheck) {
    const have = baseWeightsHash(model);
    if (have !== config.rlvr_base_sha256) {
      const named = config.base_model_name_or_path ? ` (${config.base_model_name_or_path})` : "";
      throw new CheckpointError(
        `${dir}: this adapter was trained on another base${named}: its base weights hash to ` +
          `${config.rlvr_base_sha256.slice(0, 16)}…, the model given hashes to ${have.slice(0, 16)}…`,
      );
    }
  }
  const tensors = readSafetensors(join(dir, ADAPTER_WEIGHTS)).tensors;
  const byKey = new Map<string, string>(); // PEFT module prefix → our module path
  for (const [path] of model.namedModules()) byKey.set(peftKeys(path).a, path);
  const paths: string[] = [];
  for (const key of Object.keys(tensors)) {
    if (key.endsWith(".lora_B.weight")) continue;
    const path = byKey.get(key);
    if (!path) throw new CheckpointError(`${dir}: tensor "${key}" names no module of the model`);
    if (!tensors[key.replace(/lora_A\.weight$/, "lora_B.weight")])
      throw new CheckpointError(`${dir}: tensor "${key}" has no lora_B partner`);
    paths.push(path);
  }
  const leftover = Object.keys(tensors).filter((k) => !/\.lora_[AB]\.weight$/.test(k));
  if (leftover.length > 0) throw new CheckpointError(`${dir}: tensor "${leftover[0]}" is not a LoRA factor`);
  if (paths.length === 0) throw new CheckpointError(`${dir}: ${ADAPTER_WEIGHTS} holds no LoRA factors`);
  const exact = new RegExp(`^(${paths.map((p) => p.replace(/\./g, "\\.")).join("|")})$`);
  applyLoRA(model, {
    rank: config.r,
    alpha: config.lora_alpha,
    dropout: config.lora_dropout ?? 0,
    rng: opts.rng ?? new Rng(0),
    targets: exact,
  });
  for (const [path, lin] of loraLayers(model)) {
    const k = peftKeys(path);
    for (const [key, p] of [
      [k.a, lin.loraA],
      [k.b, lin.loraB],
    ] as const) {
      const t = tensors[key]!;
      if (t.shape.length !== p.shape.length || t.shape.some((d, i) => d !== p.shape[i])) {
        throw new CheckpointError(
          `${dir}: tensor "${key}" has shape ${fmtShape(t.shape)} but the module needs ${fmtShape(p.shape)}`,
        );
      }
      p.data.set(t.data);
    }
  }
  return paths;
}
