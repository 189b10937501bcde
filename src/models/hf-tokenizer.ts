/**
 * Hugging Face `tokenizer.json` (BPE and the other models tokenizers.js supports), loaded from a local file.
 *
 * Encoding and decoding are delegated to @huggingface/tokenizers (the pure-JS port of the Rust `tokenizers`
 * crate, pinned); this file only fixes the contract: no special tokens added on encode, specials dropped on
 * decode, and the eos/pad/bos ids resolved from explicit options, `tokenizer_config.json` beside the file, or
 * the usual special-token names, in that order.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Tokenizer as HfLibTokenizer } from "@huggingface/tokenizers";
import { ConfigError } from "../util/index.js";
import type { Tokenizer } from "./tokenizer.js";

/** Special-token names tried, in order, when no explicit eos is given. */
const EOS_NAMES = ["<|endoftext|>", "<|im_end|>", "<|eot_id|>", "<|end_of_text|>", "</s>", "<eos>"];
/** Special-token names tried for bos. */
const BOS_NAMES = ["<|begin_of_text|>", "<s>", "<bos>"];

/** Explicit special ids; each overrides what the files say. */
export interface HfTokenizerOptions {
  eosId?: number;
  padId?: number;
  bosId?: number | null;
}

interface AddedTokenJson {
  id: number;
  content: string;
  special?: boolean;
}

interface TokenizerJson {
  model?: { vocab?: Record<string, number> | [string, number][] };
  added_tokens?: AddedTokenJson[];
}

/** A Hugging Face tokenizer.json behind the rlvr `Tokenizer` contract. */
export class HfTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly eosId: number;
  readonly padId: number;
  readonly bosId: number | null;
  private readonly lib: HfLibTokenizer;

  /** `json` is the parsed tokenizer.json; `config` the parsed tokenizer_config.json (or {}). */
  constructor(
    private readonly json: TokenizerJson,
    config: Record<string, unknown> = {},
    opts: HfTokenizerOptions = {},
  ) {
    if (!json || typeof json !== "object" || Array.isArray(json) || !json.model || typeof json.model !== "object") {
      throw new ConfigError('tokenizer.json: missing the "model" section; is this a Hugging Face tokenizer.json?');
    }
    try {
      this.lib = new HfLibTokenizer(json, config);
      // a probe, so that a tokenizer the library cannot run fails here and not mid-run
      this.lib.decode(this.lib.encode("Probe 1 + 1 = 2\n", { add_special_tokens: false }).ids);
    } catch (err) {
      // The library throws TypeErrors on malformed sections; the user needs the file named, not its stack.
      const why = (err as Error).message;
      const msg = `tokenizer.json: not a tokenizer the Hugging Face tokenizers library can read (${why})`;
      throw new ConfigError(msg, { cause: err });
    }
    this.vocabSize = maxId(json) + 1;
    if (this.vocabSize < 1) throw new ConfigError("tokenizer.json: the vocabulary is empty");
    const byName = (t: unknown): number | undefined => {
      const name = typeof t === "string" ? t : tokenContent(t);
      return name === undefined ? undefined : this.lib.token_to_id(name);
    };
    const eos = opts.eosId ?? byName(config.eos_token) ?? firstKnown(this.lib, EOS_NAMES);
    if (eos === undefined) {
      throw new ConfigError(
        "tokenizer.json: cannot tell the eos token; pass eosId or add eos_token to tokenizer_config.json",
      );
    }
    this.eosId = eos;
    this.padId = opts.padId ?? byName(config.pad_token) ?? eos;
    this.bosId =
      opts.bosId !== undefined ? opts.bosId : (byName(config.bos_token) ?? firstKnown(this.lib, BOS_NAMES) ?? null);
  }

  /** Text to ids; special tokens written literally in the text are still recognised, none are added. */
  encode(text: string): number[] {
    if (text === "") return [];
    return this.lib.encode(text, { add_special_tokens: false }).ids;
  }

  /** Ids to text with special tokens dropped. */
  decode(ids: readonly number[]): string {
    if (ids.length === 0) return "";
    return this.lib.decode([...ids], { skip_special_tokens: true, clean_up_tokenization_spaces: false });
  }

  /** The original tokenizer.json contents (saved back as tokenizer.json). */
  toJSON(): unknown {
    return this.json;
  }
}

/** Loads a Hugging Face tokenizer.json from disk; tokenizer_config.json beside it is read when present. */
export function loadHfTokenizer(path: string, opts: HfTokenizerOptions = {}): HfTokenizer {
  if (!existsSync(path)) throw new ConfigError(`tokenizer: file not found: ${path}`);
  let json: TokenizerJson;
  try {
    json = JSON.parse(readFileSync(path, "utf8")) as TokenizerJson;
  } catch (err) {
    throw new ConfigError(`tokenizer: ${path} is not valid JSON`, { cause: err });
  }
  const configPath = join(dirname(path), "tokenizer_config.json");
  let config: Record<string, unknown> = {};
  if (existsSync(configPath)) {
    try {
      config = JSON.parse(readFileSync(configPath, "utf8")) as Record<string, unknown>;
    } catch (err) {
      throw new ConfigError(`tokenizer: ${configPath} is not valid JSON`, { cause: err });
    }
    if (typeof config !== "object" || config === null || Array.isArray(config)) {
      throw new ConfigError(`tokenizer: ${configPath} must hold a JSON object`);
    }
  }
  return new HfTokenizer(json, config, opts);
}

/** The largest id in the vocabulary or the added tokens. */
function maxId(json: TokenizerJson): number {
  let max = -1;
  const vocab = json.model?.vocab;
  const take = (id: unknown, what: string): void => {
    if (typeof id !== "number" || !Number.isSafeInteger(id) || id < 0 || id >= 1 << 24) {
      throw new ConfigError(`tokenizer.json: ${what} has id ${JSON.stringify(id)}; ids are integers in [0, 2^24)`);
    }
    max = Math.max(max, id);
  };
  if (Array.isArray(vocab))
    max = vocab.length - 1; // Unigram: [piece, score][] indexed by id
  else if (vocab && typeof vocab === "object") {
    for (const [piece, id] of Object.entries(vocab)) take(id, `vocab entry ${JSON.stringify(piece)}`);
  }
  const added = json.added_tokens ?? [];
  if (!Array.isArray(added)) throw new ConfigError("tokenizer.json: added_tokens must be a list");
  for (const t of added) take((t as AddedTokenJson | null)?.id, "an added token");
  return max;
}

/** tokenizer_config.json writes special tokens either as strings or as `{ content: "..." }` objects. */
function tokenContent(t: unknown): string | undefined {
  if (t && typeof t === "object" && typeof (t as { content?: unknown }).content === "string")
    return (t as { content: string }).content;
  return undefined;
}

function firstKnown(lib: HfLibTokenizer, names: readonly string[]): number | undefined {
  for (const n of names) {
    const id = lib.token_to_id(n);
    if (id !== undefined) return id;
  }
  return undefined;
}
