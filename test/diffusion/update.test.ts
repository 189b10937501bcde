/**
 * The diffusion update (src/trainer/diffusion-step.ts `updateDiffusionPolicy`): the gradient does not depend on the
 * micro-batch split (whole groups, the optimizer batch's normalisers: algorithms spec §3.1), a zero-std batch does not
 * move the weights under wd1, and the mask seed per inner iteration is read.
 */
import { describe, expect, it } from "vitest";
import { AlgorithmSchema, buildAlgorithm } from "../../src/algorithms/index.js";
import { Optimizer, sgd } from "../../src/engine/index.js";
import { createDiffusionModel } from "../../src/models/index.js";
import type { Rollout } from "../../src/rollout/types.js";
import { updateDiffusionPolicy } from "../../src/trainer/diffusion-step.js";
import { Rng } from "../../src/util/index.js";

const WD1 = { advantage: { type: "meanOnly" }, kl: { beta: 0 }, diffusion: { type: "wd1" } } as const;

function rollouts(advantages: number[][]): Rollout[] {
  return advantages.flatMap((g, q) =>
    g.map((advantage, i) => {
      const completionIds = [40 + i, 41 + q, 2].slice(0, 2 + (i % 2));
      return {
        id: `1/${q}/${i}`,
        task: "t",
        exampleId: `e${q}`,
        groupId: `1/${q}`,
        promptIds: [1, 10 + q, 11, 12 + i].slice(0, 3 + q),
        completionIds,
        samplerLogprobs: completionIds.map(() => 0),
        lossMask: completionIds.map(() => 1),
        text: "",
        finishReason: "stop" as const,
        reward: 0,
        terms: {},
        advantage,
        policyVersion: 0,
      };
    }),
  );
}

/** The weights after one update of a fresh micro model. */
function updated(
  adv: number[][],
  microBatchSize: number,
  alg: object = WD1,
  innerIterations = 1,
  seed = 3,
): Float32Array[] {
  const { model } = createDiffusionModel("micro-char", new Rng(5), { nLayers: 1 });
  const params = model.trainableParameters();
  const optimizer = new Optimizer(sgd({ lr: 0.5 }), params);
  updateDiffusionPolicy({
    model,
    optimizer,
    params,
    rollouts: rollouts(adv),
    algorithm: buildAlgorithm(AlgorithmSchema.parse(alg), { maxCompletionTokens: 4 }),
    train: { innerIterations, miniBatches: 1, microBatchSize, maxGradNorm: null },
    temperature: 1,
    beta: 0,
    lr: 0.5,
    rng: new Rng(seed),
    padId: 0,
    warn: () => {},
    genLength: 4,
    seed: 0,
  });
  return params.map(([, p]) => Float32Array.from(p.data));
}

const maxDiff = (a: Float32Array[], b: Float32Array[]) =>
  Math.max(...a.map((x, i) => Math.max(...x.map((v, k) => Math.abs(v - b[i]![k]!)))));

describe("updateDiffusionPolicy", () => {
  const adv = [
    [0.5, -0.25, -0.25],
    [-0.5, 0.25, 0.25],
    [0.2, 0.2, -0.4],
  ];

  it("gives the same weights for micro-batches of one group and of all groups", () => {
    const before = updated([[0, 0, 0]], 3);
    const one = updated(adv, 3);
    const all = updated(adv, 9);
    expect(maxDiff(one, all)).toBeLessThan(1e-6);
    expect(maxDiff(one, updated(adv, 1))).toBeLessThan(1e-6); // a group is never split
    expect(maxDiff(before, one)).toBeGreaterThan(1e-4); // and the update did move the weights
  });

  it("leaves the weights unchanged when every group has zero std (wd1)", () => {
    const zero = [
      [0, 0, 0],
      [0, 0, 0],
    ];
    expect(maxDiff(updated(zero, 3), updated([[0, 0, 0]], 3))).toBe(0);
  });

  it("draws a fresh mask seed per inner iteration from the step's stream", () => {
    expect(maxDiff(updated(adv, 9, WD1, 2, 3), updated(adv, 9, WD1, 2, 4))).toBeGreaterThan(1e-6);
    const fixed = { ...WD1, diffusion: { type: "wd1", randomMasking: false } };
    expect(maxDiff(updated(adv, 9, fixed, 2, 3), updated(adv, 9, fixed, 2, 4))).toBe(0);
  });
});
