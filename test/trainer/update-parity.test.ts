/**
 * The numbers users check are the numbers that train. The trainer's update (its per-micro-batch `policySurrogate`,
 * and the whole `updatePolicy` on a tiny model) is run on fixed log-probs, and its gradients are compared with the
 * exported array `policyLoss` called with options written out by hand, as a user comparing against TRL would:
 * the spec §11.4 fixture for every aggregation, and KL placements (loss, reward, monitor only) whose β must or must
 * not reach the loss.
 */
import { describe, expect, it } from "vitest";
import { mul, sum, tensor, backward } from "../../src/engine/index.js";
import { Rng } from "../../src/util/index.js";
import { Transformer } from "../../src/models/transformer.js";
import { parseTransformerConfig } from "../../src/models/config.js";
import { CharTokenizer } from "../../src/models/tokenizer.js";
import { buildAlgorithm, lossNormalizer, policyLoss, ppoClip, type LossOptions } from "../../src/algorithms/index.js";
import { resolveConfig } from "../../src/trainer/recipe.js";
import { gridLogprobs, packRollouts } from "../../src/trainer/batch.js";
import { buildOptimizer, trainableParams } from "../../src/trainer/model-setup.js";
import { policySurrogate, updatePolicy } from "../../src/trainer/policy-update.js";
import type { Rollout } from "../../src/rollout/types.js";

// Spec §11.4: two completions; sequence 2's third token is padding (m = 0).
const LP = [
  [-1.0, -0.5, -2.0],
  [-0.3, -1.2, -0.9],
];
const OLD = [
  [-1.3, -0.2, -2.0],
  [-0.6, -0.85, -0.9],
];
const REF = [
  [-1.2, -0.4, -2.5],
  [-0.5, -1.0, -0.9],
];
const MASK = [
  [1, 1, 1],
  [1, 1, 0],
];
const ADV = [1.0, -0.5];

function rollouts(): Rollout[] {
  return LP.map((_, b) => ({
    id: `1/0/${b}`,
    task: "t",
    exampleId: "e",
    groupId: "1/0",
    promptIds: [3, 4],
    completionIds: [5, 6, 7],
    samplerLogprobs: OLD[b]!,
    lossMask: MASK[b]!,
    text: "",
    finishReason: "stop" as const,
    reward: 0,
    terms: {},
    advantage: ADV[b]!,
    refLogprobs: REF[b]!,
    policyVersion: 0,
  }));
}

const BASE = {
  model: { type: "checkpoint", path: "/x" },
  task: { name: "addition" },
  train: { maxCompletionTokens: 4 },
};
const recipe = (algorithm: object) => resolveConfig({ ...BASE, algorithm }).algorithm;

/** The trainer's d loss / d lp_θ per completion token, from its micro-batch surrogate on a leaf lp_θ grid. */
function trainerGrad(algorithm: object, beta: number, split: number[][]): { grad: number[][]; metrics: Metrics[] } {
  const algo = buildAlgorithm(recipe(algorithm), { maxCompletionTokens: 4 });
  const all = rollouts();
  const norm = lossNormalizer(all.map((r) => r.lossMask));
  const grad = LP.map((row) => row.map(() => 0));
  const metrics: Metrics[] = [];
  for (const idx of split) {
    const p = packRollouts(
      idx.map((i) => all[i]!),
      0,
    );
    const grid = new Float32Array(p.B * p.T);
    idx.forEach((i, b) => LP[i]!.forEach((x, j) => (grid[b * p.T + p.starts[b]! + j] = x)));
    const logp = tensor(grid, [p.B, p.T], { requiresGrad: true });
    const out = policySurrogate(algo, logp, p, beta, norm);
    backward(out.surrogate);
    idx.forEach((i, b) => LP[i]!.forEach((_, j) => (grad[i]![j] = logp.grad![b * p.T + p.starts[b]! + j]!)));
    metrics.push(out.metrics);
  }
  return { grad, metrics };
}

type Metrics = Record<string, number>;
const userGrad = (o: Partial<LossOptions>) =>
  policyLoss({ logp: LP, oldLogp: OLD, refLogp: REF, mask: MASK, advantages: ADV }, o);

const close = (got: number[][], want: number[][], tol: number) =>
  got.forEach((row, i) =>
    row.forEach((g, j) => {
      expect(Math.abs(g - want[i]![j]!), `[${i}][${j}] ${g} vs ${want[i]![j]}`).toBeLessThanOrEqual(tol);
    }),
  );

describe("the trainer's micro-batch loss is the exported policyLoss", () => {
  const dapoish = { policy: { clip: { type: "ppo", epsLow: 0.2, epsHigh: 0.28 } }, kl: { beta: 0.04 } };
  it.each([
    [
      "seqMeanTokenMean",
      [
        [0.001208, -0.124171, -0.164044],
        [0.170545, -0.002214, 0],
      ],
    ],
    [
      "tokenMean",
      [
        [0.00145, -0.149005, -0.196852],
        [0.136436, -0.001771, 0],
      ],
    ],
    [
      "seqMeanTokenSum",
      [
        [0.003625, -0.372513, -0.492131],
        [0.34109, -0.004428, 0],
      ],
    ],
    [
      "constantNorm",
      [
        [0.000906, -0.093128, -0.123033],
        [0.085273, -0.001107, 0],
      ],
    ],
  ] as const)("§11.4 %s: spec values, hand-written policyLoss options, any micro-batch split", (aggregation, want) => {
    const cfg = { ...dapoish, loss: { aggregation } };
    const user = userGrad({ clip: ppoClip(0.2, 0.28), beta: 0.04, aggregation, maxCompletionTokens: 4 });
    for (const split of [[[0, 1]], [[0], [1]], [[1], [0]]]) {
      const { grad } = trainerGrad(cfg, 0.04, split);
      close(grad, user.grad, 1e-6);
      close(grad, want as unknown as number[][], 2e-6);
    }
  });
  it("KL in the reward or monitored only: no β in the loss, KL still logged", () => {
    const none = userGrad({ clip: ppoClip(0.2, 0.28), beta: 0, aggregation: "tokenMean" }).grad;
    const kls: object[] = [
      { beta: 0.04, placement: "reward" },
      { beta: 0.04, monitorOnly: true },
    ];
    kls.push({ beta: 0, monitorOnly: true });
    for (const kl of kls) {
      const { grad, metrics } = trainerGrad({ ...dapoish, kl, loss: { aggregation: "tokenMean" } }, 0.04, [[0, 1]]);
      close(grad, none, 1e-7); // float32 grid; β = 0.04 in the loss would move these by ~1e-3
      expect(metrics[0]!["kl/refK3"]).toBeCloseTo(0.034113, 6); // §11.4
      expect(metrics[0]!["loss/kl"] ?? 0).toBe(0);
    }
  });
  it("β reaches the loss as the value passed (the controller's), not the recipe's", () => {
    const user = userGrad({ clip: ppoClip(0.2, 0.28), beta: 0.5, aggregation: "tokenMean" }).grad;
    close(trainerGrad({ ...dapoish, loss: { aggregation: "tokenMean" } }, 0.5, [[0, 1]]).grad, user, 1e-6);
  });
  it("kl.importanceWeight is TRL's use_bias_correction_kl option of policyLoss", () => {
    const opts = { clip: ppoClip(0.2, 0.28), beta: 0.04, aggregation: "tokenMean" as const };
    const user = userGrad({ ...opts, klImportanceWeight: true }).grad;
    const plain = userGrad(opts).grad;
    const cfg = { ...dapoish, kl: { beta: 0.04, importanceWeight: true }, loss: { aggregation: "tokenMean" } };
    const { grad } = trainerGrad(cfg, 0.04, [[0, 1]]);
    close(grad, user, 1e-6);
    expect(Math.abs(grad[1]![0]! - plain[1]![0]!)).toBeGreaterThan(1e-4);
  });
});

describe("the whole updatePolicy on a tiny model", () => {
  it("moves the weights by exactly −lr · Σ_t (d policyLoss / d lp_θ) · ∇lp_θ, 1×4 and 4×1 micro-batches", () => {
    const tok = new CharTokenizer();
    const shape = { arch: "gpt2", vocabSize: tok.vocabSize, dModel: 16, nLayers: 1, nHeads: 2, nKvHeads: 2, dFf: 32 };
    const make = () => new Transformer(parseTransformerConfig({ ...shape, maxSeqLen: 12 }), new Rng(4).split("init"));
    const texts = ["12", "345", "6", "7890"];
    const rs = (): Rollout[] =>
      texts.map((t, i) => ({
        id: `1/0/${i}`,
        task: "t",
        exampleId: "e",
        groupId: "1/0",
        promptIds: tok.encode("a+b="),
        completionIds: tok.encode(t),
        samplerLogprobs: tok.encode(t).map((_, j) => -2.5 - 0.3 * j - 0.2 * i),
        lossMask: tok.encode(t).map((_, j) => (i === 3 && j === 3 ? 0 : 1)),
        text: t,
        finishReason: "stop" as const,
        reward: 0,
        terms: {},
        advantage: [1, -0.5, 0.8, -1.3][i]!,
        policyVersion: 0,
      }));
    const config = resolveConfig({
      model: { type: "new", dModel: 16, nLayers: 1, nHeads: 2, maxSeqLen: 12 },
      task: { name: "addition" },
      algorithm: {
        policy: { clip: { type: "ppo", epsLow: 0.2, epsHigh: 0.28 } },
        kl: { beta: 0 },
        loss: { aggregation: "tokenMean" },
      },
      train: { maxCompletionTokens: 4, maxGradNorm: null, optimizer: { type: "sgd", momentum: 0 } },
    });
    // Independent reference: the model's lp_θ, hand-written policyLoss options, Σ lp_θ · g backpropagated.
    const ref = make();
    const rows = rs();
    const p = packRollouts(rows, tok.padId);
    const { logp } = gridLogprobs(ref, p, 1);
    const lpRows = rows.map((r, b) => r.completionIds.map((_, j) => logp.data[b * p.T + p.starts[b]! + j]!));
    const out = policyLoss(
      {
        logp: lpRows,
        oldLogp: rows.map((r) => r.samplerLogprobs),
        mask: rows.map((r) => r.lossMask),
        advantages: rows.map((r) => r.advantage),
      },
      { clip: ppoClip(0.2, 0.28), beta: 0, aggregation: "tokenMean" },
    );
    expect(out.metrics["clip/regionFrac"]).toBeGreaterThan(0); // the fixture exercises clipping
    const g = new Float32Array(p.B * p.T);
    rows.forEach((r, b) => r.completionIds.forEach((_, j) => (g[b * p.T + p.starts[b]! + j] = out.grad[b]![j]!)));
    backward(sum(mul(logp, tensor(g, [p.B, p.T]))));
    const want = trainableParams(ref).flatMap(([, q]) => Array.from(q.grad ?? new Float32Array(q.data.length)));

    for (const microBatchSize of [4, 1]) {
      const model = make();
      const params = trainableParams(model);
      const before = params.flatMap(([, q]) => Array.from(q.data));
      updatePolicy({
        model,
        optimizer: buildOptimizer(config.train, model),
        params,
        rollouts: rs(),
        beta: 0,
        lr: 1,
        temperature: 1,
        algorithm: buildAlgorithm(config.algorithm, { maxCompletionTokens: 4 }),
        train: { ...config.train, microBatchSize },
        rng: new Rng(0),
        padId: tok.padId,
        warn: () => {},
      });
      const delta = params.flatMap(([, q]) => Array.from(q.data)).map((x, k) => before[k]! - x);
      const scale = Math.max(...want.map(Math.abs));
      delta.forEach((d, k) => expect(Math.abs(d - want[k]!), `param ${k}`).toBeLessThanOrEqual(1e-5 * scale + 1e-7));
    }
  });
});
