/**
 * `algorithm.offPolicy` pieces (spec §5) on hand-computed numbers: w_IS of a batch with its mismatch metrics (the
 * §11.5 δ fixture), rows without inference log-probs, where lp_old comes from, staleness, and w_IS entering the
 * policy loss as a factor on the policy-gradient term only.
 */
import { describe, expect, it } from "vitest";
import {
  correctionWeights,
  isStale,
  OffPolicySchema,
  policyLoss,
  resolveOldLogprobs,
} from "../../src/algorithms/index.js";

const D = OffPolicySchema.parse({});

describe("correctionWeights", () => {
  // lp_inf = 0 so that δ = lp_old: the §11.5 fixture δ = [0.1, 0.9, −0.2, −2.0], last token masked out.
  const old = [[0.1, 0.9, -0.2, -2.0]];
  const inf = [[0, 0, 0, 0]];
  const mask = [[1, 1, 1, 0]];
  it("tokenTruncate, C = 2: w = [1.105171, 2, 0.818731, 0.135335]; metrics over m = 1", () => {
    const c = correctionWeights(old, inf, mask, D);
    c.weights[0]!.forEach((w, t) => expect(w).toBeCloseTo([1.105171, 2, 0.818731, 0.135335][t]!, 6));
    expect(c.metrics["mismatch/logpDiffMean"]).toBeCloseTo(0.4, 12); // (0.1 + 0.9 + 0.2) / 3
    expect(c.metrics["mismatch/logpDiffMax"]).toBeCloseTo(0.9, 12);
    expect(c.metrics["mismatch/isMean"]).toBeCloseTo((1.105171 + 2 + 0.818731) / 3, 6);
    expect(c.metrics["mismatch/isMin"]).toBeCloseTo(0.818731, 6);
    expect(c.metrics["mismatch/isMax"]).toBe(2);
    expect(c.metrics["mismatch/isZeroedFrac"]).toBe(0);
  });
  it("tokenMask [0.5, 2] zeroes e^0.9 (and the masked e^−2 is not counted); sequenceTruncate uses masked Σδ", () => {
    const m = correctionWeights(old, inf, mask, { ...D, correction: "tokenMask" });
    expect(m.weights[0]![1]).toBe(0);
    expect(m.metrics["mismatch/isZeroedFrac"]).toBeCloseTo(1 / 3, 12);
    const s = correctionWeights(old, inf, mask, { ...D, correction: "sequenceTruncate", cap: 3 });
    s.weights[0]!.forEach((w) => expect(w).toBeCloseTo(Math.exp(0.8), 12)); // exp(0.1 + 0.9 − 0.2) = 2.225541 < 3
  });
  it("a row without inference log-probs gets w = 1 and stays out of the metrics; a length mismatch throws", () => {
    const c = correctionWeights([[0.5, 0.5], [-0.1]], [null, [0]], [[1, 1], [1]], D);
    expect(c.weights).toEqual([[1, 1], [Math.exp(-0.1)]]);
    expect(c.metrics["mismatch/logpDiffMax"]).toBeCloseTo(0.1, 12);
    expect(() => correctionWeights([[0, 0]], [[0]], [[1, 1]], D)).toThrow(/row 0 has 1 inference log-probs for 2/);
  });
});

describe("where lp_old comes from, and staleness", () => {
  it("auto is the sampler's for the built-in sampler and recomputed for a remote one; explicit values win", () => {
    expect(resolveOldLogprobs(D, false)).toBe("sampler");
    expect(resolveOldLogprobs(D, true)).toBe("recompute");
    expect(resolveOldLogprobs({ oldLogprobs: "sampler" }, true)).toBe("sampler");
    expect(resolveOldLogprobs({ oldLogprobs: "recompute" }, false)).toBe("recompute");
  });
  it("a rollout is stale when it lags the trainer by more than maxStaleness versions", () => {
    expect(isStale(4, 5, 1)).toBe(false);
    expect(isStale(3, 5, 1)).toBe(true);
    expect(isStale(5, 5, 0)).toBe(false);
    expect(isStale(4, 5, 0)).toBe(true);
  });
});

describe("w_IS in the policy loss", () => {
  it("multiplies the policy-gradient term and its gradient per token; KL is untouched", () => {
    const input = {
      logp: [[-1.0, -0.5]],
      oldLogp: [[-1.2, -0.5]],
      refLogp: [[-1.1, -0.7]],
      mask: [[1, 1]],
      advantages: [0.5],
    };
    const opts = { beta: 0.1, aggregation: "tokenMean" as const };
    const plain = policyLoss(input, opts);
    const noKl = policyLoss(input, { ...opts, beta: 0 });
    const weighted = policyLoss({ ...input, isWeights: [[2, 0.5]] }, opts);
    const weightedNoKl = policyLoss({ ...input, isWeights: [[2, 0.5]] }, { ...opts, beta: 0 });
    // pg(t) = −ρA with ρ = [e^0.2, 1]; token mean over 2 tokens: loss = (−2·e^0.2·0.5 − 0.5·1·0.5) / 2.
    expect(weightedNoKl.loss).toBeCloseTo((-2 * Math.exp(0.2) * 0.5 - 0.5 * 0.5) / 2, 12);
    expect(weightedNoKl.grad[0]![0]).toBeCloseTo(2 * noKl.grad[0]![0]!, 12);
    expect(weightedNoKl.grad[0]![1]).toBeCloseTo(0.5 * noKl.grad[0]![1]!, 12);
    expect(weighted.loss - weightedNoKl.loss).toBeCloseTo(plain.loss - noKl.loss, 12); // the KL part is the same
  });
});
