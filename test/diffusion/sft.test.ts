/** SFT of a masked-diffusion LM through the SFT entry point (src/trainer/sft.ts → diffusion-step.ts). */
import { describe, expect, it } from "vitest";
import { noGrad } from "../../src/engine/index.js";
import { createDiffusionModel, createModel, lladaLoss } from "../../src/models/index.js";
import { sampleDiffusion } from "../../src/sampling/index.js";
import { maskedBatchOfSft } from "../../src/trainer/diffusion-step.js";
import { encodeExample, makeSftBatch, trainSft } from "../../src/trainer/sft.js";
import { Rng } from "../../src/util/index.js";

describe("diffusion SFT", () => {
  it("unshifts the SFT batch, pads with eos and masks only completion and eos padding", () => {
    const { tokenizer } = createDiffusionModel("micro-char", new Rng(0), { nLayers: 1 });
    const enc = [
      encodeExample(tokenizer, { prompt: "a", completion: "bc" }),
      encodeExample(tokenizer, { prompt: "a", completion: "b" }),
    ];
    const m = maskedBatchOfSft(makeSftBatch(enc, tokenizer.padId));
    const [a, b, c] = tokenizer.encode("abc");
    const { bosId: bos, eosId: eos } = tokenizer;
    expect(m.seqLen).toBe(5);
    expect(Array.from(m.ids)).toEqual([bos, a, b, c, eos, bos, a, b, eos, eos]);
    expect(Array.from(m.maskable)).toEqual([0, 0, 1, 1, 1, 0, 0, 1, 1, 1]);
  });

  it("lowers the LLaDA loss on a tiny set (held fixed masks), and the decoder's SFT is untouched", () => {
    const { model, tokenizer } = createDiffusionModel("micro-char", new Rng(1));
    const data = ["12", "34", "56", "78"].map((d, i) => ({ prompt: `q${i}:`, completion: d }));
    const enc = data.map((e) => encodeExample(tokenizer, e));
    const batch = maskedBatchOfSft(makeSftBatch(enc, tokenizer.padId));
    const held = () => {
      model.eval();
      const ls = [0, 1, 2, 3, 4, 5, 6, 7].map((s) => noGrad(() => lladaLoss(model, batch, new Rng(100 + s))).item());
      return ls.reduce((x, y) => x + y, 0) / ls.length;
    };
    const before = held();
    const hist = trainSft(model, tokenizer, data, { steps: 300, batchSize: 4, lr: 1e-2, rng: new Rng(2) });
    const after = held();
    expect(hist).toHaveLength(300);
    expect(after).toBeLessThan(0.5 * before);
    // it has learnt the answers: greedy decoding reproduces them, then eos
    const out = sampleDiffusion(
      model,
      tokenizer,
      enc.map((e) => e.ids.slice(0, e.completionStart)),
      {
        genLength: 3,
        steps: 3,
        rng: new Rng(3),
      },
    );
    expect(out.filter((s, i) => s.text === data[i]!.completion).length).toBe(4);

    // the decoder's SFT takes the next-token path (its loss is the shifted cross-entropy, unchanged)
    const ar = createModel("micro-char", new Rng(1), { nLayers: 1 });
    const h = trainSft(ar.model, ar.tokenizer, data, { steps: 2, batchSize: 4, lr: 1e-2, rng: new Rng(2) });
    expect(h[0]!.loss).toBeGreaterThan(4); // ≈ log 99 at init
  });
});
