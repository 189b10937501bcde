/**
 * The trainer's update follows the gradient of expected reward. For a tiny model, one prompt and two-token
 * completions, J(θ) = Σ_y π_θ(y)·R(y) is computed exactly over all 99² completions and differentiated by the
 * engine. The GRPO update that `updatePolicy` makes from G sampled completions (group z-score advantages, SGD,
 * lr 1, no clipping, so the update is exactly minus the loss gradient) must point the same way, and a small step
 * along it must raise J. With the rewards shuffled across completions (the bench:learn control) it must not.
 */
import { describe, expect, it } from "vitest";
import { exp, mul, noGrad, sum, tensor, type Tensor, backward } from "../../src/engine/index.js";
import { Transformer, tokenLogprobs } from "../../src/models/transformer.js";
import { parseTransformerConfig } from "../../src/models/config.js";
import { CharTokenizer } from "../../src/models/tokenizer.js";
import { Rng } from "../../src/util/index.js";
import { buildAlgorithm, computeAdvantages } from "../../src/algorithms/index.js";
import { resolveConfig } from "../../src/trainer/recipe.js";
import { buildOptimizer, trainableParams } from "../../src/trainer/model-setup.js";
import { updatePolicy } from "../../src/trainer/policy-update.js";
import type { Rollout } from "../../src/rollout/types.js";

const tok = new CharTokenizer();
const V = tok.vocabSize;
const PROMPT = tok.encode("ab");
const P = PROMPT.length;
const T = P + 2;
const isDigit = (id: number) => /[0-9]/.test(tok.decode([id]));
/** The verifiable reward: the first token is a digit (1), and the second repeats it (+1). */
const reward = (y1: number, y2: number) => (isDigit(y1) ? 1 : 0) + (y2 === y1 ? 1 : 0);

function tinyModel(): Transformer {
  const cfg = parseTransformerConfig({
    arch: "gpt2",
    vocabSize: V,
    dModel: 16,
    nLayers: 1,
    nHeads: 2,
    nKvHeads: 2,
    dFf: 32,
    maxSeqLen: 8,
  });
  return new Transformer(cfg, new Rng(11).split("init"));
}

/** Every completion (y1, y2) as one row: log π(y) per row, and J = Σ exp(log π)·R as a graph node. */
function exactObjective(model: Transformer): { J: Tensor; logp: Float32Array; seqLogp: Float32Array } {
  const B = V * V;
  const ids = new Int32Array(B * T);
  const targets = new Int32Array(B * T);
  const mask = new Float32Array(B * T);
  const R = new Float32Array(B);
  for (let y1 = 0; y1 < V; y1++) {
    for (let y2 = 0; y2 < V; y2++) {
      const b = y1 * V + y2;
      ids.set([...PROMPT, y1, y2], b * T);
      targets[b * T + P - 1] = y1;
      targets[b * T + P] = y2;
      mask[b * T + P - 1] = 1;
      mask[b * T + P] = 1;
      R[b] = reward(y1, y2);
    }
  }
  const logp = tokenLogprobs(model.forward(ids, B, T), targets); // (B, T)
  const seq = sum(mul(logp, tensor(mask, [B, T])), 1); // (B,) = log π(y1) + log π(y2 | y1)
  return { J: sum(mul(exp(seq), tensor(R, [B]))), logp: logp.data as Float32Array, seqLogp: seq.data as Float32Array };
}

const flat = (model: Transformer) => trainableParams(model).flatMap(([, p]) => Array.from(p.data));
const cosine = (a: number[], b: number[]) => {
  let ab = 0,
    aa = 0,
    bb = 0;
  for (let i = 0; i < a.length; i++) [ab, aa, bb] = [ab + a[i]! * b[i]!, aa + a[i]! ** 2, bb + b[i]! ** 2];
  return ab / Math.sqrt(aa * bb);
};

/** The update `updatePolicy` makes from G completions sampled from π (rewards shuffled when `shuffle`). */
function grpoUpdate(
  G: number,
  shuffle: boolean,
): { delta: number[]; gradJ: number[]; J0: number; jAlong: (eps: number) => number } {
  const model = tinyModel();
  const params = trainableParams(model);
  const theta0 = flat(model);
  const { J, logp, seqLogp } = exactObjective(model);
  backward(J);
  const gradJ = params.flatMap(([, p]) => Array.from(p.grad!));
  for (const [, p] of params) p.grad = null;

  // sample G completions from the exact distribution
  const rng = new Rng(5).split("sample");
  const cdf: number[] = [];
  let acc = 0;
  for (const lp of seqLogp) cdf.push((acc += Math.exp(lp)));
  const rollouts: Rollout[] = [];
  const rewards: number[] = [];
  for (let i = 0; i < G; i++) {
    const u = rng.random() * acc;
    let lo = 0;
    let hi = cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    const [y1, y2] = [Math.floor(lo / V), lo % V];
    rewards.push(reward(y1, y2));
    rollouts.push({
      id: `0/0/${i}`,
      task: "t",
      exampleId: "e",
      groupId: "0/0",
      promptIds: [...PROMPT],
      completionIds: [y1, y2],
      samplerLogprobs: [logp[lo * T + P - 1]!, logp[lo * T + P]!],
      lossMask: [1, 1],
      text: "",
      finishReason: "length",
      reward: 0,
      terms: {},
      advantage: 0,
      policyVersion: 0,
    });
  }
  const used = shuffle ? new Rng(9).shuffle(rewards) : rewards;
  const adv = computeAdvantages([used], { type: "zScore" }).advantages[0]!;
  rollouts.forEach((r, i) => (r.advantage = adv[i]!));

  const config = resolveConfig({
    name: "pg",
    outDir: "/tmp",
    seed: 0,
    preset: "grpo",
    model: { type: "new", dModel: 16, nLayers: 1, nHeads: 2, maxSeqLen: 8 },
    task: { name: "addition" },
    algorithm: { kl: { beta: 0 } },
    train: {
      lr: 1,
      maxCompletionTokens: 2,
      microBatchSize: 1024,
      maxGradNorm: null,
      optimizer: { type: "sgd", momentum: 0 },
    },
  });
  updatePolicy({
    model,
    optimizer: buildOptimizer(config.train, model),
    params,
    rollouts,
    beta: 0,
    lr: 1,
    algorithm: buildAlgorithm(config.algorithm, { maxCompletionTokens: 2 }),
    train: config.train,
    temperature: 1,
    rng: new Rng(0),
    padId: tok.padId,
    warn: () => {},
  });
  const delta = flat(model).map((x, i) => x - theta0[i]!);
  const norm = Math.sqrt(delta.reduce((s, x) => s + x * x, 0));
  const jAlong = (eps: number) => {
    let k = 0;
    for (const [, p] of params)
      for (let j = 0; j < p.data.length; j++, k++) p.data[j] = theta0[k]! + (eps * delta[k]!) / norm;
    return noGrad(() => exactObjective(model).J.data[0]!);
  };
  return { delta, gradJ, J0: J.data[0]!, jAlong };
}

describe("the GRPO update is an ascent direction of the exact expected reward", () => {
  it("points along ∇J and a small step along it raises J", () => {
    const { delta, gradJ, J0, jAlong } = grpoUpdate(4096, false);
    expect(J0).toBeGreaterThan(0.05);
    expect(cosine(delta, gradJ)).toBeGreaterThan(0.8);
    expect(jAlong(0.05)).toBeGreaterThan(J0 * 1.01);
  });
  it("with rewards shuffled across completions it carries no signal", () => {
    const { delta, gradJ } = grpoUpdate(4096, true);
    expect(Math.abs(cosine(delta, gradJ))).toBeLessThan(0.2);
  });
});
