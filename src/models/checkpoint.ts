/**
 * Checkpoint directories: ours and local Hugging Face Llama/Qwen2 ones, in one format.
 *
 *   config.json          Hugging Face field names (./config.ts), plus eos/bos/pad token ids (and, for a
 *                        masked-diffusion LM, rlvr_model_kind and rlvr_mask_token_id: ./diffusion-lm.ts)
 *   model.safetensors    float32 weights named as Hugging Face names them (model.layers.0.self_attn.q_proj.weight);
 *                        a tied head is not stored (as in HF). Sharded HF checkpoints (model.safetensors.index.json)
 *                        load too.
 *   tokenizer.json       a Hugging Face tokenizer, or rlvr-tokenizer.json for the built-in char tokenizer
 *   extra.safetensors    optional tensors saved by the caller (e.g. optimizer moments)
 *
 *   adapter/             only when the model has LoRA adapters: the adapters alone, in PEFT's layout, naming their
 *                        base by the hash of its weights (./adapter.ts)
 *
 * LoRA adapters are merged into model.safetensors (W + (alpha/r) B A), so a checkpoint is always a plain model that
 * transformers can open; `loadModelWithAdapter(base, dir/adapter)` rebuilds the unmerged model (to resume training).
 *
 * Every file is written atomically. Loading is strict: a missing tensor, a tensor of the wrong shape, or a tensor
 * the model has no place for is a CheckpointError naming the tensor and the shapes.
 */
import { existsSync, readFileSync } from "node:fs";
import { totalmem } from "node:os";
import { join } from "node:path";
import { CheckpointError, ConfigError, Rng, fmtShape, writeFileAtomic } from "../util/index.js";
import { LoRALinear, readSafetensors, saveSafetensors, tensor, type RawTensor, type Tensor } from "../engine/index.js";
import { hfName } from "./adapter-names.js";
import { loadAdapter, loraLayers, saveAdapter, type LoadAdapterOptions } from "./adapter.js";
import { fromHfConfig, parameterCount, toHfConfig } from "./config.js";
import { HfTokenizer, loadHfTokenizer } from "./hf-tokenizer.js";
import { tokenizerFromJSON, type Tokenizer } from "./tokenizer.js";
import { Transformer } from "./transformer.js";
import { modelFromHfFields, modelKindFields } from "./diffusion-lm.js";
import { VisionTokenizer, withVisionTokenizer } from "./vision-lm.js";

/** File name of the built-in tokenizer's description. */
const RLVR_TOKENIZER = "rlvr-tokenizer.json";
/** Tensors some HF checkpoints carry that are recomputed, not learned. */
const IGNORED = /\.rotary_emb\.inv_freq$/;

export { hfName };
/** Sub-folder of a checkpoint that holds its LoRA adapters (when the model has any). */
export const ADAPTER_DIR = "adapter";

/** Writes `model` and `tokenizer` to `dir` (created if needed); `extra` tensors go to extra.safetensors. */
export function saveModel(dir: string, model: Transformer, tokenizer: Tokenizer, extra?: Record<string, Tensor>): void {
  const weights: Record<string, Tensor> = {};
  for (const [name, t] of model.namedParameters()) if (!/\.lora[AB]$/.test(name)) weights[hfName(name)] = t;
  for (const [path, mod] of model.namedModules()) {
    if (!(mod instanceof LoRALinear)) continue;
    const merged = mod.merge(); // export W + (alpha/r) B A, so the checkpoint is a plain model
    weights[hfName(`${path}.weight`)] = merged.weight;
  }
  saveSafetensors(join(dir, "model.safetensors"), weights, { format: "pt" });
  const config = {
    ...toHfConfig(model.config, { eosId: tokenizer.eosId, bosId: tokenizer.bosId }),
    pad_token_id: tokenizer.padId,
    ...modelKindFields(model),
  };
  writeFileAtomic(join(dir, "config.json"), JSON.stringify(config, null, 2) + "\n");
  const text = tokenizer instanceof VisionTokenizer ? tokenizer.base : tokenizer; // vision ids are in config.json
  if (text instanceof HfTokenizer) writeFileAtomic(join(dir, "tokenizer.json"), JSON.stringify(text.toJSON()));
  else writeFileAtomic(join(dir, RLVR_TOKENIZER), JSON.stringify(text.toJSON()) + "\n");
  if (extra && Object.keys(extra).length > 0) saveSafetensors(join(dir, "extra.safetensors"), extra);
  if (loraLayers(model).length > 0) saveAdapter(join(dir, ADAPTER_DIR), model);
}

/** What `loadModel` returns. */
export interface LoadedModel {
  model: Transformer;
  tokenizer: Tokenizer;
  /** Tensors from extra.safetensors, when the directory has one. */
  extra?: Record<string, Tensor>;
}

/** Options of `loadModel`. */
export interface LoadModelOptions {
  /** Accept NaN/±Inf weights (default false: they are a CheckpointError naming the tensor). */
  allowNonFinite?: boolean;
}

/** Loads a directory written by `saveModel`, or a local Hugging Face Llama/Qwen2 checkpoint directory. */
export function loadModel(dir: string, opts: LoadModelOptions = {}): LoadedModel {
  const configPath = join(dir, "config.json");
  if (!existsSync(configPath)) throw new CheckpointError(`${dir}: no config.json; is this a checkpoint directory?`);
  const hf = readJsonObject(configPath);
  const config = fromHfConfig(hf, configPath);
  const params = parameterCount(config);
  if (4 * params > totalmem()) {
    throw new CheckpointError(
      `${configPath}: this config makes a model of ${params.toExponential(2)} parameters, ` +
        `${gib(4 * params)} GiB as float32, more than this machine's ${gib(totalmem())} GiB of memory`,
    );
  }
  const tokenizer = loadTokenizer(dir, hf);
  if (tokenizer.vocabSize > config.vocabSize) {
    throw new CheckpointError(
      `${dir}: the tokenizer has ${tokenizer.vocabSize} ids but the model's vocab_size is ${config.vocabSize}`,
    );
  }
  let model: Transformer;
  try {
    model = modelFromHfFields(hf, config, new Rng(0)); // a decoder, or the masked-diffusion LM it records
  } catch (err) {
    if (err instanceof ConfigError) throw new CheckpointError(`${configPath}: ${err.message}`, { cause: err });
    throw err;
  }
  loadWeights(model, readWeights(dir, opts), dir);
  model.eval();
  const extraPath = join(dir, "extra.safetensors");
  if (!existsSync(extraPath)) return withVisionTokenizer({ model, tokenizer }); // `<image>` → the vision tokens
  const extra: Record<string, Tensor> = {};
  for (const [name, t] of Object.entries(readSafetensors(extraPath, opts).tensors)) {
    extra[name] = tensor(t.data, t.shape);
  }
  return withVisionTokenizer({ model, tokenizer, extra });
}

/**
 * Loads the base checkpoint `baseDir` and puts the LoRA adapters of `adapterDir` on it (./adapter.ts: the base must
 * be the one the adapters were trained on, by weight hash). The result has the adapters unmerged, ready to train on.
 */
export function loadModelWithAdapter(
  baseDir: string,
  adapterDir: string,
  opts: LoadModelOptions & LoadAdapterOptions = {},
): LoadedModel {
  const loaded = loadModel(baseDir, opts);
  loadAdapter(adapterDir, loaded.model, opts);
  loaded.model.eval();
  return loaded;
}

/** Copies checkpoint tensors into the model's parameters, strictly (see the file comment). */
export function loadWeights(model: Transformer, tensors: Record<string, RawTensor>, source: string): void {
  const used = new Set<string>();
  for (const [name, p] of model.namedParameters()) {
    const key = hfName(name);
    const t = tensors[key];
    if (!t) {
      throw new CheckpointError(`${source}: missing tensor "${key}" (parameter ${name}, shape ${fmtShape(p.shape)})`);
    }
    if (t.shape.length !== p.shape.length || t.shape.some((d, i) => d !== p.shape[i])) {
      throw new CheckpointError(
        `${source}: tensor "${key}" has shape ${fmtShape(t.shape)} but the model expects ${fmtShape(p.shape)}`,
      );
    }
    p.data.set(t.data);
    used.add(key);
  }
  const tiedHead = model.config.tieEmbeddings ? "lm_head.weight" : null; // some tied checkpoints store it anyway
  const unexpected = Object.keys(tensors).filter((k) => !used.has(k) && k !== tiedHead && !IGNORED.test(k));
  if (unexpected.length > 0) {
    const shown = unexpected
      .slice(0, 5)
      .map((k) => `"${k}" ${fmtShape(tensors[k]!.shape)}`)
      .join(", ");
    throw new CheckpointError(
      `${source}: ${unexpected.length} tensor(s) the model has no parameter for: ${shown}${unexpected.length > 5 ? ", ..." : ""}`,
    );
  }
}

/** model.safetensors, or every shard listed in model.safetensors.index.json (each shard only where it says). */
function readWeights(dir: string, opts: LoadModelOptions): Record<string, RawTensor> {
  const single = join(dir, "model.safetensors");
  if (existsSync(single)) return readSafetensors(single, opts).tensors;
  const index = join(dir, "model.safetensors.index.json");
  if (!existsSync(index)) throw new CheckpointError(`${dir}: no model.safetensors (or model.safetensors.index.json)`);
  const map = shardMap(index);
  const out: Record<string, RawTensor> = {};
  for (const shard of new Set(Object.values(map))) {
    for (const [name, t] of Object.entries(readSafetensors(join(dir, shard), opts).tensors)) {
      if (map[name] !== shard) {
        const listed = Object.hasOwn(map, name) ? `puts it in ${map[name]}` : "does not list it";
        throw new CheckpointError(`${index}: tensor "${name}" is in ${shard}, but the weight_map ${listed}`);
      }
      out[name] = t;
    }
  }
  const missing = Object.keys(map).filter((name) => !Object.hasOwn(out, name));
  if (missing.length > 0) {
    const name = missing[0]!;
    throw new CheckpointError(`${index}: tensor "${name}" is listed in ${map[name]} but that shard lacks it`);
  }
  return out;
}

/** The index's `weight_map` (tensor name → shard file in the same directory), type-checked. */
function shardMap(index: string): Record<string, string> {
  const weightMap = readJsonObject(index).weight_map;
  if (typeof weightMap !== "object" || weightMap === null || Array.isArray(weightMap)) {
    throw new CheckpointError(`${index}: weight_map must be an object of tensor name → shard file`);
  }
  const map: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, shard] of Object.entries(weightMap)) {
    if (typeof shard !== "string" || !/^[^/\\]+\.safetensors$/.test(shard) || shard.startsWith(".")) {
      throw new CheckpointError(
        `${index}: tensor "${name}" maps to ${JSON.stringify(shard)}; ` +
          "expected a .safetensors file name in the same directory",
      );
    }
    map[name] = shard;
  }
  if (Object.keys(map).length === 0) throw new CheckpointError(`${index}: weight_map lists no tensors`);
  return map;
}

function gib(bytes: number): string {
  return (bytes / 2 ** 30).toFixed(1);
}

/** A JSON file whose top level must be an object; anything else is a CheckpointError naming the file. */
function readJsonObject(path: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new CheckpointError(`${path}: not valid JSON`, { cause: err });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    const got = value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
    throw new CheckpointError(`${path}: expected a JSON object at the top level, got ${got}`);
  }
  return value as Record<string, unknown>;
}

/**
 * The directory's tokenizer: rlvr-tokenizer.json, else tokenizer.json with eos and pad ids from config.json. Whether
 * prompts start with a bos token is the tokenizer's own answer (its bos token by name), not config.json's
 * `bos_token_id`: transformers writes its default (1 for Llama) into a re-saved config whether or not the tokenizer
 * uses one, and Qwen2 names one it never prepends, so reading it there put an unseen token before every prompt of a
 * TRL-trained checkpoint (bench:trl:learn's evaluation of TRL's policies collapsed to near 0).
 */
function loadTokenizer(dir: string, hf: Record<string, unknown>): Tokenizer {
  const ours = join(dir, RLVR_TOKENIZER);
  if (existsSync(ours)) {
    const json = readJsonObject(ours);
    try {
      return tokenizerFromJSON(json);
    } catch (err) {
      throw new CheckpointError(`${ours}: not a tokenizer rlvr can read (${(err as Error).message})`, { cause: err });
    }
  }
  const path = join(dir, "tokenizer.json");
  if (!existsSync(path)) throw new CheckpointError(`${dir}: no tokenizer.json or ${RLVR_TOKENIZER}`);
  const first = (v: unknown): number | undefined =>
    Array.isArray(v) ? first(v[0]) : typeof v === "number" ? v : undefined;
  const eosId = first(hf.eos_token_id),
    padId = first(hf.pad_token_id);
  try {
    return loadHfTokenizer(path, {
      ...(eosId !== undefined ? { eosId } : {}),
      ...(padId !== undefined ? { padId } : {}),
    });
  } catch (err) {
    if (err instanceof ConfigError) throw new CheckpointError(`${dir}: ${err.message}`, { cause: err });
    throw err;
  }
}
