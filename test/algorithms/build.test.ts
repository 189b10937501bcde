/**
 * `buildAlgorithm` on hand-computed numbers: where KL goes (one decision for loss, reward, monitor), the adaptive
 * controller's update, the KL it reads, GDPO through the task's term weights (spec §11.3), reward shaping (§8.4, §4)
 * and the resample decision (§1.7).
 */
import { describe, expect, it } from "vitest";
import {
  AlgorithmSchema,
  adaptiveBeta,
  buildAlgorithm,
  klPlan,
  type CompletionNumbers,
} from "../../src/algorithms/index.js";

const build = (raw: object, termWeights?: Record<string, number>) =>
  buildAlgorithm(AlgorithmSchema.parse(raw), { maxCompletionTokens: 10, ...(termWeights ? { termWeights } : {}) });

describe("klPlan: where KL goes, decided once (§2.4)", () => {
  it.each([
    [{ beta: 0.04 }, { reference: true, inLoss: true, inReward: false }],
    [
      { beta: 0.04, placement: "reward" },
      { reference: true, inLoss: false, inReward: true },
    ],
    [{ beta: 0 }, { reference: false, inLoss: false, inReward: false }],
    [
      { beta: 0, monitorOnly: true },
      { reference: true, inLoss: false, inReward: false },
    ],
    [
      { beta: 0.04, placement: "reward", monitorOnly: true },
      { reference: true, inLoss: false, inReward: false },
    ],
  ])("%j", (kl, want) => {
    const plan = klPlan(AlgorithmSchema.parse({ kl }));
    expect(plan).toMatchObject(want);
    expect(build({ kl }).lossOptions(0.3).beta).toBe(want.inLoss ? 0.3 : 0);
  });
});

describe("the β controller", () => {
  it("adaptive: β(1 + clip(KL/target − 1, ±0.2)·n/H)", () => {
    expect(adaptiveBeta(0.1, 0.11, 100, 0.1, 1000)).toBeCloseTo(0.1 * (1 + 0.1 * 0.1), 15);
    expect(adaptiveBeta(0.1, 5, 100, 0.1, 1000)).toBeCloseTo(0.1 * 1.02, 15); // clipped at +0.2
    expect(adaptiveBeta(0.1, 0, 100, 0.1, 1000)).toBeCloseTo(0.1 * 0.98, 15); // clipped at −0.2
  });
  it("fixed, or no KL observed: β unchanged", () => {
    expect(build({ kl: { controller: "fixed" } }).nextBeta(0.1, 5, 100)).toBe(0.1);
    expect(build({ kl: { controller: "adaptive" } }).nextBeta(0.1, undefined, 100)).toBe(0.1);
  });
  it("reads the token mean over m·s of k1 (KL in the reward) or the loss's estimator, at lp_old", () => {
    // Two tokens trained (the third masked, the second outside the section): Δ = lp_ref − lp_old.
    const c: CompletionNumbers = {
      reward: 1,
      terms: {},
      mask: [1, 1, 0],
      oldLogp: [-1, -2, -3],
      refLogp: [-1.5, -1.8, -9],
      klMask: [1, 1, 1],
    };
    const k1 = (0.5 + -0.2) / 2; // lp_old − lp_ref
    const k3 = (Math.exp(-0.5) + 0.5 - 1 + Math.exp(0.2) - 0.2 - 1) / 2;
    expect(build({ kl: { placement: "reward", estimator: "k3" } }).observedKl([c])).toBeCloseTo(k1, 12);
    expect(build({ kl: { placement: "loss", estimator: "k3" } }).observedKl([c])).toBeCloseTo(k3, 12);
    expect(build({ kl: { placement: "reward" } }).observedKl([{ ...c, klMask: [1, 0, 1] }])).toBeCloseTo(0.5, 12);
    expect(build({ kl: { beta: 0 } }).observedKl([c])).toBeUndefined();
  });
});

describe("advantages through buildAlgorithm", () => {
  const c = (reward: number, acc: number, format: number): CompletionNumbers => ({
    reward,
    terms: { acc, format },
    mask: [1],
    oldLogp: [-1],
  });
  const group = [c(1.5, 1, 1), c(0.5, 0, 1), c(0, 0, 0), c(1.5, 1, 1)];
  it("sumThenNormalize: the weighted sum's z-score (§11.3)", () => {
    const a = build({}, { acc: 1, format: 0.5 }).advantages([group], 0).advantages[0]!;
    a.forEach((x, i) => expect(x).toBeCloseTo([0.833222, -0.499933, -1.166511, 0.833222][i]!, 6));
  });
  it("normalizeThenSum: each term z-scored, summed with the task's weights, batch-standardised (§11.3)", () => {
    const gdpo = build({ rewardAggregate: "normalizeThenSum" }, { acc: 1, format: 0.5 });
    const a = gdpo.advantages([group], 0).advantages[0]!;
    a.forEach((x, i) => expect(x).toBeCloseTo([0.825528, -0.455684, -1.195372, 0.825528][i]!, 5));
  });
  it("normalizeThenSum without the task's term weights is an error, not a silent sum", () => {
    expect(() => build({ rewardAggregate: "normalizeThenSum" })).toThrow(/termWeights/);
  });
});

describe("reward shaping and resampling", () => {
  it("overlong (L_max 10, bufferFrac 0.2, so L_c 2) and the truncation policies", () => {
    const a = build({ overlong: { enabled: true } });
    const at = (length: number, truncated = false) => ({ reward: 1, terms: { acc: 1 }, length, truncated });
    expect([7, 8, 9, 10, 11].map((length) => a.shapeReward(at(length)).reward)).toEqual([1, 1, 0.5, 0, 0]);
    expect(a.shapeReward(at(9)).terms).toEqual({ acc: 1, overlong: -0.5 });
    expect(a.shapeReward({ reward: null, terms: {}, length: 11, truncated: true }).reward).toBeNull();
    expect(build({ truncated: "zeroReward", overlong: { enabled: true } }).shapeReward(at(10, true))).toEqual({
      reward: 0,
      terms: { acc: 0, overlong: 0 },
      maskAll: false,
    });
    expect(build({ truncated: "mask" }).shapeReward(at(10, true)).maskAll).toBe(true);
    expect(build({ truncated: "mask" }).shapeReward(at(4)).maskAll).toBe(false);
  });
  it("resample asks for batches until `want` informative groups or maxGenBatches; other policies train at once", () => {
    const rewards = [
      [1, 1],
      [0, 1],
      [0, 0],
    ];
    const r = build({ zeroStd: { policy: "resample", maxGenBatches: 3 } });
    const decisions = [1, 2, 3].map((b) => r.nextGeneration(rewards, 2, b));
    expect(decisions).toEqual(["generateMore", "generateMore", "exhausted"]);
    expect(r.nextGeneration([[0, 0]], 2, 3)).toBe("skipStep");
    expect(r.nextGeneration([...rewards, [1, 0]], 2, 1)).toBe("train");
    expect(r.selectGroups([...rewards, [1, 0], [0, 1]], 2)).toEqual([1, 3]);
    expect(build({ zeroStd: { policy: "drop" } }).nextGeneration(rewards, 5, 1)).toBe("train");
  });
});
