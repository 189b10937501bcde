/**
 * TRL's numbers through the trainer's own loss path. Every loss configuration that TRL 1.13 computed
 * (test/fixtures/trl/grpo.json, made by scripts/make-trl-fixtures.py) is written as a recipe `algorithm` section,
 * built with `buildAlgorithm`, and run through the trainer's micro-batch surrogate (`policySurrogate`) on rollout
 * records packed as the trainer packs them. d loss / d lp_θ must equal TRL's to 5e-7 absolute (the gradients are
 * 0.01–0.05; the trainer's lp_θ grid is float32, and test/algorithms/trl-parity.test.ts checks the float64
 * `policyLoss` to 1e-6).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { tensor, backward } from "../../src/engine/index.js";
import { AlgorithmSchema, buildAlgorithm, lossNormalizer } from "../../src/algorithms/index.js";
import { fromTrlGrpo, trlMicroBatchNormalizer, type TrlGrpoOptions } from "../../src/algorithms/trl-options.js";
import { packRollouts } from "../../src/trainer/batch.js";
import { policySurrogate } from "../../src/trainer/policy-update.js";
import type { Rollout } from "../../src/rollout/types.js";

interface LossCase {
  name: string;
  trl: TrlGrpoOptions;
  micro?: { rows: number[]; gradientAccumulationSteps: number };
  trlAdvantages: number[];
  numItemsInBatch: number;
  rows: number[];
  logp: number[][];
  oldLogp: number[][] | null;
  refLogp: number[][] | null;
  mask: number[][];
  grad: number[][];
}

const TOL = 5e-7;
const FIXTURE = new URL("../fixtures/trl/grpo.json", import.meta.url);
const fx = JSON.parse(readFileSync(FIXTURE, "utf8")) as { losses: LossCase[] };

/** The recipe `algorithm` section a user would write for these TRL options (the docs' mapping table). */
function recipeOf(trl: TrlGrpoOptions): object {
  const loss = fromTrlGrpo(trl).loss;
  return {
    policy: { ratio: loss.ratio, clip: loss.clip },
    kl: { beta: loss.beta, estimator: "k3", importanceWeight: loss.klImportanceWeight },
    loss: { aggregation: loss.aggregation },
  };
}

describe("TRL 1.13 loss fixtures through the trainer's loss path", () => {
  it("the fixture file holds loss configurations", () => expect(fx.losses.length).toBeGreaterThan(10));
  it.each(fx.losses.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    const beta = c.trl.beta ?? 0;
    const maxCompletionTokens = c.trl.max_completion_length ?? 8;
    const algo = buildAlgorithm(AlgorithmSchema.parse(recipeOf(c.trl)), { maxCompletionTokens });
    const old = c.oldLogp ?? c.logp; // num_iterations 1: TRL's old log-probs are lp_θ detached
    const rollouts: Rollout[] = c.logp.map((row, b) => ({
      id: `1/0/${b}`,
      task: "t",
      exampleId: "e",
      groupId: "1/0",
      promptIds: [3],
      completionIds: row.map(() => 5),
      samplerLogprobs: old[b]!,
      lossMask: c.mask[b]!,
      text: "",
      finishReason: "stop",
      reward: 0,
      terms: {},
      advantage: c.trlAdvantages[c.rows[b]!]!,
      policyVersion: 0,
      ...(c.refLogp ? { refLogprobs: c.refLogp[b]! } : {}),
    }));
    const p = packRollouts(rollouts, 0);
    const grid = new Float32Array(p.B * p.T);
    c.logp.forEach((row, b) => row.forEach((x, j) => (grid[b * p.T + p.starts[b]! + j] = x)));
    const logp = tensor(grid, [p.B, p.T], { requiresGrad: true });
    const norm = c.micro
      ? trlMicroBatchNormalizer(c.trl.loss_type!, c.mask, c.micro.gradientAccumulationSteps, c.numItemsInBatch)
      : lossNormalizer(c.mask);
    backward(policySurrogate(algo, logp, p, beta, norm).surrogate);
    c.grad.forEach((row, b) =>
      row.forEach((g, j) => {
        const got = logp.grad![b * p.T + p.starts[b]! + j]!;
        expect(Math.abs(got - g), `row ${b} token ${j}: trainer ${got}, TRL ${g}`).toBeLessThanOrEqual(TOL);
      }),
    );
  });
});
