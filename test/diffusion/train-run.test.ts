/**
 * A tiny end-to-end run of a masked-diffusion policy through `train()` (src/trainer/diffusion-step.ts hooks): wd1
 * and diffu-GRPO on 4×4 sudoku change the weights and log their metrics; the config rules hold at run start.
 */
import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDiffusionModel, DiffusionLM, loadModel, saveModel } from "../../src/models/index.js";
import { Rng } from "../../src/util/index.js";
import { resolveConfig } from "../../src/trainer/recipe.js";
import { train } from "../../src/trainer/train.js";
import { jsonlReporter } from "../../src/trainer/reporters.js";
import { RunDir } from "../../src/trainer/run-dir.js";
import type { RolloutGroup } from "../../src/rollout/types.js";

type Recipe = Parameters<typeof resolveConfig>[0];

const recipe = (name: string, algorithm: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  resolveConfig({
    name,
    seed: 1,
    outDir: mkdtempSync(join(tmpdir(), "rlvr-dlm-run-")),
    model: { type: "new", arch: "llama", dModel: 32, nLayers: 1, nHeads: 2, maxSeqLen: 64 },
    task: { name: "sudoku", options: { givens: 12 }, trainExamples: 40, testExamples: 4 },
    sft: { enabled: true, steps: 3, batchSize: 4, lr: 0.003 },
    train: { steps: 2, promptsPerStep: 2, groupSize: 3, maxCompletionTokens: 34, lr: 0.01, innerIterations: 2 },
    eval: { every: 0, atStart: false, examples: 2 },
    checkpoint: { every: 1, keepLast: 3 },
    log: { progress: false },
    algorithm,
    ...extra,
  } as Recipe);

async function run(config: ReturnType<typeof resolveConfig>) {
  const dir = new RunDir(join(config.outDir, config.name));
  // Mixed rewards in every group (member 0 right), so the advantages are not all 0 even for an untrained model.
  const transformGroups = (groups: RolloutGroup[]) =>
    groups.forEach((g) =>
      g.rollouts.forEach((r, i) => ((r.reward = i === 0 ? 1 : 0), (r.terms = { cells: r.reward }))),
    );
  const res = await train(config, { resume: false, reporters: [jsonlReporter(dir)], transformGroups });
  const start = loadModel(join(res.runDir, "checkpoints", "start")).model;
  const end = loadModel(join(res.runDir, "checkpoints", "step-2")).model;
  const moved = start
    .namedParameters()
    .some(([n, p], i) => p.data.some((v, k) => v !== end.namedParameters()[i]![1].data[k]) && n.length > 0);
  return { res, start, moved, metrics: dir.metrics() };
}

describe("training a masked-diffusion policy", () => {
  it("wd1: a new model is a DiffusionLM, the weights change, and the step logs wd1's metrics", async () => {
    const r = await run(
      recipe("wd1", { advantage: { type: "meanOnly" }, kl: { beta: 0 }, diffusion: { type: "wd1" } }),
    );
    expect(r.start).toBeInstanceOf(DiffusionLM);
    expect(r.moved).toBe(true);
    expect(r.metrics).toHaveLength(2);
    for (const m of r.metrics) {
      expect(Number.isFinite(m["loss/total"])).toBe(true);
      expect(m["wd1/ellMean"]).toBeLessThan(0);
      expect(m["grad/norm"]).toBeGreaterThanOrEqual(0);
    }
  }, 60_000);

  it("diffu-GRPO with a reference and μ = 2 runs and changes the weights", async () => {
    const alg = {
      policy: { clip: { type: "ppo", epsLow: 0.5, epsHigh: 0.5 } },
      kl: { beta: 0.04 },
      diffusion: { type: "diffuGrpo" },
    };
    const r = await run(recipe("d1", alg));
    expect(r.moved).toBe(true);
    expect(Number.isFinite(r.metrics[0]!["loss/kl"])).toBe(true);
    expect(r.metrics[0]!["ratio/mean"]).toBeGreaterThan(0);
  }, 60_000);

  const d1Alg = {
    policy: { clip: { type: "ppo", epsLow: 0.5, epsHigh: 0.5 } },
    kl: { beta: 0.04 },
    diffusion: { type: "diffuGrpo" },
  };
  const wd1Alg = { advantage: { type: "meanOnly" }, kl: { beta: 0 }, diffusion: { type: "wd1" } };
  it.each([
    ["wd1", wd1Alg],
    ["d1", d1Alg],
  ])(
    "%s resumed from a checkpoint ends with the same weights as the run that never stopped",
    async (_n, alg) => {
      // bench:wd1 resumes a killed arm (BENCH_WD1_REUSE=1); the masks, the samples and the optimizer state must all come
      // back keyed by (seed, step), μ = 2 inner iterations included.
      const whole = await run(recipe("whole", alg));
      const config = recipe("split", alg);
      const dir = new RunDir(join(config.outDir, config.name));
      const mixed = (groups: RolloutGroup[]) =>
        groups.forEach((g) =>
          g.rollouts.forEach((r, i) => ((r.reward = i === 0 ? 1 : 0), (r.terms = { cells: r.reward }))),
        );
      await train(config, { resume: false, stopAfter: 1, reporters: [jsonlReporter(dir)], transformGroups: mixed });
      const res = await train(config, { resume: true, reporters: [jsonlReporter(dir)], transformGroups: mixed });
      expect(res.step).toBe(2);
      const a = loadModel(join(whole.res.runDir, "checkpoints", "step-2")).model.namedParameters();
      const b = loadModel(join(res.runDir, "checkpoints", "step-2")).model.namedParameters();
      expect(whole.moved).toBe(true);
      b.forEach(([name, p], i) => expect([name, Array.from(p.data)]).toEqual([a[i]![0], Array.from(a[i]![1].data)]));
      expect(dir.metrics().map((m) => m.step)).toEqual([1, 2]);
    },
    60_000,
  );

  it("refuses a diffusion loss on an autoregressive checkpoint, and a diffusion model without one", async () => {
    const ar = recipe(
      "ar",
      { diffusion: { type: "wd1" }, kl: { beta: 0 } },
      {
        model: { type: "checkpoint", path: join(import.meta.dirname, "..", "..", "assets", "demo-start") },
      },
    );
    await expect(train(ar, { resume: false, reporters: [] })).rejects.toThrow(/needs a masked-diffusion model/);
    // wd1 is exempt from the on-policy rule of clip "none" (algorithms spec §7); diffu-GRPO has a ratio, so it is not
    expect(() => recipe("d1-noclip", { diffusion: { type: "diffuGrpo" }, kl: { beta: 0 } })).toThrow(
      /only allowed on-policy/,
    );
    const dir = mkdtempSync(join(tmpdir(), "rlvr-dlm-ckpt-"));
    const { model, tokenizer } = createDiffusionModel("micro-char", new Rng(0), { nLayers: 1 });
    saveModel(dir, model, tokenizer);
    const plain = recipe("plain", { policy: { clip: { type: "ppo" } } }, { model: { type: "checkpoint", path: dir } });
    await expect(train(plain, { resume: false, reporters: [] })).rejects.toThrow(/no exact token log-probs/);
  }, 60_000);
});

describe("sampler.diffusion: the diffusion sampler's knobs in the recipe", () => {
  const wd1 = { advantage: { type: "meanOnly" }, kl: { beta: 0 }, diffusion: { type: "wd1" } };
  const withSampler = (name: string, diffusion: Record<string, unknown>) =>
    recipe(name, wd1, { sampler: { type: "builtin", diffusion } });

  it("reach the rollouts: random remasking and semi-autoregressive blocks sample other answers than the default", async () => {
    const texts = async (name: string, diffusion?: Record<string, unknown>) => {
      const config = diffusion ? withSampler(name, diffusion) : recipe(name, wd1);
      const dir = new RunDir(join(config.outDir, config.name));
      const one = { ...config, train: { ...config.train, steps: 1 }, log: { ...config.log, sampleGroups: 2 } };
      await train(one, { resume: false, reporters: [jsonlReporter(dir)] });
      return readFileSync(dir.samplesPath, "utf8").replace(/"(time|t)[A-Za-z/]*":[0-9.e-]+,?/g, "");
    };
    const base = await texts("default");
    expect(await texts("same", {})).toBe(base); // an empty section is the default
    expect(await texts("random", { remasking: "random" })).not.toBe(base);
    expect(await texts("blocks", { blockLength: 17, steps: 34 })).not.toBe(base);
  }, 60_000);

  it("fail at load with the field named when they do not fit the answer region or the policy", () => {
    expect(() => withSampler("b", { blockLength: 5 })).toThrow(/sampler\.diffusion\.blockLength: 5 does not divide/);
    expect(() => withSampler("s", { blockLength: 17, steps: 3 })).toThrow(
      /sampler\.diffusion\.steps: 3 is not a multiple of the 2 blocks/,
    );
    expect(() =>
      resolveConfig({
        name: "ar",
        outDir: "/tmp/x",
        model: { type: "new", dModel: 16, nLayers: 1, nHeads: 2, maxSeqLen: 32 },
        task: { name: "addition" },
        sampler: { type: "builtin", diffusion: { remasking: "random" } },
      } as Recipe),
    ).toThrow(/sampler\.diffusion: applies to a masked-diffusion policy only/);
  });
});
