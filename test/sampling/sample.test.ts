import { describe, expect, it } from "vitest";
import { noGrad, tokenLogprobsFor } from "./helpers.js";
import { DecodeSession, sample } from "../../src/sampling/sample.js";
import { allocUninit } from "../../src/engine/pool.js";
import { createModel } from "../../src/models/registry.js";
import { CharTokenizer, type Tokenizer } from "../../src/models/tokenizer.js";
import { Rng } from "../../src/util/index.js";

const tok = new CharTokenizer();
const llama = createModel("micro-char", new Rng(1)).model.eval();
const gpt = createModel("micro-char", new Rng(2), {
  arch: "gpt2",
  nKvHeads: 4,
  dFf: 128,
  tieEmbeddings: false,
}).model.eval();

describe.each([
  ["llama", llama],
  ["gpt2", gpt],
] as const)("sample (%s)", (_name, model) => {
  const prompt = tok.encode("12+34=");

  it("records log-probs equal to a full forward pass over the same tokens (T = 1 and T = 0.7)", () => {
    for (const temperature of [1, 0.7]) {
      const out = sample(model, tok, [prompt, prompt, prompt], { maxNewTokens: 12, temperature, rng: new Rng(3) });
      for (const s of out) {
        expect(s.tokens.length).toBe(s.logprobs.length);
        const full = tokenLogprobsFor(model, prompt, s.tokens, temperature);
        for (let i = 0; i < full.length; i++) expect(Math.abs(full[i]! - s.logprobs[i]!)).toBeLessThan(1e-5);
      }
    }
  });

  it("handles prompts of different lengths (left padding) like each prompt alone", () => {
    const prompts = [tok.encode("7+8="), tok.encode("123+456="), tok.encode("1=")];
    const out = sample(model, tok, prompts, { maxNewTokens: 8, rng: new Rng(4) });
    prompts.forEach((p, b) => {
      const full = tokenLogprobsFor(model, p, out[b]!.tokens, 1);
      for (let i = 0; i < full.length; i++) expect(Math.abs(full[i]! - out[b]!.logprobs[i]!)).toBeLessThan(1e-4);
    });
  });

  it("gives the same samples for the same seed and different ones for another seed", () => {
    const a = sample(model, tok, [prompt, prompt], { maxNewTokens: 10, rng: new Rng(5) });
    const b = sample(model, tok, [prompt, prompt], { maxNewTokens: 10, rng: new Rng(5) });
    const c = sample(model, tok, [prompt, prompt], { maxNewTokens: 10, rng: new Rng(6) });
    expect(b).toEqual(a);
    expect(c.map((s) => s.tokens)).not.toEqual(a.map((s) => s.tokens));
    expect(a[0]!.tokens).not.toEqual(a[1]!.tokens); // rows of one call draw independently
  });

  it("top-k = 1 is greedy: the argmax of a full forward pass at every step", () => {
    const [s] = sample(model, tok, [prompt], { maxNewTokens: 10, topK: 1, rng: new Rng(7) });
    const [g] = sample(model, tok, [prompt], { maxNewTokens: 10, temperature: 0, rng: new Rng(8) });
    expect(s!.tokens).toEqual(g!.tokens);
    const ids = [...prompt];
    for (const t of s!.tokens) {
      const logits = noGrad(() => model.forward(Int32Array.from(ids), 1, ids.length));
      const V = model.config.vocabSize;
      const last = logits.data.subarray((ids.length - 1) * V, ids.length * V);
      expect(t).toBe(last.indexOf(Math.max(...last)));
      ids.push(t);
    }
  });

  it("ends a row at a stop string (kept in text and tokens) with finish 'stop', else 'length'", () => {
    const [g] = sample(model, tok, [prompt], { maxNewTokens: 10, temperature: 0, rng: new Rng(9) });
    expect(g!.finishReason).toBe("length");
    expect(g!.tokens.length).toBe(10);
    const stop = g!.text.slice(3, 5); // a stop string the greedy path reaches after 5 characters
    const [s] = sample(model, tok, [prompt], {
      maxNewTokens: 10,
      temperature: 0,
      stop: ["not there", stop],
      rng: new Rng(9),
    });
    expect(s!.finishReason).toBe("stop");
    expect(s!.text.includes(stop)).toBe(true);
    expect(s!.tokens).toEqual(g!.tokens.slice(0, s!.tokens.length));
    expect(s!.text.indexOf(stop) + stop.length).toBe(s!.text.length);
  });

  it("ends a row at eos, keeping the eos token and its log-prob", () => {
    const [g] = sample(model, tok, [prompt], { maxNewTokens: 6, temperature: 0, rng: new Rng(10) });
    const eosTok: Tokenizer = {
      ...tok,
      encode: tok.encode.bind(tok),
      decode: tok.decode.bind(tok),
      toJSON: tok.toJSON.bind(tok),
      vocabSize: tok.vocabSize,
      padId: 0,
      bosId: 1,
      eosId: g!.tokens[2]!,
    };
    const [s] = sample(model, eosTok, [prompt], { maxNewTokens: 6, temperature: 0, rng: new Rng(10) });
    expect(s!.finishReason).toBe("stop");
    expect(s!.tokens).toEqual(g!.tokens.slice(0, g!.tokens.indexOf(g!.tokens[2]!) + 1));
    expect(s!.logprobs.length).toBe(s!.tokens.length);
  });
});

describe("sample input checks", () => {
  it("names the bad option or prompt", () => {
    const rng = new Rng(0);
    expect(() => sample(llama, tok, [[]], { maxNewTokens: 2, rng })).toThrow(/prompt 0 is empty/);
    expect(() => sample(llama, tok, [[5, 999]], { maxNewTokens: 2, rng })).toThrow(/prompt 0 has token id 999/);
    expect(() => sample(llama, tok, [[5]], { maxNewTokens: 2, topP: 0, rng })).toThrow(/topP/);
    expect(() => sample(llama, tok, [[5]], { maxNewTokens: -1, rng })).toThrow(/maxNewTokens/);
    expect(() => sample(gpt, tok, [[5]], { maxNewTokens: 500, rng })).toThrow(/exceeds the model's maxSeqLen 128/);
    expect(sample(llama, tok, [], { maxNewTokens: 2, rng })).toEqual([]);
  });
});

describe("DecodeSession.close", () => {
  it("is idempotent (the logits never go back to the pool twice) and refuses draws and feeds after", () => {
    // enough rows for logits the pool keeps (it ignores buffers under 4,096 floats)
    const rows = Math.ceil(4096 / tok.vocabSize) + 1;
    const prompts = Array.from({ length: rows }, (_, i) => tok.encode(i % 2 ? "12+" : "3="));
    const session = new DecodeSession(llama, tok, prompts, { maxSlots: 4, rng: new Rng(3) });
    session.feed(new Int32Array(rows).fill(5), 1);
    const logits = session.lastLogits(0).buffer; // the whole (B, 1, V) logits buffer
    const n = logits.byteLength / 4;
    session.close();
    const taken = allocUninit(n); // the pool hands the released logits to the next user
    expect(taken.buffer).toBe(logits);
    session.close(); // a second close must not release them again while `taken` holds them
    const next = allocUninit(n);
    expect(next.buffer).not.toBe(logits);
    expect(() => session.draw(0)).toThrow(/closed/);
    expect(() => session.feed(new Int32Array(rows).fill(5), 1)).toThrow(/closed/);
  });
});
