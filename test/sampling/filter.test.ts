import { describe, expect, it } from "vitest";
import { drawToken } from "../../src/sampling/filter.js";
import { Rng } from "../../src/util/index.js";

// probabilities at T = 1: [0.5, 0.25, 0.125, 0.125]
const logits = Float32Array.from([Math.log(0.5), Math.log(0.25), Math.log(0.125), Math.log(0.125)]);

function histogram(opts: { temperature: number; topK: number; topP: number }, n = 4000): number[] {
  const rng = new Rng(11);
  const counts = [0, 0, 0, 0];
  for (let i = 0; i < n; i++) counts[drawToken(logits, opts, rng).token]! += 1;
  return counts.map((c) => c / n);
}

describe("drawToken", () => {
  it("draws from softmax(logits / T)", () => {
    const h = histogram({ temperature: 1, topK: 0, topP: 1 });
    [0.5, 0.25, 0.125, 0.125].forEach((p, i) => expect(Math.abs(h[i]! - p)).toBeLessThan(0.03));
  });
  it("top-k keeps the k most likely tokens, renormalised", () => {
    const h = histogram({ temperature: 1, topK: 2, topP: 1 });
    expect(h[2]! + h[3]!).toBe(0);
    expect(Math.abs(h[0]! - 2 / 3)).toBeLessThan(0.03);
  });
  it("top-p keeps the smallest prefix reaching p (the crossing token included)", () => {
    expect(histogram({ temperature: 1, topK: 0, topP: 0.5 })).toEqual([1, 0, 0, 0]);
    const h = histogram({ temperature: 1, topK: 0, topP: 0.6 });
    expect(h[2]! + h[3]!).toBe(0);
    expect(h[1]!).toBeGreaterThan(0.25);
  });
  it("records the unfiltered log-prob at the temperature", () => {
    const rng = new Rng(1);
    for (const [t, k, p] of [
      [1, 2, 1],
      [0.5, 0, 0.6],
      [2, 1, 1],
    ] as const) {
      const { token, logprob } = drawToken(logits, { temperature: t, topK: k, topP: p }, rng);
      const z = Array.from(logits).reduce((s, x) => s + Math.exp(x / t), 0);
      expect(logprob).toBeCloseTo(logits[token]! / t - Math.log(z), 6);
    }
  });
  it("temperature 0 is greedy with the T = 1 log-prob", () => {
    expect(drawToken(logits, { temperature: 0, topK: 0, topP: 1 }, new Rng(1))).toEqual({
      token: 0,
      logprob: expect.closeTo(Math.log(0.5), 6),
    });
  });
});
