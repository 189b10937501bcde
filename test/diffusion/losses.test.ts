/**
 * wd1 and diffu-GRPO (src/algorithms/wd1.ts, diffusion-loss.ts) and the d1 estimator's numbers
 * (masked-estimator.ts): the worked example of algorithms spec §11.5, the properties of algorithms spec §7, a hand-computed 2-group × 3-token
 * example, the config rules, and a flip test for every `algorithm.diffusion` field.
 */
import { describe, expect, it } from "vitest";
import {
  AlgorithmSchema,
  buildDiffusionLoss,
  checkDiffusionAlgorithm,
  completionMask,
  estimatorBatch,
  meanOnly,
  policyLoss,
  wd1GroupLoss,
  wd1Loss,
  type AlgorithmConfigInput,
  type DiffusionGroupInput,
} from "../../src/algorithms/index.js";
import { ConfigError, Rng } from "../../src/util/index.js";

const close = (a: readonly number[], b: readonly number[], digits = 6) =>
  a.forEach((x, i) => expect(x).toBeCloseTo(b[i]!, digits));
const alg = (a: AlgorithmConfigInput) => AlgorithmSchema.parse(a);
const WD1 = { advantage: { type: "meanOnly" }, kl: { beta: 0 }, diffusion: { type: "wd1" } } as const;
const D1 = {
  policy: { clip: { type: "ppo", epsLow: 0.5, epsHigh: 0.5 } },
  kl: { beta: 0.04 },
  loss: { aggregation: "tokenMean" },
  diffusion: { type: "diffuGrpo" },
} as const;

describe("wd1 weights and loss", () => {
  it("reproduces algorithms spec §11.5 (rewards [1, 0, 0], ℓ = [−10, −12, −6])", () => {
    const A = meanOnly([1, 0, 0]);
    close(A as number[], [0.666667, -0.333333, -0.333333]);
    const r = wd1Loss([{ ell: [-10, -12, -6], advantages: A as number[] }]);
    expect(r.loss).toBeCloseTo(0.420754, 6);
    close(r.dEll[0]!, [-0.420754, 0.210377, 0.210377]);
    expect(r.metrics["wd1/wPlusMax"]).toBeCloseTo(0.576117, 6);
  });

  it("Σ(w⁺ − w⁻) = 0, so a constant added to a group's ℓ changes nothing", () => {
    const A = [0.9, -0.2, 0.4, -1.1];
    const { wPlus, wMinus } = wd1GroupLoss(A, [0, 0, 0, 0], 1.7);
    expect(wPlus.reduce((s, p, i) => s + p - wMinus[i]!, 0)).toBeCloseTo(0, 12);
    const ell = [-3, -8, -1.5, -20];
    const base = wd1Loss([{ ell, advantages: A }], { psi: 1.7 }).loss;
    expect(wd1Loss([{ ell: ell.map((l) => l + 37.5), advantages: A }], { psi: 1.7 }).loss).toBeCloseTo(base, 9);
  });

  it("a zero-std group has w⁺ = w⁻ = 1/G and zero gradient", () => {
    const g = wd1GroupLoss([0, 0, 0], [-4, -9, -1]);
    close(g.wPlus, [1 / 3, 1 / 3, 1 / 3], 12);
    const r = wd1Loss([{ ell: [-4, -9, -1], advantages: [0, 0, 0] }]);
    expect(r.dEll[0]!.every((d) => d === 0)).toBe(true);
    expect(r.loss).toBe(0);
  });

  it("matches a hand computation on 2 groups × 3 completions of 3 tokens, eos cutting the mask", () => {
    const lp = [
      [
        [-1, -2, -3],
        [-0.5, -0.5, -4],
        [-2, -1, -1],
      ],
      [
        [-1, -1, -1],
        [-3, -0.2, -0.1],
        [-0.4, -0.6, -2],
      ],
    ];
    const EOS = 2;
    const ids = [
      [
        [5, 6, 7],
        [5, EOS, EOS],
        [EOS, EOS, EOS],
      ],
      [
        [5, 6, 7],
        [5, 6, 7],
        [5, EOS, EOS],
      ],
    ];
    const rewards = [
      [1, 0, 0],
      [1, 1, 0],
    ];
    const groups: DiffusionGroupInput[] = lp.map((g, k) => ({
      logp: g,
      mask: ids[k]!.map((row) => completionMask(row, EOS)),
      advantages: meanOnly(rewards[k]!) as number[],
    }));
    expect(groups[0]!.mask).toEqual([
      [1, 1, 1],
      [1, 1, 0],
      [1, 0, 0],
    ]);
    // by hand: ℓ = [−6, −1, −2] and [−3, −3.3, −1]; L_1 = 1.893395, L_2 = 0.904622; L = (L_1 + L_2)/2
    const loss = buildDiffusionLoss(alg(WD1), { maxCompletionTokens: 3 });
    const r = loss.loss(groups, 0, { groups: 2, sequences: 6, tokens: 14 });
    expect(r.loss).toBeCloseTo((1.8933951657 + 0.9046221347) / 2, 8);
    // dL/dlp(i,t) = m(i,t)·dL/dℓ_i, with dL/dℓ = −(w⁺ − w⁻)/Q
    expect(r.grad[0]![1]).toEqual([expect.closeTo(0.1051886, 6), expect.closeTo(0.1051886, 6), 0]);
    expect(r.grad[1]![2]).toEqual([expect.closeTo(0.2103772, 6), expect.closeTo(0.2103772, 6), 0]);
    // tokens after eos do not count: changing their lp changes nothing
    const moved = groups.map((g) => ({
      ...g,
      logp: g.logp.map((row, i) => row.map((x, t) => (g.mask[i]![t] ? x : x - 50))),
    }));
    expect(loss.loss(moved, 0, { groups: 2, sequences: 6, tokens: 14 }).loss).toBeCloseTo(r.loss, 10);
    // Q is the optimizer batch's group count: one group alone, normalised over 2, is half its L_g
    expect(wd1Loss([{ ell: [-6, -1, -2], advantages: groups[0]!.advantages }], { groupsInBatch: 2 }).loss).toBeCloseTo(
      1.8933951657 / 2,
      8,
    );
  });
});

describe("diffu-GRPO", () => {
  const group = (): DiffusionGroupInput => ({
    logp: [
      [-1, -2],
      [-0.5, -0.7],
    ],
    oldLogp: [
      [-2, -2],
      [-0.5, -0.2],
    ],
    refLogp: [
      [-1.5, -2],
      [-0.5, -0.7],
    ],
    mask: [
      [1, 1],
      [1, 0],
    ],
    advantages: [1, -1],
  });

  it("is the clipped-ratio GRPO loss (policyLoss) on the estimator's log-probs, with KL to the reference", () => {
    const d1 = buildDiffusionLoss(alg(D1), { maxCompletionTokens: 2 });
    expect(d1.reference).toBe(true);
    expect(d1.oldLogprobs(1)).toBe(false);
    expect(d1.oldLogprobs(12)).toBe(true);
    const g = group();
    const r = d1.loss([g], 0.04, { groups: 1, sequences: 2, tokens: 3 });
    const ref = policyLoss(
      { logp: g.logp, oldLogp: g.oldLogp!, refLogp: g.refLogp!, mask: g.mask, advantages: g.advantages },
      { clip: { type: "ppo", epsLow: 0.5, epsHigh: 0.5, dualClip: null }, beta: 0.04, aggregation: "tokenMean" },
    );
    expect(r.loss).toBe(ref.loss);
    expect(r.grad).toEqual([ref.grad]);
    // by hand: token (0,0) has ρ = e ≈ 2.718 > 1.5 with A = 1: clipped, so only KL's gradient β(1 − e^{lp_ref−lp})/3
    expect(r.grad[0]![0]![0]).toBeCloseTo((0.04 * (1 - Math.exp(-0.5))) / 3, 9);
    // token (0,1): ρ = 1, unclipped: −A·ρ/3 (KL is 0 there: lp = lp_ref)
    expect(r.grad[0]![0]![1]).toBeCloseTo(-1 / 3, 9);
  });

  it("without old log-probs the ratio is 1 (μ = 1, as d1's detach)", () => {
    const d1 = buildDiffusionLoss(alg({ ...D1, kl: { beta: 0 } }), { maxCompletionTokens: 2 });
    const { oldLogp: _o, refLogp: _r, ...g } = group();
    const r = d1.loss([g], 0, { groups: 1, sequences: 2, tokens: 3 });
    expect(r.metrics["ratio/mean"]).toBe(1);
    expect(r.loss).toBeCloseTo(-(1 + 1 - 1) / 3, 9); // −Σ m·A·ρ / N_tok
  });
});

describe("config rules", () => {
  it("either loss with an autoregressive model is a ConfigError", () => {
    expect(() => checkDiffusionAlgorithm(alg(WD1), "autoregressive")).toThrow(/needs a masked-diffusion model/);
    expect(() => checkDiffusionAlgorithm(alg(D1), "autoregressive")).toThrow(ConfigError);
    expect(() => checkDiffusionAlgorithm(alg({}), "autoregressive")).not.toThrow();
  });

  it("a diffusion model without the estimator (GRPO's token ratio) is a ConfigError", () => {
    expect(() => checkDiffusionAlgorithm(alg({}), "diffusion")).toThrow(/no exact token log-probs/);
    expect(() => checkDiffusionAlgorithm(alg(WD1), "diffusion")).not.toThrow();
    expect(() => checkDiffusionAlgorithm(alg(D1), "diffusion")).not.toThrow();
  });

  it("wd1 with a reference or a clip, and unimplemented pieces, are named", () => {
    expect(() => checkDiffusionAlgorithm(alg({ ...WD1, kl: { beta: 0.04 } }), "diffusion")).toThrow(/kl.beta/);
    expect(() => checkDiffusionAlgorithm(alg({ ...WD1, policy: { clip: { type: "ppo" } } }), "diffusion")).toThrow(
      /policy.clip/,
    );
    expect(() => checkDiffusionAlgorithm(alg({ ...D1, loss: { entropyCoef: 0.1 } }), "diffusion")).toThrow(
      /entropyCoef/,
    );
    expect(() => checkDiffusionAlgorithm(alg({ ...D1, kl: { placement: "reward" } }), "diffusion")).toThrow(
      /placement/,
    );
  });

  it("defaults: type none; wd1 pMaskPrompt 0.15, randomMasking true, the one-shot estimator, ψ 1", () => {
    expect(alg({}).diffusion).toEqual({ type: "none" });
    expect(alg(WD1).diffusion).toEqual({
      type: "wd1",
      pMaskPrompt: 0.15,
      randomMasking: true,
      estimator: "oneShot",
      chunks: 4,
      psi: 1,
    });
    expect(() => alg({ diffusion: { type: "wd1", pMaskPrompt: 1 } })).toThrow();
  });
});

describe("the d1 estimator's input", () => {
  const rows = Array.from({ length: 6 }, (_, i) => ({
    id: `1/0/${i}`,
    promptIds: Array.from({ length: 200 + (i % 2) }, (_, j) => 3 + (j % 50)),
    completionIds: [5, 6, 2],
  }));
  const o = { genLength: 8, maskId: 99, padId: 0, pMaskPrompt: 0.15, seed: 7 };

  it("masks prompt tokens at rate pMaskPrompt and the whole L_gen completion region; pads on the left", () => {
    const b = estimatorBatch(rows, o);
    expect(b.T).toBe(209);
    expect(b.start).toBe(201);
    let masked = 0;
    for (let r = 0; r < 6; r++) {
      for (let j = b.start; j < b.T; j++) expect(b.ids[r * b.T + j]).toBe(99);
      for (let j = 0; j < b.start; j++) if (b.ids[r * b.T + j] === 99) masked++;
      expect(Array.from(b.targets.subarray(r * b.T + b.start, r * b.T + b.start + 4))).toEqual([5, 6, 2, -100]);
    }
    expect(masked / (3 * 200 + 3 * 201)).toBeCloseTo(0.15, 1);
    expect(b.ids[0]).toBe(0); // row 0 has the shorter prompt
    expect(b.attn[0]).toBe(0);
  });

  it("a row's mask depends on the seed and its id, not on the other rows (micro-batch split)", () => {
    const all = estimatorBatch(rows, o);
    const one = estimatorBatch([rows[3]!], o);
    expect(Array.from(one.ids)).toEqual(Array.from(all.ids.subarray(3 * all.T, 4 * all.T)));
    expect(estimatorBatch(rows, { ...o, seed: 8 }).ids).not.toEqual(all.ids);
  });
});

describe("every algorithm.diffusion field is read (flip it, the numbers move)", () => {
  const groups: DiffusionGroupInput[] = [
    {
      logp: [
        [-1, -2],
        [-0.5, -0.7],
        [-3, -0.1],
      ],
      mask: [
        [1, 1],
        [1, 0],
        [1, 1],
      ],
      advantages: [0.5, -0.25, -0.25],
    },
  ];
  const probe = (a: AlgorithmConfigInput) => {
    const l = buildDiffusionLoss(alg(a), { maxCompletionTokens: 2 });
    const batch = estimatorBatch([{ id: "a", promptIds: Array.from({ length: 64 }, () => 5), completionIds: [5] }], {
      genLength: 2,
      maskId: 99,
      padId: 0,
      pMaskPrompt: l.pMaskPrompt,
      seed: 1,
    });
    return {
      loss: l.loss(groups, 0, { groups: 1, sequences: 3, tokens: 5 }).loss,
      seeds: l.maskSeeds(new Rng(3), 3, 42),
      ids: Array.from(batch.ids),
      passes: l.trajectoryPasses,
    };
  };
  it.each([
    ["diffusion.type", WD1, { ...WD1, diffusion: { type: "diffuGrpo" } }],
    ["diffusion.psi", WD1, { ...WD1, diffusion: { type: "wd1", psi: 3 } }],
    ["diffusion.pMaskPrompt", WD1, { ...WD1, diffusion: { type: "wd1", pMaskPrompt: 0.5 } }],
    ["diffusion.randomMasking", WD1, { ...WD1, diffusion: { type: "wd1", randomMasking: false } }],
    ["diffusion.estimator", WD1, { ...WD1, diffusion: { type: "wd1", estimator: "trajectory" } }],
    [
      "diffusion.chunks",
      { ...WD1, diffusion: { type: "wd1", estimator: "trajectory" } },
      { ...WD1, diffusion: { type: "wd1", estimator: "trajectory", chunks: 2 } },
    ],
  ] as [string, AlgorithmConfigInput, AlgorithmConfigInput][])("%s", (_f, base, flipped) => {
    expect(probe(flipped)).not.toEqual(probe(base));
  });
  it("randomMasking false uses the run seed every iteration", () => {
    expect(probe({ ...WD1, diffusion: { type: "wd1", randomMasking: false } }).seeds).toEqual([42, 42, 42]);
  });
});
