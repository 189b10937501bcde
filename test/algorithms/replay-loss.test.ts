/**
 * ExGRPO's shaped loss on replayed rows (spec §6.8, §11.5): hand-computed values of f(w) = w/(w + c) and its
 * gradient, a mixed batch worked by hand, finite differences, and the algorithm built from a recipe section.
 */
import { describe, expect, it } from "vitest";
import {
  AlgorithmSchema,
  buildAlgorithm,
  policyLoss,
  replayAwareLoss,
  shapedRatio,
  type ReplayLossInput,
} from "../../src/algorithms/index.js";

const close = (got: number, want: number, tol = 1e-6) => expect(Math.abs(got - want)).toBeLessThanOrEqual(tol);

describe("shaped ratio f(w) = w/(w + c)", () => {
  it("matches the spec's fixtures at c = 0.1 and hand values at c = 0.2", () => {
    // §11.5: w = 0.5, 1, 2 → f = 0.833333, 0.909091, 0.952381; ∂f/∂lp = 0.138889, 0.082645, 0.045351
    const f = [0.5, 1, 2].map((w) => shapedRatio(w));
    [0.833333, 0.909091, 0.952381].forEach((v, i) => close(f[i]!.value, v));
    [0.138889, 0.082645, 0.045351].forEach((v, i) => close(f[i]!.dLogp, v));
    // c = 0.2, w = 1: f = 1/1.2 = 0.833333, ∂f/∂lp = 0.2·1/1.2² = 0.138889; w = 0.2: f = 0.5, 0.04/0.16 = 0.25
    close(shapedRatio(1, 0.2).value, 0.833333);
    close(shapedRatio(1, 0.2).dLogp, 0.138889);
    close(shapedRatio(0.2, 0.2).value, 0.5);
    close(shapedRatio(0.2, 0.2).dLogp, 0.25);
  });
});

/** One fresh row (ρ = 1, A = −0.5) and one replayed row (w = 0.5 and 2, A = 0.5), two tokens each. */
const mixed = (): ReplayLossInput => ({
  logp: [
    [-1, -2],
    [-3 + Math.log(0.5), -1 + Math.log(2)],
  ],
  oldLogp: [
    [-1, -2],
    [-3, -1],
  ],
  mask: [
    [1, 1],
    [1, 1],
  ],
  advantages: [-0.5, 0.5],
  replayed: [false, true],
});
const OPTIONS = {
  clip: { type: "ppo" as const, epsLow: 0.2, epsHigh: 0.2, dualClip: null },
  beta: 0,
  aggregation: "tokenMean" as const,
};

describe("replayAwareLoss", () => {
  it("a mixed batch by hand: fresh −ρA, replayed −f(w)A, tokenMean over all four tokens", () => {
    const out = replayAwareLoss(mixed(), OPTIONS);
    // fresh: 2 × 0.5 / 4 = 0.25; replayed: −(0.833333 + 0.952381)·0.5 / 4 = −0.223214
    close(out.loss, 0.25 - 0.223214);
    close(out.metrics["loss/policy"]!, 0.25 - 0.223214);
    // d/dlp: fresh −A·ρ/4 = 0.125; replayed −A·f'/4 = −0.5·0.138889/4, −0.5·0.045351/4
    [0.125, 0.125, -0.017361, -0.005669].forEach((v, k) => close(out.grad[k >> 1]![k & 1]!, v));
    close(out.metrics["replay/shapedRatioMean"]!, (0.833333 + 0.952381) / 2);
  });
  it("has the gradient of its value (central differences)", () => {
    const input = mixed();
    const out = replayAwareLoss(input, OPTIONS);
    const h = 1e-6;
    for (const [i, t] of [
      [0, 0],
      [1, 0],
      [1, 1],
    ] as const) {
      const at = (d: number) => {
        const lp = input.logp.map((r) => [...r]);
        lp[i]![t]! += d;
        return replayAwareLoss({ ...input, logp: lp }, OPTIONS).loss;
      };
      close(out.grad[i]![t]!, (at(h) - at(-h)) / (2 * h), 1e-6);
    }
  });
  it("without replayed rows it is policyLoss exactly; a replayed row is never clipped", () => {
    const { replayed: _, ...plain } = mixed();
    expect(replayAwareLoss({ ...plain, replayed: [false, false] }, OPTIONS)).toEqual(policyLoss(plain, OPTIONS));
    // w = 2 is far outside 1 ± 0.2, yet its gradient is not zero (PPO would zero it for A > 0)
    expect(replayAwareLoss(mixed(), OPTIONS).grad[1]![1]).not.toBe(0);
  });
  it("KL still applies to replayed rows (β > 0): the same KL as policyLoss gives", () => {
    const input = { ...mixed(), refLogp: mixed().oldLogp };
    const withKl = replayAwareLoss(input, { ...OPTIONS, beta: 0.1 });
    const noKl = replayAwareLoss(input, OPTIONS);
    const klOnly = policyLoss({ ...input, advantages: [0, 0] }, { ...OPTIONS, beta: 0.1 });
    close(withKl.loss - noKl.loss, klOnly.loss, 1e-12);
  });
  it("buildAlgorithm reads algorithm.replay.shapeOffset", () => {
    const loss = (shapeOffset: number) => {
      const config = AlgorithmSchema.parse({
        advantage: { type: "meanOnly" },
        policy: { clip: { type: "ppo" } },
        kl: { beta: 0 },
        loss: { aggregation: "tokenMean" },
        replay: { type: "exgrpo", shapeOffset },
      });
      return buildAlgorithm(config, { maxCompletionTokens: 8 }).loss(mixed(), 0, { sequences: 2, tokens: 4 }).loss;
    };
    close(loss(0.1), 0.25 - 0.223214);
    // c = 0.2: f(0.5) = 0.714286, f(2) = 0.909091 → 0.25 − 1.623377·0.5/4
    close(loss(0.2), 0.25 - 0.202922);
  });
});
