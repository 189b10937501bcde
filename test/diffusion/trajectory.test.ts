/**
 * The trajectory likelihood estimate (`algorithm.diffusion.estimator: "trajectory"`, src/algorithms/masked-estimator.ts):
 * the sampler records when it unmasked each position; pass k of K shows what was unmasked before its run of steps and
 * scores what was unmasked within it; K = 1 is the one-shot (d1) estimate; K = steps replays every decoding step; the
 * update's gradient through K passes matches finite differences.
 */
import { describe, expect, it } from "vitest";
import { AlgorithmSchema, buildDiffusionLoss, estimatorBatch, passSteps } from "../../src/algorithms/index.js";
import { Optimizer, sgd } from "../../src/engine/index.js";
import { createDiffusionModel } from "../../src/models/index.js";
import type { Rollout } from "../../src/rollout/types.js";
import { sampleDiffusion } from "../../src/sampling/index.js";
import { estimate, updateDiffusionPolicy } from "../../src/trainer/diffusion-step.js";
import { Rng } from "../../src/util/index.js";

const { model, tokenizer } = createDiffusionModel("micro-char", new Rng(11), { nLayers: 1 });
const prompts = [tokenizer.encode("12+3="), tokenizer.encode("7*8=")];

describe("the sampler's unmasking trace", () => {
  it("records the step that unmasked each position, over all blocks", () => {
    const states: Int32Array[] = [];
    const out = sampleDiffusion(model, tokenizer, prompts, {
      genLength: 8,
      steps: 6,
      blockLength: 4,
      temperature: 1,
      rng: new Rng(2),
      onStep: ({ answers }) => states.push(answers),
    });
    out.forEach((s, b) => {
      expect(s.steps).toBe(6);
      for (let t = 0; t < 8; t++) {
        const step = s.unmaskedAt[t]!;
        const before = step === 0 ? model.maskId : states[step - 1]![b * 8 + t];
        expect(before).toBe(model.maskId); // still masked before its step
        expect(states[step]![b * 8 + t]).toBe(s.generated[t]); // and holds its final token from that step on
      }
      // block 1 (positions 4-7) is decoded in steps 3-5, after block 0
      expect(Math.min(...s.unmaskedAt.slice(4))).toBeGreaterThanOrEqual(3);
    });
  });
});

describe("a trajectory pass's input", () => {
  const row = {
    id: "1/0/0",
    promptIds: [1, 7, 8],
    completionIds: [30, 31, 2], // the answer ends at eos (2) in position 2
    unmasking: { generated: [30, 31, 2, 2], unmaskedAt: [2, 0, 3, 1], steps: 4 },
  };
  const o = { genLength: 4, maskId: 99, padId: 0, pMaskPrompt: 0, seed: 5 };
  const answer = (b: ReturnType<typeof estimatorBatch>, k: "ids" | "targets") => Array.from(b[k].subarray(3, 7));

  it("shows what was unmasked before its run and scores the completion tokens unmasked within it", () => {
    expect(passSteps(4, { index: 0, of: 2 })).toEqual([0, 2]);
    const p0 = estimatorBatch([row], { ...o, pass: { index: 0, of: 2 } });
    expect(answer(p0, "ids")).toEqual([99, 99, 99, 99]);
    expect(answer(p0, "targets")).toEqual([-100, 31, -100, -100]); // position 3 (step 1) is after the eos
    const p1 = estimatorBatch([row], { ...o, pass: { index: 1, of: 2 } });
    expect(answer(p1, "ids")).toEqual([99, 31, 99, 2]);
    expect(answer(p1, "targets")).toEqual([30, -100, 2, -100]);
  });

  it("with one pass is the one-shot estimate exactly (prompt mask included)", () => {
    const rows = [row, { ...row, id: "1/0/1", promptIds: [1, 9, 9, 9, 9, 9] }];
    const q = { ...o, pMaskPrompt: 0.4 };
    const one = estimatorBatch(rows, { ...q, pass: { index: 0, of: 1 } });
    const shot = estimatorBatch(rows, q);
    expect(Array.from(one.ids)).toEqual(Array.from(shot.ids));
    expect(Array.from(one.targets)).toEqual(Array.from(shot.targets));
  });

  it("scores every completion token in exactly one pass, for any number of passes", () => {
    const rng = new Rng(3);
    for (let trial = 0; trial < 20; trial++) {
      const steps = 1 + rng.int(8);
      const L = 8;
      const unmaskedAt = Array.from({ length: L }, () => rng.int(steps));
      const len = 1 + rng.int(L);
      const r = {
        ...row,
        completionIds: [...Array(len)].map((_, t) => 10 + t),
        unmasking: { generated: [...Array(L)].map((_, t) => 10 + t), unmaskedAt, steps },
      };
      for (const K of [1, 2, 3, steps]) {
        const hits = new Array<number>(L).fill(0);
        for (let k = 0; k < K; k++) {
          const b = estimatorBatch([r], { ...o, genLength: L, pass: { index: k, of: K } });
          answerOf(b, L).forEach((t, j) => t !== -100 && hits[j]!++);
        }
        expect(hits).toEqual([...Array(L)].map((_, t) => (t < len ? 1 : 0)));
      }
    }
  });

  it("with a pass per step, each pass is the sampler's own state before that step", () => {
    const states: Int32Array[] = [];
    const [s] = sampleDiffusion(model, tokenizer, [prompts[0]!], {
      genLength: 6,
      steps: 6,
      temperature: 1,
      rng: new Rng(9),
      onStep: ({ answers }) => states.push(answers),
    });
    const r = { id: "r", promptIds: prompts[0]!, completionIds: s!.tokens, unmasking: s! };
    for (let k = 0; k < 6; k++) {
      const b = estimatorBatch([r], { ...o, genLength: 6, pass: { index: k, of: 6 } });
      const before = k === 0 ? new Array(6).fill(model.maskId) : Array.from(states[k - 1]!);
      expect(Array.from(b.ids.subarray(b.start, b.T))).toEqual(before.map((x) => (x === model.maskId ? 99 : x)));
    }
  });

  it("needs the rollout's trace and says so", () => {
    const { unmasking: _u, ...bare } = row;
    expect(() => estimatorBatch([bare], { ...o, pass: { index: 0, of: 2 } })).toThrow(
      /rollout 1\/0\/0's unmasking trace/,
    );
  });
});

const answerOf = (b: ReturnType<typeof estimatorBatch>, L: number) =>
  Array.from(b.targets.subarray(b.start, b.start + L));

/** Two groups of three rollouts with hand-made traces over a 4-token answer region decoded in 4 steps. */
function rollouts(): Rollout[] {
  const adv = [
    [0.5, -0.25, -0.25],
    [-0.5, 0.25, 0.25],
  ];
  return adv.flatMap((g, q) =>
    g.map((advantage, i) => {
      const generated = [40 + i, 41 + q, 2, 2];
      const completionIds = generated.slice(0, 2 + (i % 2));
      return {
        id: `1/${q}/${i}`,
        task: "t",
        exampleId: `e${q}`,
        groupId: `1/${q}`,
        promptIds: [1, 10 + q, 11],
        completionIds,
        samplerLogprobs: completionIds.map(() => 0),
        lossMask: completionIds.map(() => 1),
        text: "",
        finishReason: "stop" as const,
        reward: 0,
        terms: {},
        advantage,
        policyVersion: 0,
        unmasking: {
          generated,
          unmaskedAt: [
            [3, 0, 1, 2],
            [1, 2, 0, 3],
            [0, 3, 2, 1],
          ][i]!,
          steps: 4,
        },
      };
    }),
  );
}

const WD1 = (diffusion: object) =>
  AlgorithmSchema.parse({ advantage: { type: "meanOnly" }, kl: { beta: 0 }, diffusion: { type: "wd1", ...diffusion } });

describe("the update with the trajectory estimate", () => {
  /** Weights after one SGD step (lr 1) of a fresh micro model. */
  function step(diffusion: object): { before: Float32Array[]; after: Float32Array[] } {
    const { model: m } = createDiffusionModel("micro-char", new Rng(5), { nLayers: 1 });
    const params = m.trainableParameters();
    const before = params.map(([, p]) => Float32Array.from(p.data));
    updateDiffusionPolicy({
      model: m,
      optimizer: new Optimizer(sgd({ lr: 1 }), params),
      params,
      rollouts: rollouts(),
      algorithm: { config: WD1(diffusion) } as never,
      train: { innerIterations: 1, miniBatches: 1, microBatchSize: 6, maxGradNorm: null },
      temperature: 1,
      beta: 0,
      lr: 1,
      rng: new Rng(3),
      padId: 0,
      warn: () => {},
      genLength: 4,
      seed: 0,
    } as never);
    return { before, after: params.map(([, p]) => Float32Array.from(p.data)) };
  }
  const diff = (a: Float32Array[], b: Float32Array[]) =>
    Math.max(...a.map((x, i) => Math.max(...x.map((v, k) => Math.abs(v - b[i]![k]!)))));

  it("one pass moves the weights exactly as the one-shot estimate; more passes move them otherwise", () => {
    const shot = step({});
    expect(diff(step({ estimator: "trajectory", chunks: 1 }).after, shot.after)).toBe(0);
    expect(diff(step({ estimator: "trajectory", chunks: 4 }).after, shot.after)).toBeGreaterThan(1e-5);
  });

  it("its gradient through four passes matches central finite differences of the wd1 loss", () => {
    const traj = { estimator: "trajectory", chunks: 4, psi: 5 }; // ψ 5: larger weights, gradients well above float noise
    const alg = WD1(traj);
    const { before, after } = step(traj);
    const { model: m } = createDiffusionModel("micro-char", new Rng(5), { nLayers: 1 });
    const loss = buildDiffusionLoss(alg, { maxCompletionTokens: 4 });
    const rs = rollouts();
    const seed = loss.maskSeeds(new Rng(3).split("mask"), 1, 0)[0]!;
    const L = () => {
      const est = estimate(m, rs, loss, { genLength: 4, padId: 0 }, seed);
      const groups = [0, 1].map((q) => ({
        logp: est.rows.slice(3 * q, 3 * q + 3),
        mask: rs.slice(3 * q, 3 * q + 3).map((r) => r.lossMask),
        advantages: rs.slice(3 * q, 3 * q + 3).map((r) => r.advantage),
      }));
      return loss.loss(groups, 0, { groups: 2, sequences: 6, tokens: 15 }).loss;
    };
    const params = m.trainableParameters();
    const rng = new Rng(8);
    let checked = 0;
    for (let probe = 0; probe < 8; probe++) {
      const p = rng.int(params.length);
      const w = params[p]![1].data;
      // the weight of this tensor with the largest step, so the comparison is well above float32 noise (~1e-5)
      let k = rng.int(w.length);
      for (let j = 0; j < w.length; j++)
        if (Math.abs(before[p]![j]! - after[p]![j]!) > Math.abs(before[p]![k]! - after[p]![k]!)) k = j;
      const grad = before[p]![k]! - after[p]![k]!; // lr 1
      const h = 1e-2;
      const w0 = w[k]!;
      w[k] = w0 + h;
      const up = L();
      w[k] = w0 - h;
      const down = L();
      w[k] = w0;
      const fd = (up - down) / (2 * h);
      expect(Math.abs(grad - fd)).toBeLessThan(0.02 * Math.abs(fd) + 1e-5);
      checked += Math.abs(fd) > 5e-4 ? 1 : 0;
    }
    expect(checked).toBeGreaterThanOrEqual(6); // not a comparison of zeros
  });
});
