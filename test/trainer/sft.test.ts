import { describe, expect, it } from "vitest";
import { encodeExample, makeSftBatch, trainSft } from "../../src/trainer/sft.js";
import { createModel } from "../../src/models/registry.js";
import { CharTokenizer } from "../../src/models/tokenizer.js";
import { sample } from "../../src/sampling/sample.js";
import { Rng } from "../../src/util/index.js";

const tok = new CharTokenizer();

describe("SFT", () => {
  it("takes loss only on completion tokens and eos", () => {
    const a = encodeExample(tok, { prompt: "1+2=", completion: "3" });
    const b = encodeExample(tok, { prompt: "9=", completion: "9" });
    // [bos, "1", "+", "2", "=", "3", eos]: the completion starts at index 5
    expect(a.ids).toEqual([1, ...tok.encode("1+2=3"), 2]);
    expect(a.completionStart).toBe(5);
    const batch = makeSftBatch([a, b], tok.padId);
    expect([batch.batch, batch.seqLen, batch.tokens]).toEqual([2, 6, 4]);
    const three = tok.encode("3")[0]!,
      nine = tok.encode("9")[0]!;
    expect(Array.from(batch.targets)).toEqual([-100, -100, -100, -100, three, 2, -100, -100, nine, 2, -100, -100]);
    expect(Array.from(batch.ids.slice(6))).toEqual([1, nine, tok.encode("=")[0]!, nine, 0, 0]);
  });

  it("fits a handful of examples so greedy sampling reproduces them", () => {
    const { model } = createModel("micro-char", new Rng(1));
    const examples = [
      { prompt: "2+2=", completion: "4" },
      { prompt: "3+5=", completion: "8" },
      { prompt: "1+6=", completion: "7" },
      { prompt: "4+4=", completion: "8" },
    ];
    const history = trainSft(model, tok, examples, { steps: 60, batchSize: 4, lr: 1e-2, rng: new Rng(2) });
    expect(history[0]!.loss).toBeGreaterThan(3);
    expect(history.at(-1)!.loss).toBeLessThan(0.1);
    expect(history[0]!.lr).toBeLessThan(history[10]!.lr); // warm-up
    model.eval();
    const out = sample(
      model,
      tok,
      examples.map((e) => [tok.bosId, ...tok.encode(e.prompt)]),
      { maxNewTokens: 3, temperature: 0, rng: new Rng(3) },
    );
    expect(out.map((s) => s.text)).toEqual(examples.map((e) => e.completion));
    expect(out.every((s) => s.finishReason === "stop")).toBe(true);
  });

  it("rejects bad options and over-long examples by name", () => {
    const { model } = createModel("micro-char", new Rng(1));
    expect(() => trainSft(model, tok, [], { steps: 1, batchSize: 1, lr: 1e-3, rng: new Rng(0) })).toThrow(
      /no examples/,
    );
    expect(() =>
      trainSft(model, tok, [{ prompt: "x".repeat(200), completion: "y" }], {
        steps: 1,
        batchSize: 1,
        lr: 1e-3,
        rng: new Rng(0),
      }),
    ).toThrow(/example 0 has 203 tokens, more than the model's maxSeqLen 128/);
  });
});

describe("SFT until", () => {
  it("stops after the step at which `until` first returns true, and runs every step without it", () => {
    const { model } = createModel("micro-char", new Rng(2));
    const examples = [
      { prompt: "1+1=", completion: "2" },
      { prompt: "2+3=", completion: "5" },
    ];
    const base = { steps: 10, batchSize: 2, lr: 1e-3, rng: new Rng(3) };
    const seen: number[] = [];
    const h = trainSft(model, tok, examples, { ...base, until: (m) => (seen.push(m.step), m.step === 4) });
    expect(h.map((m) => m.step)).toEqual([1, 2, 3, 4]);
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(trainSft(model, tok, examples, { ...base, rng: new Rng(3) })).toHaveLength(10);
  });
});
