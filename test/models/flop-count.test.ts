/**
 * src/models/flop-count.ts against hand counts. The GPT shape of bench:engine (4 layers, d 256, 4 heads, dFf 1024,
 * vocab 512, batch 8 × seq 128) is the issue-21 figure of 21.7 GFLOP per training step.
 */
import { describe, expect, it } from "vitest";
import { parseTransformerConfig } from "../../src/models/config.js";
import { forwardFlop, trainStepFlop } from "../../src/models/flop-count.js";

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
    const c = parseTransformerConfig({
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
    // q = 4·8 = 32, kv = 2·8 = 16: projections 64·32 + 2·64·16 + 32·64 = 6,144; MLP 3·64·96 = 18,432;
    // 2 rows × 10 tokens: linear 2·20·24,576 = 983,040; attention 4·2·4·10²·8 = 25,600; head 2·20·64·100 = 256,000.
    expect(forwardFlop(c, 2, 10)).toBe(2 * (983_040 + 25_600) + 256_000);
    expect(trainStepFlop(c, 2, 10)).toBe(3 * 2_273_280);
  });
});
