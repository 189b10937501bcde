/** Advantage estimators: the worked examples of algorithms spec §11.1–11.2, null and zero-std rules, invariants. */
import { describe, expect, it } from "vitest";
import {
  computeAdvantages,
  meanOnly,
  NullRewardError,
  rloo,
  whiten,
  zScore,
  tokenReturns,
} from "../../src/algorithms/advantages.js";
import { Rng } from "../../src/util/rng.js";

const close = (got: readonly number[], want: readonly number[], tol = 1e-6) => {
  expect(got).toHaveLength(want.length);
  got.forEach((g, i) => expect(Math.abs(g - want[i]!), `index ${i}: ${g} vs ${want[i]}`).toBeLessThanOrEqual(tol));
};

describe("§11.1 group advantages", () => {
  it.each([
    [[1, 0, 0, 1], { eps: 0 }, [0.866025, -0.866025, -0.866025, 0.866025]],
    [[1, 0, 0, 1], {}, [0.865875, -0.865875, -0.865875, 0.865875]],
    [[1, 0, 0, 1], { std: "population" }, [0.9998, -0.9998, -0.9998, 0.9998]],
    [[1, 0, 0, 0], {}, [1.4997, -0.4999, -0.4999, -0.4999]],
    [[1, 0, 0, 0], { std: "population" }, [1.731651, -0.577217, -0.577217, -0.577217]],
    [[1, 0], {}, [0.707007, -0.707007]],
    [[1, null, 0, 0.5], {}, [0.9998, 0, -0.9998, 0]],
    [[null, null, 1], {}, [0, 0, 0]],
    [[1, 1, 1, 1], {}, [0, 0, 0, 0]],
  ] as const)("zScore %j %j", (r, opts, want) => close(zScore(r, opts as never), want));

  it.each([
    [
      [1, 0, 0, 1],
      [0.5, -0.5, -0.5, 0.5],
    ],
    [
      [1, 0, 0, 0],
      [0.75, -0.25, -0.25, -0.25],
    ],
    [
      [null, null, 1],
      [0, 0, 0],
    ],
    [
      [1, 1, 1, 1],
      [0, 0, 0, 0],
    ],
  ])("meanOnly %j", (r, want) => close(meanOnly(r), want));

  it.each([
    [
      [1, 0, 0, 1],
      [0.666667, -0.666667, -0.666667, 0.666667],
    ],
    [
      [1, 0, 0, 0],
      [1.0, -0.333333, -0.333333, -0.333333],
    ],
    [
      [null, null, 1],
      [0, 0, 0],
    ],
  ])("rloo %j", (r, want) => close(rloo(r), want));

  it("a zero-std group's meanOnly and rloo advantages are exactly 0, not rounding residue (§1.7)", () => {
    // 0.4 × 6 sums to 2.4000000000000004 in binary, so r − mean would be −1.1e-16 for every member.
    const g = [0.4, 0.4, 0.4, 0.4, 0.4, 0.4];
    expect(g.reduce((a, b) => a + b, 0) / g.length - 0.4).not.toBe(0);
    expect(meanOnly(g)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(rloo(g)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(rloo([0.1, 0.1, null])).toEqual([0, 0, 0]);
    expect(computeAdvantages([g], { type: "meanOnly" }).advantages[0]).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it("computeAdvantages defaults to zScore sample ε 1e-4 and reports null and zero-std counts", () => {
    const res = computeAdvantages([
      [1, 0, 0, 1],
      [1, 1, 1, 1],
      [null, null, 1],
      [1, null, 0, 0.5],
    ]);
    close(res.advantages[0]!, [0.865875, -0.865875, -0.865875, 0.865875]);
    close(res.advantages[1]!, [0, 0, 0, 0]);
    close(res.advantages[3]!, [0.9998, 0, -0.9998, 0]);
    expect(res.zeroStdGroups).toEqual([false, true, false, false]);
    expect(res.metrics["groups/zeroStdFrac"]).toBeCloseTo(1 / 3, 12); // of groups with n_g >= 2
    expect(res.metrics["groups/singletonFrac"]).toBeCloseTo(1 / 4, 12);
    expect(res.metrics["reward/nullFrac"]).toBeCloseTo(3 / 15, 12);
    expect(res.keep[2]).toEqual([false, false, true]);
    expect(res.keep[1]).toEqual([true, true, true, true]); // keep policy
  });
  it("zeroStd drop and resample remove zero-std groups from the batch", () => {
    for (const zeroStd of ["drop", "resample"] as const) {
      const res = computeAdvantages(
        [
          [1, 0],
          [1, 1],
        ],
        { zeroStd },
      );
      expect(res.keep).toEqual([
        [true, true],
        [false, false],
      ]);
    }
  });
});

describe("invariants", () => {
  const rng = new Rng(3);
  const groups = Array.from({ length: 50 }, () =>
    Array.from({ length: 2 + rng.int(7) }, () => (rng.random() < 0.1 ? null : Math.round(rng.random() * 4) / 2)),
  );
  it("group advantages sum to zero for zScore, meanOnly and rloo", () => {
    for (const type of ["zScore", "meanOnly", "rloo"] as const) {
      for (const g of computeAdvantages(groups, { type, maxNullFrac: 1 }).advantages)
        expect(Math.abs(g.reduce((a, b) => a + b, 0))).toBeLessThan(1e-12);
    }
  });
  it("scaling a group's rewards by a > 0 scales meanOnly and rloo by a and leaves zScore (ε = 0) unchanged", () => {
    const g = [0.3, 1.7, 0.2, 0.9, 1.1];
    const s = g.map((x) => 2.5 * x);
    close(
      meanOnly(s),
      meanOnly(g).map((x) => 2.5 * x),
      1e-12,
    );
    close(
      rloo(s),
      rloo(g).map((x) => 2.5 * x),
      1e-12,
    );
    close(zScore(s, { eps: 0 }), zScore(g, { eps: 0 }), 1e-12);
  });
});

describe("§11.2 batch estimators", () => {
  const rewards = [
    [1, 0, 0, 1],
    [1, 1, 1, 0],
  ];
  const lengths = [
    [2, 4, 3, 1],
    [2, 2, 5, 3],
  ];
  const flat = (a: number[][]) => a.flat();
  it("batchNorm, sequence weighting", () => {
    const r = computeAdvantages(rewards, { type: "batchNorm", weighting: "sequence" });
    close(flat(r.advantages), [0.724569, -1.207615, -1.207615, 0.724569, 0.724569, 0.724569, 0.724569, -1.207615]);
  });
  it("batchNorm, token weighting (μ 0.545455, σ² 0.259740)", () => {
    const w = whiten([1, 0, 0, 1, 1, 1, 1, 0], lengths.flat(), 22);
    expect(w.mean).toBeCloseTo(0.545455, 6);
    expect(w.variance).toBeCloseTo(0.25974, 6);
    const r = computeAdvantages(rewards, { type: "batchNorm", lengths });
    close(flat(r.advantages), [0.891883, -1.070259, -1.070259, 0.891883, 0.891883, 0.891883, 0.891883, -1.070259]);
  });
  it("reinforcePlusPlusBaseline, sequence weighting", () => {
    const r = computeAdvantages(rewards, { type: "reinforcePlusPlusBaseline", weighting: "sequence" });
    close(flat(r.advantages), [1, -1, -1, 1, 0.5, 0.5, 0.5, -1.5]);
  });
  it("reinforcePlusPlusBaseline, token weighting", () => {
    const r = computeAdvantages(rewards, { type: "reinforcePlusPlusBaseline", lengths });
    close(flat(r.advantages), [1.266947, -0.877117, -0.877117, 1.266947, 0.730931, 0.730931, 0.730931, -1.413134]);
  });
  it("token weighting without lengths is an error naming lengths", () => {
    expect(() => computeAdvantages(rewards, { type: "batchNorm" })).toThrow(/lengths/);
  });
  it("G = 1 is valid for batch estimators, and N < 2 gives 0", () => {
    const r = computeAdvantages([[1], [0], [1]], { type: "batchNorm", weighting: "sequence" });
    expect(r.advantages.flat().every((a) => a !== 0)).toBe(true);
    expect(computeAdvantages([[1]], { type: "batchNorm", weighting: "sequence" }).advantages).toEqual([[0]]);
  });
  it("KL in the reward: per-token returns with γ, whitened per token", () => {
    // u = −β k1 per token plus r at the last token; R(t) = Σ_{k≥t} γ^{k−t} u(k).
    close(tokenReturns(1, [0.5, 0.2, 0.1], 0.1, 1, 3), [1 - 0.08, 1 - 0.03, 1 - 0.01], 1e-12);
    close(
      tokenReturns(1, [0.5, 0.2, 0.1], 0.1, 0.5, 3),
      [-0.05 + 0.5 * (-0.02 + 0.5 * 0.99), -0.02 + 0.5 * 0.99, 0.99],
      1e-12,
    );
    const k1 = [
      [
        [0.5, 0.2],
        [0.1, 0.1, 0.1],
      ],
      [[0, 0], [0.3]],
    ];
    const r = computeAdvantages(
      [
        [1, 0],
        [1, 0],
      ],
      {
        type: "batchNorm",
        lengths: [
          [2, 3],
          [2, 1],
        ],
        klInReward: { beta: 0.1, k1 },
      },
    );
    const values = [0.93, 0.98, -0.03, -0.02, -0.01, 1, 1, -0.03];
    const want = whiten(
      values,
      values.map(() => 1),
      8,
    ).out;
    close(r.tokenAdvantages!.flat(2), want, 1e-12);
  });
  it("KL in the reward with a token mask: masked tokens carry no weight and tokenAdvantages span every position", () => {
    const k1 = [[[0.5, 0, 0.2], [0.1]]];
    const r = computeAdvantages([[1, 0]], {
      type: "batchNorm",
      klInReward: { beta: 0.1, k1 },
      tokenMasks: [[[1, 0, 1], [1]]],
    });
    expect(r.tokenAdvantages![0]![0]).toHaveLength(3);
    // Returns: [0.93, 0.98, 0.98] (position 1 masked), [-0.01]; weights [1, 0, 1], [1]; N = 3.
    const want = whiten([0.93, 0.98, 0.98, -0.01], [1, 0, 1, 1], 3).out;
    close(r.tokenAdvantages!.flat(2), want, 1e-12);
    close(r.advantages[0]!, [(want[0]! + want[2]!) / 2, want[3]!], 1e-12);
  });
  it("KL in the reward for group estimators subtracts β Σ k1 before normalising", () => {
    const r = computeAdvantages([[1, 1]], { type: "meanOnly", klInReward: { beta: 0.5, k1: [[[0.2, 0.2], [0]]] } });
    close(r.rewards[0] as number[], [0.8, 1], 1e-12);
    close(r.advantages[0]!, [-0.1, 0.1], 1e-12);
  });
});

describe("null rewards", () => {
  it("more than maxNullFrac nulls stops with an error naming the context", () => {
    expect(() =>
      computeAdvantages([[null, null, 1]], { context: "task countdown, checker countdown-expression" }),
    ).toThrow(NullRewardError);
    expect(() => computeAdvantages([[null, null, 1]], { context: "checker x" })).toThrow(/checker x/);
    expect(() => computeAdvantages([[null, 0, 1]], {})).not.toThrow();
  });
  it('onNull "error" throws at the first null', () => {
    expect(() => computeAdvantages([[1, 0, null, 1]], { onNull: "error" })).toThrow(/group 0, completion 2/);
  });
  it("NaN is not a null: it is rejected", () => {
    expect(() => computeAdvantages([[1, NaN]])).toThrow(/use null/);
  });
  it("bad options name the field and the allowed values", () => {
    expect(() => computeAdvantages([[1, 0]], { type: "grpo" as never })).toThrow(/type.*allowed: zScore/);
    expect(() => computeAdvantages([[1, 0]], { std: "bessel" as never })).toThrow(/std/);
  });
});
