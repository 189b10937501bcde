import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CharTokenizer, tokenizerFromJSON } from "../../src/models/tokenizer.js";
import { loadHfTokenizer } from "../../src/models/hf-tokenizer.js";

const FIXTURES = join(import.meta.dirname, "..", "fixtures", "parity");

describe("CharTokenizer", () => {
  const tok = new CharTokenizer();
  it("has pad/bos/eos specials then printable ASCII and newline", () => {
    expect([tok.padId, tok.bosId, tok.eosId]).toEqual([0, 1, 2]);
    expect(tok.vocabSize).toBe(3 + 95 + 1);
    expect(tok.encode(" ")).toEqual([3]);
    expect(tok.encode("~\n")).toEqual([97, 98]);
  });
  it("round-trips printable text", () => {
    const s = "12+345=357\nHello, World! {x: [1, 2]} ~`";
    expect(tok.decode(tok.encode(s))).toBe(s);
  });
  it("maps unknown characters to '?' and drops specials on decode", () => {
    expect(tok.decode(tok.encode("café"))).toBe("caf?");
    expect(tok.decode([tok.bosId, ...tok.encode("ab"), tok.eosId, tok.padId])).toBe("ab");
  });
  it("rejects out-of-range ids and round-trips through toJSON", () => {
    expect(() => tok.decode([99])).toThrow(/id 99 outside/);
    expect(tokenizerFromJSON(JSON.parse(JSON.stringify(tok.toJSON())))).toBeInstanceOf(CharTokenizer);
    expect(() => tokenizerFromJSON({ type: "wat" })).toThrow(/unknown saved tokenizer/);
  });
});

describe("HfTokenizer (tokenizer.json, byte-level BPE)", () => {
  const tok = loadHfTokenizer(join(FIXTURES, "llama", "tokenizer.json"));
  const cases = JSON.parse(readFileSync(join(FIXTURES, "tokenizer-cases.json"), "utf8")) as {
    text: string;
    ids: number[];
  }[];

  it.each(cases.map((c) => [JSON.stringify(c.text), c] as const))(
    "encodes %s like the Python tokenizers library",
    (_name, c) => {
      expect(tok.encode(c.text)).toEqual(c.ids);
    },
  );
  it("decodes back to the text, dropping special tokens", () => {
    for (const c of cases) expect(tok.decode(c.ids)).toBe(c.text.replace("<|im_end|>", ""));
  });
  it("resolves the special ids and the vocabulary size", () => {
    expect(tok.vocabSize).toBe(300);
    expect(tok.eosId).toBe(297); // <|endoftext|>
    expect(tok.padId).toBe(297);
    expect(tok.bosId).toBeNull();
  });
  it("fails clearly on a missing file", () => {
    expect(() => loadHfTokenizer(join(FIXTURES, "nope.json"))).toThrow(/file not found/);
  });
});
