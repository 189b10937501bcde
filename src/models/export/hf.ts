/**
 * rlvr model → a folder that Python `transformers` opens with `AutoModelForCausalLM.from_pretrained` and
 * `AutoTokenizer.from_pretrained` (`rlvr export --format safetensors-hf`).
 *
 * - llama shape → `LlamaForCausalLM`, llama with q/k/v biases → `Qwen2ForCausalLM`: our checkpoint layout already
 *   is theirs (./../checkpoint.ts), so the weights are written under the same names.
 * - gpt2 shape → `GPT2LMHeadModel`: transformers' GPT-2 keeps its linears as `Conv1D` with (in, out) weights and
 *   fuses q, k, v into `attn.c_attn`, so the matrices are transposed and q, k, v concatenated (the inverse of
 *   scripts/make-gpt2-parity-fixture.py). HF GPT-2 has no grouped-query attention or free head width: such configs
 *   are refused.
 * - Tokenizer: a Hugging Face tokenizer is copied (tokenizer.json) with a tokenizer_config.json naming its special
 *   tokens. The char tokenizer is written as an equivalent byte-level BPE tokenizer.json with no merges (the same
 *   vocabulary ./gguf-tokenizer.ts writes for llama.cpp), which rlvr's `loadHfTokenizer` also reads.
 * Files: config.json, generation_config.json, model.safetensors (float32), tokenizer.json, tokenizer_config.json.
 */
import { join } from "node:path";
import { ConfigError, writeFileAtomic } from "../../util/index.js";
import { saveSafetensors, tensor, type Tensor } from "../../engine/index.js";
import { headDimOf, toHfConfig } from "../config.js";
import { hfName } from "../checkpoint.js";
import { HfTokenizer } from "../hf-tokenizer.js";
import { CharTokenizer, type Tokenizer } from "../tokenizer.js";
import type { Transformer } from "../transformer.js";
import { gpt2ByteToUnicode } from "./gguf-tokenizer.js";
import { concatRows, plainWeights, weightOf, type PlainWeight } from "./weights.js";

/** Writes `model` and `tokenizer` as a transformers folder in `dir`. */
export function exportHf(dir: string, model: Transformer, tokenizer: Tokenizer): void {
  const c = model.config;
  const w = plainWeights(model);
  const tensors: Record<string, Tensor> = {};
  let config: Record<string, unknown>;
  if (c.arch === "gpt2") {
    if (c.nKvHeads !== c.nHeads || headDimOf(c) * c.nHeads !== c.dModel) {
      throw new ConfigError(
        "export safetensors-hf: transformers' GPT-2 has no grouped-query attention or separate head width " +
          `(nKvHeads ${c.nKvHeads}, nHeads ${c.nHeads}, headDim ${headDimOf(c)}, dModel ${c.dModel})`,
      );
    }
    const get = (n: string) => weightOf(w, n);
    const put = (name: string, x: PlainWeight) => (tensors[name] = tensor(x.data, x.shape));
    put("transformer.wte.weight", get("embedTokens.weight"));
    put("transformer.wpe.weight", get("embedPositions.weight"));
    for (let i = 0; i < c.nLayers; i++) {
      const p = `layers.${i}`,
        h = `transformer.h.${i}`;
      put(`${h}.ln_1.weight`, get(`${p}.inputLayernorm.weight`));
      put(`${h}.ln_1.bias`, get(`${p}.inputLayernorm.bias`));
      const qkv = ["q", "k", "v"].map((x) => `${p}.selfAttn.${x}Proj`);
      put(`${h}.attn.c_attn.weight`, transposeOf(concatRows(qkv.map((n) => get(`${n}.weight`)))));
      put(`${h}.attn.c_attn.bias`, concatRows(qkv.map((n) => get(`${n}.bias`))));
      put(`${h}.attn.c_proj.weight`, transposeOf(get(`${p}.selfAttn.oProj.weight`)));
      put(`${h}.attn.c_proj.bias`, get(`${p}.selfAttn.oProj.bias`));
      put(`${h}.ln_2.weight`, get(`${p}.postAttentionLayernorm.weight`));
      put(`${h}.ln_2.bias`, get(`${p}.postAttentionLayernorm.bias`));
      put(`${h}.mlp.c_fc.weight`, transposeOf(get(`${p}.mlp.upProj.weight`)));
      put(`${h}.mlp.c_fc.bias`, get(`${p}.mlp.upProj.bias`));
      put(`${h}.mlp.c_proj.weight`, transposeOf(get(`${p}.mlp.downProj.weight`)));
      put(`${h}.mlp.c_proj.bias`, get(`${p}.mlp.downProj.bias`));
    }
    put("transformer.ln_f.weight", get("norm.weight"));
    put("transformer.ln_f.bias", get("norm.bias"));
    if (!c.tieEmbeddings) put("lm_head.weight", get("lmHead.weight"));
    config = {
      architectures: ["GPT2LMHeadModel"],
      model_type: "gpt2",
      vocab_size: c.vocabSize,
      n_positions: c.maxSeqLen,
      n_embd: c.dModel,
      n_layer: c.nLayers,
      n_head: c.nHeads,
      n_inner: c.dFf,
      activation_function: "gelu_new",
      layer_norm_epsilon: c.normEps,
      resid_pdrop: 0,
      embd_pdrop: 0,
      attn_pdrop: 0,
      tie_word_embeddings: c.tieEmbeddings,
      torch_dtype: "float32",
    };
  } else {
    for (const [name, x] of w) tensors[hfName(name)] = tensor(x.data, x.shape);
    const { rlvr_dropout: _dropout, ...rest } = toHfConfig(c);
    config = rest;
  }
  const ids = {
    eos_token_id: tokenizer.eosId,
    pad_token_id: tokenizer.padId,
    ...(tokenizer.bosId !== null ? { bos_token_id: tokenizer.bosId } : {}),
  };
  saveSafetensors(join(dir, "model.safetensors"), tensors, { format: "pt" });
  writeJson(join(dir, "config.json"), { ...config, ...ids });
  writeJson(join(dir, "generation_config.json"), ids);
  const { json, names } = hfTokenizerFiles(tokenizer);
  writeJson(join(dir, "tokenizer.json"), json);
  writeJson(join(dir, "tokenizer_config.json"), {
    tokenizer_class: "PreTrainedTokenizerFast",
    model_max_length: c.maxSeqLen,
    add_bos_token: tokenizer.bosId !== null,
    ...(names.eos !== undefined ? { eos_token: names.eos } : {}),
    ...(names.pad !== undefined ? { pad_token: names.pad } : {}),
    ...(names.bos !== undefined ? { bos_token: names.bos } : {}),
  });
}

/** tokenizer.json contents and the names of the special tokens. */
export function hfTokenizerFiles(tokenizer: Tokenizer): {
  json: Record<string, unknown>;
  names: { eos?: string; pad?: string; bos?: string };
} {
  if (tokenizer instanceof HfTokenizer) {
    const json = tokenizer.toJSON() as Record<string, unknown>;
    const added = (json.added_tokens ?? []) as { id: number; content: string }[];
    const vocab = ((json.model as { vocab?: Record<string, number> })?.vocab ?? {}) as Record<string, number>;
    const nameOf = (id: number | null) =>
      id === null
        ? undefined
        : (added.find((t) => t.id === id)?.content ?? Object.keys(vocab).find((k) => vocab[k] === id));
    return {
      json,
      names: { eos: nameOf(tokenizer.eosId), pad: nameOf(tokenizer.padId), bos: nameOf(tokenizer.bosId) },
    };
  }
  if (!(tokenizer instanceof CharTokenizer))
    throw new ConfigError(`export: tokenizer ${tokenizer.constructor.name} is not supported`);
  const byteMap = gpt2ByteToUnicode();
  const specials = ["<pad>", "<bos>", "<eos>"];
  const vocab: Record<string, number> = {};
  for (let id = 0; id < tokenizer.vocabSize; id++) {
    vocab[id < specials.length ? specials[id]! : byteMap[tokenizer.decode([id]).charCodeAt(0)]!] = id;
  }
  const byteLevel = { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true };
  const json = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: specials.map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: null,
    pre_tokenizer: byteLevel,
    post_processor: null,
    decoder: byteLevel,
    model: {
      type: "BPE",
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: [],
    },
  };
  return { json, names: { pad: "<pad>", bos: "<bos>", eos: "<eos>" } };
}

function writeJson(path: string, value: unknown): void {
  writeFileAtomic(path, JSON.stringify(value, null, 2) + "\n");
}

function transposeOf(x: PlainWeight): PlainWeight {
  const [rows, cols] = x.shape as [number, number];
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = x.data[r * cols + c]!;
  return { data: out, shape: [cols, rows] };
}
