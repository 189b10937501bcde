/**
 * Inserted segments (tool output) are out of the policy loss and out of the KL term: hand-computed values on a
 * tiny rollout with a known mask, and the trainer's micro-batch loss on a real model equal to the loss of the same
 * tokens with only the model-turn tokens counted.
 */
import { describe, expect, it } from "vitest";
import { backward, noGrad, tensor } from "../../src/engine/index.js";
import { Rng } from "../../src/util/index.js";
import { createModel } from "../../src/models/registry.js";
import { CharTokenizer } from "../../src/models/tokenizer.js";
import { buildAlgorithm, lossNormalizer, policyLoss } from "../../src/algorithms/index.js";
import { resolveConfig } from "../../src/trainer/recipe.js";
import { gridLogprobs, packRollouts } from "../../src/trainer/batch.js";
import { policySurrogate } from "../../src/trainer/policy-update.js";
import { rewardMetrics } from "../../src/trainer/step-metrics.js";
import type { Rollout } from "../../src/rollout/types.js";

// One completion: model turn [0, 2), inserted tool output [2, 4), model turn [4, 5).
const MASK = [1, 1, 0, 0, 1];
const LP = [-1, -2, -9, -9, -0.5];
const OLD = [-1, -2, 0, 0, -0.5]; // the sampler records 0 for inserted tokens
const REF = [-1.5, -2, -3, -3, -0.3];

describe("loss and KL masks on inserted tokens (hand-computed)", () => {
  it("seqMeanTokenMean, no clip, β = 0.1, k1: only the three model-turn tokens count", () => {
    const o = { clip: { type: "none" as const }, beta: 0.1, estimator: "k1" as const };
    const out = policyLoss({ logp: [LP], oldLogp: [OLD], refLogp: [REF], mask: [MASK], advantages: [2] }, o);
    // ρ = 1 on model tokens; policy term −ρA = −2 each; k1 = lp − ref = 0.5, 0, −0.2 (inserted: −6, −6, ignored)
    // loss = mean over 3 tokens of (−2 + 0.1·k1) = (−1.95 − 2 − 2.02) / 3 = −1.99; KL part 0.1·0.3/3 = 0.01
    expect(out.metrics["loss/total"]).toBeCloseTo(-1.99, 12);
    expect(out.metrics["loss/policy"]).toBeCloseTo(-2, 12);
    expect(out.metrics["loss/kl"]).toBeCloseTo(0.01, 12);
    // d loss / d lp = (−A + β) / 3 on model tokens (dρ/dlp = 1, dk1/dlp = 1), exactly 0 on inserted tokens
    const g = (-2 + 0.1) / 3;
    expect(out.grad[0]!.map((x) => Number(x.toFixed(12)))).toEqual([g, g, 0, 0, g].map((x) => Number(x.toFixed(12))));
  });

  it("counting the inserted tokens would change the numbers (the test can fail)", () => {
    const o = { clip: { type: "none" as const }, beta: 0.1, estimator: "k1" as const };
    const out = policyLoss({ logp: [LP], oldLogp: [OLD], refLogp: [REF], mask: [[1, 1, 1, 1, 1]], advantages: [2] }, o);
    expect(Math.abs(out.metrics["loss/total"]! - -1.99)).toBeGreaterThan(0.1);
  });
});

describe("the trainer's loss on a real model with an inserted segment", () => {
  const tok = new CharTokenizer();
  const model = createModel("micro-char", new Rng(1)).model.eval();
  const prompt = tok.encode("q:");
  const completion = tok.encode("ab[t]c"); // "ab" model, "[t]" tool output, "c" model
  const mask = [1, 1, 0, 0, 0, 1];
  const full = noGrad(() => {
    const p = packRollouts([rollout(completion.map(() => 0))], tok.padId);
    const { logp } = gridLogprobs(model, p, 1);
    return completion.map((_, j) => logp.data[p.starts[0]! + j]!);
  });
  // Old log-probs slightly off the current policy (so ratios are not 1), 0 on inserted tokens as the sampler writes.
  const old = full.map((x, j) => (mask[j] ? x - 0.05 * (j + 1) : 0));
  const ref = full.map((x, j) => x + 0.1 * (j % 3) - 0.07);

  function rollout(samplerLogprobs: number[], refLogprobs: number[] = []): Rollout {
    return {
      id: "1/0/0",
      task: "t",
      exampleId: "e",
      groupId: "1/0",
      promptIds: prompt,
      completionIds: completion,
      samplerLogprobs,
      lossMask: mask,
      text: "ab[t]c",
      segments: [
        { kind: "model", start: 0, end: 2, text: "ab" },
        { kind: "inserted", start: 2, end: 5, text: "[t]" },
        { kind: "model", start: 5, end: 6, text: "c" },
      ],
      finishReason: "stop",
      reward: 1,
      terms: {},
      advantage: 0.7,
      refLogprobs,
      policyVersion: 0,
    };
  }

  it.each(["seqMeanTokenMean", "tokenMean", "seqMeanTokenSum"])(
    "%s: loss equals policyLoss over the model-turn tokens alone; zero gradient on inserted tokens",
    (aggregation) => {
      const algorithm = { loss: { aggregation }, kl: { beta: 0.2, estimator: "k3" } };
      const cfg = resolveConfig({
        model: { type: "checkpoint", path: "/x" },
        task: { name: "addition" },
        train: { maxCompletionTokens: 8 },
        algorithm,
      }).algorithm;
      const algo = buildAlgorithm(cfg, { maxCompletionTokens: 8 });
      const r = rollout(old, ref);
      const p = packRollouts([r], tok.padId);
      const grid = new Float32Array(p.B * p.T);
      full.forEach((x, j) => (grid[p.starts[0]! + j] = x));
      const logp = tensor(grid, [p.B, p.T], { requiresGrad: true });
      const out = policySurrogate(algo, logp, p, 0.2, lossNormalizer([mask]));
      backward(out.surrogate);

      const keep = (xs: number[]) => xs.filter((_, j) => mask[j] === 1);
      const alone = policyLoss(
        { logp: [keep(full)], oldLogp: [keep(old)], refLogp: [keep(ref)], mask: [[1, 1, 1]], advantages: [0.7] },
        { beta: 0.2, estimator: "k3", aggregation: aggregation as "tokenMean", clip: cfg.policy.clip },
      );
      expect(out.metrics["loss/total"]).toBeCloseTo(alone.metrics["loss/total"]!, 9);
      expect(out.metrics["loss/kl"]).toBeCloseTo(alone.metrics["loss/kl"]!, 9);
      expect(out.metrics["loss/kl"]).not.toBe(0);
      const g = completion.map((_, j) => logp.grad![p.starts[0]! + j]!);
      expect([g[2], g[3], g[4]]).toEqual([0, 0, 0]);
      keep(g).forEach((x, i) => expect(x).toBeCloseTo(alone.grad[0]![i]!, 6));
    },
  );

  it("length/toolTokensMean counts the inserted tokens", () => {
    const m = rewardMetrics([{ id: "1/0", exampleId: "e", prompt: "q:", rollouts: [rollout(old)] }], {
      terms: [],
      correctTerm: "correct",
    });
    expect(m["length/toolTokensMean"]).toBe(3);
  });
});

describe("KL in the reward (reinforcePlusPlus) skips inserted tokens", () => {
  it("model-token advantages equal those of the same completions with the inserted tokens removed", () => {
    const cfg = resolveConfig({
      preset: "reinforcePlusPlus",
      model: { type: "checkpoint", path: "/x" },
      task: { name: "addition" },
      train: { maxCompletionTokens: 8 },
    }).algorithm;
    const algo = buildAlgorithm(cfg, { maxCompletionTokens: 8 });
    expect(algo.kl.inReward).toBe(true);
    const keep = (xs: readonly number[]) => xs.filter((_, j) => MASK[j] === 1);
    // Two completions of one group; the first has the tool segment, whose ref log-probs are far from the policy's.
    const withTool = [
      { reward: 1, terms: {}, mask: MASK, oldLogp: OLD, refLogp: REF },
      { reward: 0, terms: {}, mask: [1, 1, 1], oldLogp: [-0.7, -1.1, -0.2], refLogp: [-0.9, -1.0, -0.4] },
    ];
    const without = [{ ...withTool[0]!, mask: [1, 1, 1], oldLogp: keep(OLD), refLogp: keep(REF) }, withTool[1]!];
    const a = algo.advantages([withTool], 0.1);
    const b = algo.advantages([without], 0.1);
    const ta = a.tokenAdvantages![0]!;
    const tb = b.tokenAdvantages![0]!;
    keep(ta[0]!).forEach((x, i) => expect(x).toBeCloseTo(tb[0]![i]!, 12));
    ta[1]!.forEach((x, i) => expect(x).toBeCloseTo(tb[1]![i]!, 12));
    expect(ta[0]![0]).not.toBeCloseTo(ta[0]![1]!, 6); // the KL term made advantages vary along the completion
  });
});
