/**
 * rlvr model → GGUF file that llama.cpp runs (`rlvr export --format gguf`).
 *
 * Conventions followed (ggml-org/llama.cpp):
 * - Architectures and metadata keys: `gguf-py/gguf/constants.py` (`Keys`, `MODEL_TENSORS`) and
 *   `src/llama-arch.cpp`. Our llama shape is written as `llama`, the llama shape with q/k/v biases as `qwen2`, the
 *   GPT shape as `gpt2`. Hyper-parameters: `<arch>.context_length`, `.embedding_length`, `.block_count`,
 *   `.feed_forward_length`, `.attention.head_count`, `.attention.head_count_kv`, `.attention.key_length` /
 *   `.value_length` (head width), `.rope.freq_base`, `.rope.dimension_count`, `.attention.layer_norm_rms_epsilon`
 *   (RMSNorm) or `.attention.layer_norm_epsilon` (LayerNorm).
 * - Tensor names (`TENSOR_NAMES` in constants.py): token_embd, position_embd (gpt2), output_norm, output (omitted
 *   when tied: llama.cpp then reuses token_embd), blk.N.{attn_norm, attn_q, attn_k, attn_v, attn_output, ffn_norm,
 *   ffn_gate, ffn_up, ffn_down}; GPT-2 fuses q, k, v into blk.N.attn_qkv (rows q then k then v, as
 *   `GPT2Model.modify_tensors` does with HF's c_attn).
 * - RoPE: llama.cpp's `llama` architecture rotates adjacent pairs (LLAMA_ROPE_TYPE_NORM), while rlvr (like HF)
 *   rotates halves; convert_hf_to_gguf.py `LlamaModel.permute` reorders the rows of q_proj and k_proj within each
 *   head (row h*D + 2i + j takes row h*D + j*D/2 + i), and so do we. `qwen2` uses the half rotation
 *   (LLAMA_ROPE_TYPE_NEOX), so its rows are written as they are.
 * - Tensor types: `f32`; `f16` for matrices (1-D norms and biases stay F32, as convert_hf_to_gguf.py keeps them);
 *   `q8_0` for matrices whose rows are a multiple of 32 wide (others fall back to F16), `general.file_type` 0, 1
 *   or 7 (LLAMA_FTYPE_ALL_F32, MOSTLY_F16, MOSTLY_Q8_0).
 * - The tokenizer: ./gguf-tokenizer.ts.
 * Not supported: the masked-diffusion LM, other tokenizers than byte-level BPE and the char tokenizer, and qwen2
 * shapes whose heads do not tile dModel (llama.cpp's qwen2 loader wants a square attn_q).
 */
import { ConfigError } from "../../util/index.js";
import { headDimOf, type TransformerConfig } from "../config.js";
import type { Tokenizer } from "../tokenizer.js";
import type { Transformer } from "../transformer.js";
import { GgmlType, writeGguf, type GgmlTypeId, type GgufTensor, type GgufValue, encodeGguf } from "./gguf-file.js";
import { ggufTokenizerMetadata } from "./gguf-tokenizer.js";
import { encodeF16, encodeQ8_0, Q8_0_BLOCK } from "./quantize.js";
import { concatRows, plainWeights, weightOf, type PlainWeight } from "./weights.js";

/** Tensor types the export writes. */
export const GGUF_TYPES = ["f32", "f16", "q8_0"] as const;
export type GgufExportType = (typeof GGUF_TYPES)[number];

/** Options of `exportGguf`. */
export interface GgufExportOptions {
  /** Tensor type of the matrices (default f32). */
  type?: GgufExportType;
  /** `general.name` (default "rlvr-model"). */
  name?: string;
}

/** The llama.cpp architecture name of a config. */
export function ggufArchitecture(c: TransformerConfig): "gpt2" | "llama" | "qwen2" {
  return c.arch === "gpt2" ? "gpt2" : c.qkvBias ? "qwen2" : "llama";
}

/** The metadata and tensors of the GGUF file for `model` and `tokenizer`. */
export function ggufContents(
  model: Transformer,
  tokenizer: Tokenizer,
  opts: GgufExportOptions = {},
): { metadata: Record<string, GgufValue>; tensors: GgufTensor[] } {
  const type = opts.type ?? "f32";
  if (!GGUF_TYPES.includes(type)) throw new ConfigError(`GGUF export: type "${type}" is not one of ${GGUF_TYPES}`);
  const c = model.config;
  if (tokenizer.vocabSize > c.vocabSize)
    throw new ConfigError(`GGUF export: the tokenizer has ${tokenizer.vocabSize} ids, the model ${c.vocabSize} rows`);
  const arch = ggufArchitecture(c);
  if (arch === "qwen2" && headDimOf(c) * c.nHeads !== c.dModel) {
    // llama.cpp's qwen2 loader expects attn_q to be (dModel, dModel); its llama loader takes any head width
    throw new ConfigError(
      `GGUF export: llama.cpp's qwen2 needs nHeads × headDim = dModel, ` +
        `got ${c.nHeads} × ${headDimOf(c)} ≠ ${c.dModel}`,
    );
  }
  const w = plainWeights(model);
  const tensors: GgufTensor[] = [];
  const add = (name: string, weight: PlainWeight) => tensors.push(encodeTensor(name, weight, type));
  const get = (name: string) => weightOf(w, name);

  add("token_embd.weight", get("embedTokens.weight"));
  if (arch === "gpt2") add("position_embd.weight", get("embedPositions.weight"));
  const hd = headDimOf(c);
  for (let i = 0; i < c.nLayers; i++) {
    const p = `layers.${i}`;
    const b = `blk.${i}`;
    add(`${b}.attn_norm.weight`, get(`${p}.inputLayernorm.weight`));
    if (arch === "gpt2") {
      add(`${b}.attn_norm.bias`, get(`${p}.inputLayernorm.bias`));
      const qkv = ["q", "k", "v"].map((x) => `${p}.selfAttn.${x}Proj`);
      add(`${b}.attn_qkv.weight`, concatRows(qkv.map((n) => get(`${n}.weight`))));
      add(`${b}.attn_qkv.bias`, concatRows(qkv.map((n) => get(`${n}.bias`))));
      add(`${b}.attn_output.weight`, get(`${p}.selfAttn.oProj.weight`));
      add(`${b}.attn_output.bias`, get(`${p}.selfAttn.oProj.bias`));
      add(`${b}.ffn_norm.weight`, get(`${p}.postAttentionLayernorm.weight`));
      add(`${b}.ffn_norm.bias`, get(`${p}.postAttentionLayernorm.bias`));
      add(`${b}.ffn_up.weight`, get(`${p}.mlp.upProj.weight`));
      add(`${b}.ffn_up.bias`, get(`${p}.mlp.upProj.bias`));
      add(`${b}.ffn_down.weight`, get(`${p}.mlp.downProj.weight`));
      add(`${b}.ffn_down.bias`, get(`${p}.mlp.downProj.bias`));
      continue;
    }
    const rot = (x: PlainWeight, heads: number) => (arch === "llama" ? permuteRope(x, heads, hd) : x);
    add(`${b}.attn_q.weight`, rot(get(`${p}.selfAttn.qProj.weight`), c.nHeads));
    add(`${b}.attn_k.weight`, rot(get(`${p}.selfAttn.kProj.weight`), c.nKvHeads));
    add(`${b}.attn_v.weight`, get(`${p}.selfAttn.vProj.weight`));
    if (arch === "qwen2") {
      add(`${b}.attn_q.bias`, get(`${p}.selfAttn.qProj.bias`));
      add(`${b}.attn_k.bias`, get(`${p}.selfAttn.kProj.bias`));
      add(`${b}.attn_v.bias`, get(`${p}.selfAttn.vProj.bias`));
    }
    add(`${b}.attn_output.weight`, get(`${p}.selfAttn.oProj.weight`));
    add(`${b}.ffn_norm.weight`, get(`${p}.postAttentionLayernorm.weight`));
    add(`${b}.ffn_gate.weight`, get(`${p}.mlp.gateProj.weight`));
    add(`${b}.ffn_up.weight`, get(`${p}.mlp.upProj.weight`));
    add(`${b}.ffn_down.weight`, get(`${p}.mlp.downProj.weight`));
  }
  add("output_norm.weight", get("norm.weight"));
  if (arch === "gpt2") add("output_norm.bias", get("norm.bias"));
  if (!c.tieEmbeddings) add("output.weight", get("lmHead.weight"));

  const fileType = { f32: 0, f16: 1, q8_0: 7 }[type];
  const u32 = (value: number): GgufValue => ({ type: "u32", value });
  const f32 = (value: number): GgufValue => ({ type: "f32", value });
  const metadata: Record<string, GgufValue> = {
    "general.architecture": { type: "string", value: arch },
    "general.name": { type: "string", value: opts.name ?? "rlvr-model" },
    "general.file_type": u32(fileType),
    "general.quantization_version": u32(2),
    [`${arch}.vocab_size`]: u32(c.vocabSize),
    [`${arch}.context_length`]: u32(c.maxSeqLen),
    [`${arch}.embedding_length`]: u32(c.dModel),
    [`${arch}.block_count`]: u32(c.nLayers),
    [`${arch}.feed_forward_length`]: u32(c.dFf),
    [`${arch}.attention.head_count`]: u32(c.nHeads),
    [`${arch}.attention.head_count_kv`]: u32(c.nKvHeads),
    [`${arch}.attention.key_length`]: u32(hd),
    [`${arch}.attention.value_length`]: u32(hd),
  };
  if (arch === "gpt2") metadata[`${arch}.attention.layer_norm_epsilon`] = f32(c.normEps);
  else {
    metadata[`${arch}.attention.layer_norm_rms_epsilon`] = f32(c.normEps);
    metadata[`${arch}.rope.freq_base`] = f32(c.ropeTheta);
    metadata[`${arch}.rope.dimension_count`] = u32(hd);
  }
  Object.assign(metadata, ggufTokenizerMetadata(tokenizer, c.vocabSize));
  return { metadata, tensors };
}

/** The GGUF file bytes for `model` and `tokenizer`. */
export function encodeModelGguf(model: Transformer, tokenizer: Tokenizer, opts: GgufExportOptions = {}): Uint8Array {
  const { metadata, tensors } = ggufContents(model, tokenizer, opts);
  return encodeGguf(metadata, tensors);
}

/** Writes `model` and `tokenizer` to a GGUF file at `path` (atomically). */
export function exportGguf(path: string, model: Transformer, tokenizer: Tokenizer, opts: GgufExportOptions = {}): void {
  const { metadata, tensors } = ggufContents(model, tokenizer, opts);
  writeGguf(path, metadata, tensors);
}

/** HF rotate-half q/k rows → llama.cpp's adjacent-pair order, per head (convert_hf_to_gguf.py LlamaModel.permute). */
export function permuteRope(w: PlainWeight, heads: number, headDim: number): PlainWeight {
  const cols = w.data.length / w.shape[0]!;
  const out = new Float32Array(w.data.length);
  const half = headDim / 2;
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < half; i++) {
      for (let j = 0; j < 2; j++) {
        const dst = h * headDim + 2 * i + j;
        const src = h * headDim + j * half + i;
        out.set(w.data.subarray(src * cols, (src + 1) * cols), dst * cols);
      }
    }
  }
  return { data: out, shape: w.shape };
}

/** The GGML type a tensor of `shape` gets: 1-D stays F32; Q8_0 needs rows that are a multiple of 32 wide, else F16. */
export function ggufTensorType(shape: readonly number[], type: GgufExportType): GgmlTypeId {
  if (shape.length < 2 || type === "f32") return GgmlType.F32;
  if (type === "q8_0" && shape[shape.length - 1]! % Q8_0_BLOCK === 0) return GgmlType.Q8_0;
  return GgmlType.F16;
}

/** The tensor in the requested type (`ggufTensorType`). */
function encodeTensor(name: string, w: PlainWeight, type: GgufExportType): GgufTensor {
  const shape = w.shape;
  const t = ggufTensorType(shape, type);
  if (t === GgmlType.F32) return { name, shape, type: t, data: new Uint8Array(w.data.slice().buffer) };
  return { name, shape, type: t, data: t === GgmlType.Q8_0 ? encodeQ8_0(w.data) : encodeF16(w.data) };
}
