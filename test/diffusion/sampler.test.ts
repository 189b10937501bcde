/** The diffusion sampler (src/sampling/diffusion.ts): schedule, determinism, given tokens, blocks, options. */
import { describe, expect, it } from "vitest";
import { createDiffusionModel } from "../../src/models/index.js";
import { sampleDiffusion, transferSchedule } from "../../src/sampling/index.js";
import { ConfigError, Rng } from "../../src/util/index.js";

const { model, tokenizer } = createDiffusionModel("micro-char", new Rng(11), { nLayers: 1 });
const prompts = [tokenizer.encode("12+3="), tokenizer.encode("7*8=")];

describe("transferSchedule", () => {
  it("spreads masks evenly, the first (n mod steps) steps taking one more (LLaDA)", () => {
    expect(transferSchedule(10, 4)).toEqual([3, 3, 2, 2]);
    expect(transferSchedule(8, 8)).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
    expect(transferSchedule(3, 5)).toEqual([1, 1, 1, 0, 0]);
  });
});

describe("sampleDiffusion", () => {
  it("gives the same answers for the same seed, and other answers for another seed at T = 1", () => {
    const run = (seed: number) =>
      sampleDiffusion(model, tokenizer, prompts, { genLength: 8, steps: 4, temperature: 1, rng: new Rng(seed) });
    expect(run(3)).toEqual(run(3));
    expect(run(3).map((s) => s.generated)).not.toEqual(run(4).map((s) => s.generated));
  });

  it("never changes the given prompt tokens, pads short prompts, and leaves no mask in the answer", () => {
    const seen: Int32Array[] = [];
    const out = sampleDiffusion(model, tokenizer, prompts, {
      genLength: 6,
      steps: 6,
      blockLength: 3,
      temperature: 1,
      rng: new Rng(1),
      onStep: ({ sequences }) => seen.push(sequences),
    });
    const P = 5; // the longer prompt; "7*8=" is left-padded by one
    const given = [...prompts[0]!, tokenizer.padId, ...prompts[1]!];
    for (const x of seen) {
      expect(x).toHaveLength(2 * (P + 6));
      expect([...x.subarray(0, P), ...x.subarray(P + 6, 2 * P + 6)]).toEqual(given);
    }
    for (const s of out) {
      expect(s.generated).toHaveLength(6);
      expect(s.generated).not.toContain(model.maskId);
    }
    expect(seen).toHaveLength(6);
  });

  it("unmasks per step exactly as the schedule says, block by block", () => {
    const counts: number[][] = [];
    let prev: Int32Array | null = null;
    sampleDiffusion(model, tokenizer, prompts, {
      genLength: 8,
      steps: 6,
      blockLength: 4,
      rng: new Rng(2),
      onStep: ({ block, answers }) => {
        const masked = (a: Int32Array | null, b: number) =>
          a ? Array.from(a.subarray(b * 8, b * 8 + 8)).filter((x) => x === model.maskId).length : 8;
        counts.push([0, 1].map((b) => masked(prev, b) - masked(answers, b)));
        // only the current block changes
        for (let b = 0; b < 2; b++) {
          for (let j = 0; j < 8; j++) {
            const inBlock = j >= block * 4 && j < block * 4 + 4;
            if (!inBlock && j >= (block + 1) * 4) expect(answers[b * 8 + j]).toBe(model.maskId);
          }
        }
        prev = answers;
      },
    });
    // 2 blocks of 4 masks in 3 steps each: [2, 1, 1] per block, for both rows
    expect(counts).toEqual([2, 1, 1, 2, 1, 1].map((n) => [n, n]));
  });

  it("decodes fully with one block (blockLength = genLength) and with smaller blocks", () => {
    for (const blockLength of [8, 2]) {
      const out = sampleDiffusion(model, tokenizer, prompts, { genLength: 8, steps: 8, blockLength, rng: new Rng(5) });
      for (const s of out) {
        expect(s.generated.every((t) => t !== model.maskId && t >= 0 && t < tokenizer.vocabSize)).toBe(true);
        const eos = s.generated.indexOf(tokenizer.eosId);
        expect(s.tokens).toEqual(eos < 0 ? s.generated : s.generated.slice(0, eos + 1));
        expect(s.finishReason).toBe(eos < 0 ? "length" : "stop");
        expect(s.text).toBe(tokenizer.decode(s.tokens));
      }
    }
  });

  it("remasking random and lowConfidence both decode, and differ in order", () => {
    const orders: string[] = [];
    for (const remasking of ["lowConfidence", "random"] as const) {
      const trace: string[] = [];
      sampleDiffusion(model, tokenizer, prompts, {
        genLength: 8,
        steps: 8,
        remasking,
        rng: new Rng(9),
        onStep: ({ answers }) =>
          trace.push(Array.from(answers.subarray(0, 8), (t) => (t === model.maskId ? 0 : 1)).join("")),
      });
      expect(trace.at(-1)).toBe("11111111");
      orders.push(trace.join("|"));
    }
    expect(orders[0]).not.toBe(orders[1]);
  });

  it("temperature 0 is greedy: independent of the seed", () => {
    const run = (seed: number) => sampleDiffusion(model, tokenizer, prompts, { genLength: 6, rng: new Rng(seed) });
    expect(run(1)).toEqual(run(2));
  });

  it("refuses bad options by name", () => {
    const base = { genLength: 8, rng: new Rng(0) };
    expect(() => sampleDiffusion(model, tokenizer, prompts, { ...base, blockLength: 3 })).toThrow(/blockLength/);
    expect(() => sampleDiffusion(model, tokenizer, prompts, { ...base, blockLength: 4, steps: 3 })).toThrow(/steps/);
    expect(() => sampleDiffusion(model, tokenizer, prompts, { ...base, genLength: 0 })).toThrow(ConfigError);
    expect(() => sampleDiffusion(model, tokenizer, prompts, { ...base, genLength: 500 })).toThrow(/maxSeqLen/);
  });
});
