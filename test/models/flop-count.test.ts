/**
 * src/models/flop-count.ts against hand counts. The GPT shape of bench:engine (4 layers, d 256, 4 heads, dFf 1024,
 * vocab 512, batch 8 × seq 128) is the issue-21 figure of 21.7 GFLOP per training step.
 */
import { describe, expect, it } from "vitest";
import { parseTransformerConfig } from "../../src/models/config.js";
import { forwardFlop, rlStepFlop, sampleFlop, trainStepFlop } from "../../src/models/flop-count.js";

/** A small Llama with grouped KV heads and its own head dim (q = 4·8 = 32, kv = 2·8 = 16). */
const SMALL_LLAMA = parseTransformerConfig({
  arch: "llama",
  vocabSize: 100,
  dModel: 64,
  nLayers: 2,
  nHeads: 4,
  nKvHeads: 2,
  headDim: 8,
  dFf: 96,
  maxSeqLen: 32,
});

describe("FLOP counts", () => {
  it("GPT: 7.25 GFLOP forward, 21.7 per training step, by hand", () => {
    const c = parseTransformerConfig({
      arch: "gpt2",
      vocabSize: 512,
      dModel: 256,
      nLayers: 4,
      nHeads: 4,
      nKvHeads: 4,
      dFf: 1024,
      maxSeqLen: 128,
    });
    // Per layer: projections 4·256² = 262,144 and MLP 2·256·1024 = 524,288 weights, times 2 FLOP times 1,024 tokens;
    // attention 2·2·8·4·128²·64 = 134,217,728; head 2·1,024·256·512 = 268,435,456.
    const perLayer = 2 * 1024 * (262_144 + 524_288) + 134_217_728;
    expect(forwardFlop(c, 8, 128)).toBe(4 * perLayer + 268_435_456);
    expect(forwardFlop(c, 8, 128)).toBe(7_247_757_312);
    expect(trainStepFlop(c, 8, 128) / 1e9).toBeCloseTo(21.74, 2);
  });

  it("Llama: grouped KV heads, a gated MLP, and its own head dim", () => {
    const c = SMALL_LLAMA;
    // q = 4·8 = 32, kv = 2·8 = 16: projections 64·32 + 2·64·16 + 32·64 = 6,144; MLP 3·64·96 = 18,432;
    // 2 rows × 10 tokens: linear 2·20·24,576 = 983,040; attention 4·2·4·10²·8 = 25,600; head 2·20·64·100 = 256,000.
    expect(forwardFlop(c, 2, 10)).toBe(2 * (983_040 + 25_600) + 256_000);
    expect(trainStepFlop(c, 2, 10)).toBe(3 * 2_273_280);
  });

  it("sampling with a KV cache: a prefill forward, then one token's products and causal attention per new token", () => {
    const c = SMALL_LLAMA;
    // Prefill of 2 rows × 10 tokens: 2,273,280 (above). New token i (0-based) attends to 11 + i keys: per row and
    // layer 2·24,576 + 4·4·(11 + i)·8; the head 2·64·100 = 12,800 per row.
    const token = (i: number) => 2 * (2 * (2 * 24_576 + 4 * 4 * (11 + i) * 8) + 12_800);
    expect(sampleFlop(c, 2, 10, 0)).toBe(2_273_280);
    expect(sampleFlop(c, 2, 10, 3)).toBe(2_273_280 + token(0) + token(1) + token(2));
    // A GRPO step: sampling, a reference forward over prompt + completion (13 tokens), and a training step.
    const shape = { rows: 2, promptTokens: 10, completionTokens: 3, reference: true, oldPolicy: false };
    const step = sampleFlop(c, 2, 10, 3) + forwardFlop(c, 2, 13) + trainStepFlop(c, 2, 13);
    expect(rlStepFlop(c, shape)).toBe(step);
    expect(rlStepFlop(c, { ...shape, oldPolicy: true })).toBe(step + forwardFlop(c, 2, 13));
    expect(rlStepFlop(c, { ...shape, reference: false })).toBe(step - forwardFlop(c, 2, 13));
  });
});
