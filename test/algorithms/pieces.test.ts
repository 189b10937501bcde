/**
 * Presets, step metrics, zero-std decisions, multi-term rewards and the off-policy pieces
 * (spec §8, §9, §10, §11.3, §11.5).
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { overlongPenalty as rewardsOverlong } from "../../src/rewards/length.js";
import {
  PRESETS,
  advantageOptionsOf,
  lossOptionsOf,
  rewardMetrics,
  advantageMetrics,
  lengthMetrics,
  passAtK,
  isInformative,
  selectGroups,
  resampleDecision,
  isWeights,
  exgrpoShape,
  wd1GroupLoss,
  overlongPenalty,
  meanOnly,
  computeAdvantages,
  sumThenNormalize,
  normalizeThenSum,
  zScore,
  policyLoss,
} from "../../src/algorithms/index.js";
import { AlgorithmSchema } from "../../src/trainer/config.js";
import { PRESETS as TRAINER_PRESETS } from "../../src/trainer/presets.js";
import { resolveConfig } from "../../src/trainer/recipe.js";

const close = (got: readonly number[], want: readonly number[], tol = 1e-6) =>
  got.forEach((g, i) => expect(Math.abs(g - want[i]!), `index ${i}: ${g} vs ${want[i]}`).toBeLessThanOrEqual(tol));

describe("presets (§10)", () => {
  it.each(Object.keys(PRESETS))("%s validates against the recipe schema", (name) => {
    const p = PRESETS[name as keyof typeof PRESETS];
    expect(() => AlgorithmSchema.parse(p.algorithm)).not.toThrow();
  });
  // A recipe that names a preset must train with exactly that preset's algorithm (through the trainer's merge and
  // the schema's defaults), and with the preset's group size where the paper sets one.
  it.each(Object.keys(PRESETS))("a recipe with preset %s resolves to that preset's algorithm", (name) => {
    const preset = PRESETS[name as keyof typeof PRESETS];
    const recipe = { name: "p", preset: name, model: { type: "new" }, task: { name: "addition" } };
    const resolved = resolveConfig(recipe as Parameters<typeof resolveConfig>[0]);
    expect(resolved.algorithm).toEqual(AlgorithmSchema.parse(preset.algorithm));
    if ("groupSize" in preset) expect(resolved.train.groupSize).toBe(preset.groupSize);
    expect(Object.keys(TRAINER_PRESETS)).toContain(name);
  });
  it("a recipe's own fields win over its preset's", () => {
    const recipe = { name: "p", preset: "dapo", model: { type: "new" }, task: { name: "addition" } };
    const over = resolveConfig({ ...recipe, algorithm: { kl: { beta: 0.5 } } } as Parameters<typeof resolveConfig>[0]);
    expect(over.algorithm.kl.beta).toBe(0.5);
    expect(over.algorithm.policy).toEqual(AlgorithmSchema.parse(PRESETS.dapo.algorithm).policy);
  });
  it("grpo is the card's sketch and the spec defaults", () => {
    const g = PRESETS.grpo.algorithm;
    expect(g).toMatchObject({
      advantage: { type: "zScore", std: "sample", eps: 1e-4 },
      policy: { clip: { type: "none" } },
      kl: { beta: 0.04, estimator: "k3", placement: "loss" },
      loss: { aggregation: "seqMeanTokenMean", entropyCoef: 0 },
    });
    expect(PRESETS.grpo.groupSize).toBe(8);
    expect(AlgorithmSchema.parse(g)).toEqual(AlgorithmSchema.parse({})); // a bare config is grpo
  });
  it("option helpers turn presets into function options", () => {
    expect(lossOptionsOf(PRESETS.reinforcePlusPlus.algorithm).beta).toBe(0); // KL goes to the reward
    expect(lossOptionsOf(PRESETS.grpo.algorithm).beta).toBe(0.04);
    const b = { logp: [[-1]], oldLogp: [[-1]], refLogp: [[-1.5]], mask: [[1]], advantages: [1] };
    expect(() => policyLoss(b, lossOptionsOf(PRESETS.drGrpo.algorithm, 16))).not.toThrow();
    expect(advantageOptionsOf(PRESETS.dapo.algorithm)).toMatchObject({ type: "zScore", zeroStd: "resample" });
    const drGrpo = computeAdvantages([[1, 0, 0, 0]], advantageOptionsOf(PRESETS.drGrpo.algorithm));
    expect(drGrpo.advantages[0]).toEqual([0.75, -0.25, -0.25, -0.25]);
  });
});

describe("step metrics (§9)", () => {
  it("reward and group metrics", () => {
    const rewards = [
      [1, 0, 0, 1],
      [1, 1, 1, 1],
      [null, null, 1],
    ];
    const format = [
      [1, 1, 0, 1],
      [1, 1, 1, 1],
      [null, null, 1],
    ];
    const m = rewardMetrics(rewards, { correct: rewards, terms: { format } });
    expect(m["reward/nullFrac"]).toBeCloseTo(2 / 11, 12);
    expect(m["reward/mean"]).toBeCloseTo(7 / 9, 12);
    expect(m["reward/std"]).toBeCloseTo(Math.sqrt(7 / 9 - (7 / 9) ** 2), 12);
    expect(m["reward/groupStdMean"]).toBeCloseTo((0.57735026919 + 0) / 2, 9);
    expect(m["groups/zeroStdFrac"]).toBe(0.5);
    expect(m["groups/singletonFrac"]).toBeCloseTo(1 / 3, 12);
    expect(m["groups/allCorrectFrac"]).toBeCloseTo(2 / 3, 12);
    expect(m["groups/allWrongFrac"]).toBe(0);
    expect(m["reward/format/mean"]).toBeCloseTo(8 / 9, 12);
  });
  it("absent inputs give absent keys", () => {
    expect(rewardMetrics([[null, null]])).toEqual({ "reward/nullFrac": 1, "groups/singletonFrac": 1 });
    expect(advantageMetrics([])).toEqual({});
  });
  it("advantage and length metrics", () => {
    expect(advantageMetrics([1, -1, 0.5, -0.5])).toEqual({
      "adv/mean": 0,
      "adv/std": Math.sqrt(0.625),
      "adv/absMean": 0.75,
      "adv/min": -1,
      "adv/max": 1,
    });
    expect(lengthMetrics([4, 10, 6], ["stop", "length", "stop"])).toEqual({
      "length/mean": 20 / 3,
      "length/min": 4,
      "length/max": 10,
      "length/terminatedMean": 5,
      "length/truncatedFrac": 1 / 3,
      "length/errorFrac": 0,
    });
  });
  it("pass@k, n = 8, c = 2 (§11.5)", () => {
    close(
      [1, 2, 4, 8].map((k) => passAtK(8, 2, k)),
      [0.25, 0.464286, 0.785714, 1.0],
    );
    expect(passAtK(5, 0, 3)).toBe(0);
    expect(() => passAtK(4, 1, 5)).toThrow(/k <= n/);
  });
});

describe("zero-std policy (§1.7)", () => {
  const rewards = [
    [1, 1, 1],
    [1, 0, 1],
    [null, 1, null],
    [0, 0, 1],
    [0.5, 0.5, 0.5],
  ];
  it("informative groups", () => expect(rewards.map(isInformative)).toEqual([false, true, false, true, false]));
  it("keep / drop / resample selections", () => {
    expect(selectGroups(rewards, "keep")).toEqual([0, 1, 2, 3, 4]);
    expect(selectGroups(rewards, "drop")).toEqual([1, 3]);
    expect(selectGroups(rewards, "resample", 1)).toEqual([1]); // surplus cut in generation order
  });
  it("resample decisions", () => {
    expect(resampleDecision(8, 8, 1)).toBe("train");
    expect(resampleDecision(3, 8, 2)).toBe("generateMore");
    expect(resampleDecision(3, 8, 10)).toBe("exhausted");
    expect(resampleDecision(0, 8, 10)).toBe("skipStep");
  });
});

describe("§11.3 multi-term rewards", () => {
  const terms = [
    { values: [[1, 0, 0, 1]], weight: 1 },
    { values: [[1, 1, 0, 1]], weight: 0.5 },
  ];
  it("sumThenNormalize", () => {
    const r = sumThenNormalize(terms);
    expect(r).toEqual([[1.5, 0.5, 0, 1.5]]);
    close(zScore(r[0]!), [0.833222, -0.499933, -1.166511, 0.833222]);
  });
  it("normalizeThenSum (GDPO)", () => close(normalizeThenSum(terms)[0]!, [0.825528, -0.455684, -1.195372, 0.825528]));
  it("a null weighted term makes the completion null; a null zero-weight term does not", () => {
    const summed = sumThenNormalize([
      { values: [[1, null]], weight: 1 },
      { values: [[1, 1]], weight: 0.5 },
    ]);
    expect(summed).toEqual([[1.5, null]]);
    expect(
      sumThenNormalize([
        { values: [[1, 0]], weight: 1 },
        { values: [[null, 1]], weight: 0 },
      ]),
    ).toEqual([[1, 0]]);
  });
});

describe("§11.5 off-policy pieces and small formulas", () => {
  it("TIS and masks", () => {
    close(isWeights([0.1, 0.9, -0.2, -2.0], "tokenTruncate", { cap: 2 }), [1.105171, 2.0, 0.818731, 0.135335]);
    close(isWeights([0.1, 0.9, -0.2, -2.0], "tokenMask", { capMin: 0.5, capMax: 2 }), [1.105171, 0, 0.818731, 0]);
    close(isWeights([0.1, 0.9, -0.2], "sequenceTruncate", { cap: 2 }), [2, 2, 2]);
    close(isWeights([0.1, 0.9, -0.2], "sequenceMask", { capMin: 0.5, capMax: 3 }), [2.225541, 2.225541, 2.225541]);
    expect(isWeights([0.3], "none")).toEqual([1]);
  });
  it("ExGRPO shaped ratio and mixed group", () => {
    close(
      [0.5, 1, 2].map((w) => exgrpoShape(w).value),
      [0.833333, 0.909091, 0.952381],
    );
    close(
      [0.5, 1, 2].map((w) => exgrpoShape(w).dLogp),
      [0.138889, 0.082645, 0.045351],
    );
    close(meanOnly([1, 1, 0, 0]), [0.5, 0.5, -0.5, -0.5]);
  });
  it("wd1 weights and group loss", () => {
    const A = meanOnly([1, 0, 0]);
    close(A, [0.666667, -0.333333, -0.333333]);
    const r = wd1GroupLoss(A, [-10, -12, -6]);
    close(r.wPlus, [0.576117, 0.211942, 0.211942]);
    close(r.wMinus, [0.155362, 0.422319, 0.422319]);
    expect(r.loss).toBeCloseTo(0.420754, 6);
    close(r.grad, [-0.420754, 0.210377, 0.210377]);
    // Σ(w⁺ − w⁻) = 0: adding a constant to every ℓ leaves L_g unchanged.
    expect(wd1GroupLoss(A, [-7, -9, -3]).loss).toBeCloseTo(r.loss, 12);
  });
  it("overlong punishment", () => {
    const got = [10, 16, 17, 18, 20, 21].map((L) => overlongPenalty(L, { maxLen: 20, cache: 4 }));
    close(got, [0, 0, -0.25, -0.5, -1, -1]);
  });
  it('the trainer\'s overlong term equals the standalone "overlong" reward checker', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 400 }),
        fc.integer({ min: 0, max: 400 }),
        fc.integer({ min: 0, max: 500 }),
        fc.double({ min: 0.1, max: 4, noNaN: true }),
        (maxLen, cacheRaw, L, factor) => {
          const o = { maxLen, cache: cacheRaw % (maxLen + 1), factor };
          return Math.abs(overlongPenalty(L, o) - rewardsOverlong(L, o)) < 1e-12;
        },
      ),
    );
  });
});
