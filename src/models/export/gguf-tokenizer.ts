/**
 * Tokenizers as llama.cpp reads them from GGUF metadata (`tokenizer.ggml.*`, read by `llama_vocab::impl::load` in
 * ggml-org/llama.cpp src/llama-vocab.cpp).
 *
 * - A Hugging Face byte-level BPE `tokenizer.json` becomes `tokenizer.ggml.model = "gpt2"`: tokens in id order
 *   (vocabulary plus added tokens), token types (1 normal, 3 control for special added tokens), merges as "a b"
 *   strings. The pre-tokenizer is named by `tokenizer.ggml.pre`: a plain ByteLevel pre-tokenizer with the GPT-2
 *   regex is "gpt-2"; others are refused, since llama.cpp picks its regex from that name alone (convert_hf_to_gguf.py
 *   `get_vocab_base_pre` identifies it by hashing the tokens of a test string).
 * - The built-in `CharTokenizer` (3 specials, printable ASCII, "\n") has no HF file; it is exported as a "gpt2" BPE
 *   vocabulary with no merges, each character written in GPT-2's byte-to-unicode form (space is "Ġ", newline "Ċ"),
 *   so llama.cpp's BPE splits text into exactly rlvr's character ids. Departure: rlvr encodes a character outside
 *   its set as "?", llama.cpp drops it (it has no token for that byte).
 */
import { ConfigError } from "../../util/index.js";
import { CharTokenizer, type Tokenizer } from "../tokenizer.js";
import { HfTokenizer } from "../hf-tokenizer.js";
import type { GgufValue } from "./gguf-file.js";

/** GPT-2's reversible byte → printable character map (`bytes_to_unicode` in openai/gpt-2 encoder.py). */
export function gpt2ByteToUnicode(): string[] {
  const direct = (b: number) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  const map: string[] = new Array<string>(256);
  let n = 0;
  for (let b = 0; b < 256; b++) map[b] = String.fromCodePoint(direct(b) ? b : 256 + n++);
  return map;
}

interface HfTokenizerJson {
  model?: { type?: string; vocab?: Record<string, number>; merges?: (string | [string, string])[] };
  added_tokens?: { id: number; content: string; special?: boolean }[];
  pre_tokenizer?: { type?: string; use_regex?: boolean; add_prefix_space?: boolean } | null;
  normalizer?: unknown;
}

/** The `tokenizer.ggml.*` metadata of `tokenizer` for a model with `vocabSize` rows. */
export function ggufTokenizerMetadata(tokenizer: Tokenizer, vocabSize: number): Record<string, GgufValue> {
  const { tokens, types, merges, pre } =
    tokenizer instanceof CharTokenizer
      ? charVocabulary(tokenizer)
      : tokenizer instanceof HfTokenizer
        ? hfVocabulary(tokenizer.toJSON() as HfTokenizerJson)
        : unsupported(tokenizer);
  // rows of the embedding past the tokenizer's ids still need a token (llama.cpp requires n_vocab tokens)
  for (let id = tokens.length; id < vocabSize; id++) {
    tokens.push(`[PAD${id}]`);
    types.push(5); // unused
  }
  const meta: Record<string, GgufValue> = {
    "tokenizer.ggml.model": { type: "string", value: "gpt2" },
    "tokenizer.ggml.pre": { type: "string", value: pre },
    "tokenizer.ggml.tokens": { type: "array", itemType: "string", value: tokens },
    "tokenizer.ggml.token_type": { type: "array", itemType: "i32", value: types },
    "tokenizer.ggml.merges": { type: "array", itemType: "string", value: merges },
    "tokenizer.ggml.eos_token_id": { type: "u32", value: tokenizer.eosId },
    "tokenizer.ggml.padding_token_id": { type: "u32", value: tokenizer.padId },
  };
  if (tokenizer.bosId !== null) meta["tokenizer.ggml.bos_token_id"] = { type: "u32", value: tokenizer.bosId };
  // rlvr prompts start with bos when the tokenizer has one (src/rollout/groups.ts promptIds)
  meta["tokenizer.ggml.add_bos_token"] = { type: "bool", value: tokenizer.bosId !== null };
  meta["tokenizer.ggml.add_eos_token"] = { type: "bool", value: false };
  return meta;
}

interface Vocabulary {
  tokens: string[];
  types: number[];
  merges: string[];
  pre: string;
}

function charVocabulary(tok: CharTokenizer): Vocabulary {
  const byteMap = gpt2ByteToUnicode();
  const tokens: string[] = [];
  const types: number[] = [];
  const specials = new Map([
    [tok.padId, "<pad>"],
    [tok.bosId, "<bos>"],
    [tok.eosId, "<eos>"],
  ]);
  for (let id = 0; id < tok.vocabSize; id++) {
    const special = specials.get(id);
    if (special !== undefined) {
      tokens.push(special);
      types.push(3); // control
      continue;
    }
    const ch = tok.decode([id]);
    tokens.push(byteMap[ch.charCodeAt(0)]!); // printable ASCII and "\n": one byte each
    types.push(1);
  }
  return { tokens, types, merges: [], pre: "gpt-2" };
}

function hfVocabulary(json: HfTokenizerJson): Vocabulary {
  const model = json.model ?? {};
  if (model.type !== "BPE" || !model.vocab || Array.isArray(model.vocab)) {
    throw new ConfigError(`GGUF export: only BPE tokenizer.json files are supported, got model type "${model.type}"`);
  }
  const pre = json.pre_tokenizer;
  if (!pre || pre.type !== "ByteLevel" || pre.use_regex === false || pre.add_prefix_space === true) {
    throw new ConfigError(
      `GGUF export: the tokenizer's pre_tokenizer ${JSON.stringify(pre)?.slice(0, 120)} has no llama.cpp ` +
        'equivalent known to rlvr; supported: {"type":"ByteLevel","use_regex":true,"add_prefix_space":false} (GPT-2)',
    );
  }
  if (json.normalizer) throw new ConfigError("GGUF export: tokenizers with a normalizer are not supported");
  const byId = new Map<number, { text: string; type: number }>();
  for (const [text, id] of Object.entries(model.vocab)) byId.set(id, { text, type: 1 });
  for (const t of json.added_tokens ?? []) byId.set(t.id, { text: t.content, type: t.special ? 3 : 4 });
  const size = Math.max(-1, ...byId.keys()) + 1;
  const tokens: string[] = [];
  const types: number[] = [];
  for (let id = 0; id < size; id++) {
    const t = byId.get(id);
    tokens.push(t ? t.text : `[UNUSED${id}]`);
    types.push(t ? t.type : 5);
  }
  const merges = (model.merges ?? []).map((m) => (Array.isArray(m) ? `${m[0]} ${m[1]}` : m));
  return { tokens, types, merges, pre: "gpt-2" };
}

function unsupported(tokenizer: Tokenizer): never {
  throw new ConfigError(`GGUF export: tokenizer ${tokenizer.constructor.name} is not supported`);
}
