/**
 * The tokenizer contract and the character tokenizer used by built-in tasks.
 *
 * A `Tokenizer` maps text to integer ids and back. `encode` never adds special tokens (callers add bos/eos where
 * they want them); `decode` drops special tokens so that sampled text never shows `<eos>` and the like.
 * `CharTokenizer` has a fixed vocabulary (three specials, printable ASCII and "\n"), so a checkpoint trained on
 * one machine decodes the same everywhere without shipping a vocabulary file.
 */
import { ConfigError } from "../util/index.js";

/** Maps text to token ids and back. */
export interface Tokenizer {
  /** Number of ids the tokenizer can produce (max id + 1). */
  readonly vocabSize: number;
  /** End of sequence; sampling stops on it (finish "stop"). */
  readonly eosId: number;
  /** Padding id (never attended to; any valid id works). */
  readonly padId: number;
  /** Beginning of sequence, or null when the tokenizer has none. */
  readonly bosId: number | null;
  /** Text to ids; no special tokens are added. */
  encode(text: string): number[];
  /** Ids to text; special tokens are dropped. */
  decode(ids: readonly number[]): string;
  /** Serialisable description (saved beside checkpoints). */
  toJSON(): unknown;
}

/**
 * Where each token of `ids` ends in `decode(ids)`: entry j is the length of the decoded prefix ids[0..j]. Decoding
 * growing prefixes (rather than tokens one by one) keeps multi-byte characters split across tokens right.
 */
export function tokenCharEnds(ids: readonly number[], tokenizer: Tokenizer): number[] {
  return ids.map((_, j) => tokenizer.decode(ids.slice(0, j + 1)).length);
}

/** Printable ASCII (space through "~") followed by newline: the character set of `CharTokenizer`. */
const CHARS: string = (() => {
  let s = "";
  for (let c = 32; c <= 126; c++) s += String.fromCharCode(c);
  return s + "\n";
})();

/** Special tokens of `CharTokenizer`, in id order. */
const CHAR_SPECIALS = ["<pad>", "<bos>", "<eos>"] as const;

/** A fixed-vocabulary character tokenizer: ids 0-2 are pad/bos/eos, then printable ASCII, then "\n". */
export class CharTokenizer implements Tokenizer {
  readonly vocabSize = CHAR_SPECIALS.length + CHARS.length;
  readonly padId = 0;
  readonly bosId = 1;
  readonly eosId = 2;
  private readonly unknownId = CHAR_SPECIALS.length + CHARS.indexOf("?");

  /** Each character becomes one id; characters outside the set map to the id of "?". */
  encode(text: string): number[] {
    const ids = new Array<number>(text.length);
    for (let i = 0; i < text.length; i++) {
      const j = CHARS.indexOf(text[i]!);
      ids[i] = j < 0 ? this.unknownId : j + CHAR_SPECIALS.length;
    }
    return ids;
  }

  /** Joins the characters of non-special ids; out-of-range ids throw. */
  decode(ids: readonly number[]): string {
    let s = "";
    for (const id of ids) {
      if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize) {
        throw new RangeError(`CharTokenizer.decode: id ${id} outside [0, ${this.vocabSize})`);
      }
      if (id >= CHAR_SPECIALS.length) s += CHARS[id - CHAR_SPECIALS.length];
    }
    return s;
  }

  /** `{ type: "char", version: 1 }`: the vocabulary is fixed, so this is all a checkpoint needs. */
  toJSON(): unknown {
    return { type: "char", version: 1 };
  }
}

/** Rebuilds a tokenizer saved by `toJSON()` of a built-in tokenizer (currently the char tokenizer). */
export function tokenizerFromJSON(json: unknown): Tokenizer {
  const o = json as { type?: unknown; version?: unknown } | null;
  if (o && o.type === "char" && o.version === 1) return new CharTokenizer();
  throw new ConfigError(
    `tokenizer: unknown saved tokenizer ${JSON.stringify(json)?.slice(0, 80)}; expected {"type":"char","version":1}`,
  );
}
