/**
 * Algorithm fields flipped through real (tiny) training runs, for what only the loop can show: `kl.monitorOnly`
 * logs KL and changes nothing else; the adaptive controller moves β with KL in the loss and in the reward;
 * `rewardAggregate: normalizeThenSum` reaches the advantages with the task's term weights; `loss.afterFirstError`
 * takes tokens out of the loss. `kl.sections` is flipped on rollout records with real token spans.
 */
import { describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { CharTokenizer } from "../../src/models/tokenizer.js";
import { getTask } from "../../src/tasks/index.js";
import { PRESETS, buildAlgorithm, lossNormalizer } from "../../src/algorithms/index.js";
import { resolveConfig } from "../../src/trainer/recipe.js";
import { train, type TrainOptions } from "../../src/trainer/train.js";
import { RunDir } from "../../src/trainer/run-dir.js";
import { jsonlReporter } from "../../src/trainer/reporters.js";
import { sectionMasks } from "../../src/trainer/kl-sections.js";
import { assignAdvantages, numbersOf } from "../../src/trainer/step-advantages.js";
import { packRollouts } from "../../src/trainer/batch.js";
import { policySurrogate } from "../../src/trainer/policy-update.js";
import { tensor, backward } from "../../src/engine/index.js";
import type { Rollout, RolloutGroup } from "../../src/rollout/types.js";

const TERMS = getTask("addition", { maxDigits: 1 }).terms;
/**
 * Rewards with spread whatever the tiny model writes: the terms are functions of the token ids, and the reward is
 * their weighted sum with the task's weights, as scoring would give.
 */
const spreadRewards = (gs: RolloutGroup[]) =>
  gs.forEach((g) =>
    g.rollouts.forEach((r) => {
      const s = r.completionIds.reduce((a, b) => a + b, 0);
      r.terms = Object.fromEntries(TERMS.map((t, k) => [t.name, (s >> k) % 2]));
      r.reward = TERMS.reduce((a, t) => a + t.weight * r.terms[t.name]!, 0);
    }),
  );

/** Per-step metrics of a 2-step run of a tiny model on addition with this algorithm section (and preset). */
type Metrics = Record<string, number>;
async function run(name: string, algorithm: object, opts: TrainOptions = {}, preset?: string): Promise<Metrics[]> {
  const config = resolveConfig({
    name,
    outDir: mkdtempSync(join(tmpdir(), "rlvr-knobs-")),
    seed: 7,
    ...(preset ? { preset } : {}),
    model: { type: "new", dModel: 16, nLayers: 1, nHeads: 2, maxSeqLen: 32 },
    task: { name: "addition", options: { maxDigits: 1 }, trainExamples: 40, testExamples: 4 },
    algorithm,
    train: { steps: 2, promptsPerStep: 2, groupSize: 4, maxCompletionTokens: 6, lr: 1e-3 },
    eval: { every: 0, examples: 4, atStart: false },
    checkpoint: { every: 0, keepBest: false },
    log: { progress: false, sampleGroups: 0 },
  });
  const dir = new RunDir(join(config.outDir, config.name));
  await train(config, { reporters: [jsonlReporter(dir)], warn: () => {}, transformGroups: spreadRewards, ...opts });
  return dir.metrics();
}

describe("KL fields in a run", () => {
  it("monitorOnly logs kl/ref against the reference and trains exactly as β = 0 does", async () => {
    const plain = await run("plain", { kl: { beta: 0 } });
    const monitored = await run("monitored", { kl: { beta: 0, monitorOnly: true } });
    expect(plain[0]!["kl/ref"]).toBeUndefined();
    expect(monitored.every((m) => Number.isFinite(m["kl/ref"]) && Number.isFinite(m["kl/refK3"]))).toBe(true);
    expect(monitored[0]!["kl/refK3"]).toBeLessThan(1e-6); // step 1: the policy still is the reference
    expect(monitored[1]!["kl/refK3"]).toBeGreaterThan(0); // step 2: it has moved
    expect(monitored.map((m) => m["grad/norm"])).toEqual(plain.map((m) => m["grad/norm"]));
    expect(monitored.map((m) => m["loss/total"])).toEqual(plain.map((m) => m["loss/total"]));
  });
  it.each(["loss", "reward"])("the adaptive controller moves β, KL in the %s; fixed leaves it", async (placement) => {
    const kl = { beta: 0.1, placement, estimator: placement === "reward" ? "k1" : "k3", target: 1e-3, horizon: 4 };
    const policy = { clip: { type: "ppo" } };
    const fixed = await run(`fixed-${placement}`, { policy, kl });
    const adaptive = await run(`adaptive-${placement}`, { policy, kl: { ...kl, controller: "adaptive" } });
    expect(fixed.map((m) => m["kl/beta"])).toEqual([0.1, 0.1]);
    // Step 1 samples from the reference (KL 0 up to rounding, err −0.2): β ← 0.1·(1 − 0.2·8/4).
    expect(adaptive[0]!["kl/beta"]).toBe(0.1);
    expect(adaptive[1]!["kl/beta"]).toBeCloseTo(0.1 * (1 - (0.2 * 8) / 4), 12);
  });
});

describe("every preset trains through the loop", () => {
  it.each(Object.keys(PRESETS))("%s", async (preset) => {
    const m = await run(`preset-${preset}`, {}, {}, preset);
    expect(m).toHaveLength(2);
    for (const step of m) {
      expect(Number.isFinite(step["loss/total"]), JSON.stringify(step)).toBe(true);
      expect(Number.isFinite(step["grad/norm"])).toBe(true);
    }
    const p = PRESETS[preset as keyof typeof PRESETS].algorithm;
    expect(m[0]!["kl/ref"] !== undefined).toBe(p.kl.beta > 0); // a reference exactly when β > 0
    if ("zeroStd" in p) expect(m[0]!["dynamic/genBatches"]).toBeGreaterThanOrEqual(1);
  });
});

describe("reward and credit fields in a run", () => {
  it("normalizeThenSum z-scores each task term with its weight (other advantages, same samples)", async () => {
    const summed = await run("summed", {});
    const gdpo = await run("gdpo", { rewardAggregate: "normalizeThenSum" });
    expect(gdpo[0]!["reward/mean"]).toBe(summed[0]!["reward/mean"]); // step 1: same samples
    expect(gdpo[0]!["adv/absMean"]).not.toBeCloseTo(summed[0]!["adv/absMean"]!, 6);
  });
  it("afterFirstError: mask takes the tokens after a reported mistake out of the loss", async () => {
    const firstError: TrainOptions = {
      transformGroups: (gs) => (spreadRewards(gs), gs.forEach((g) => g.rollouts.forEach((r) => (r.firstErrorEnd = 1)))),
    };
    const trained = await run("credit-train", {}, firstError);
    const masked = await run("credit-mask", { loss: { afterFirstError: "mask" } }, firstError);
    expect(trained[0]!["credit/maskedTokensMean"]).toBe(0);
    expect(masked[0]!["credit/maskedTokensMean"]).toBeGreaterThan(0);
    expect(masked[0]!["grad/norm"]).not.toBe(trained[0]!["grad/norm"]);
  });
});

describe("kl.sections on rollout records", () => {
  const tok = new CharTokenizer();
  const texts = ["ab<python>x=1</python>", "<python>y</python>cd", "plain text", "e<python>zz"];
  const rollouts = (): RolloutGroup[] => [
    {
      id: "1/0",
      exampleId: "e",
      prompt: "p",
      rollouts: texts.map((text, i): Rollout => {
        const ids = tok.encode(text);
        return {
          id: `1/0/${i}`,
          task: "t",
          exampleId: "e",
          groupId: "1/0",
          promptIds: [1],
          completionIds: ids,
          text,
          finishReason: "stop",
          samplerLogprobs: ids.map((_, t) => -1 - 0.1 * t),
          refLogprobs: ids.map((_, t) => -1.4 + 0.05 * t),
          lossMask: ids.map(() => 1),
          reward: [1, 0, 1, 0][i]!,
          terms: {},
          advantage: 0,
          policyVersion: 0,
        };
      }),
    },
  ];
  function flip(sections: string[] | null, placement: "loss" | "reward") {
    const config = resolveConfig({
      model: { type: "checkpoint", path: "/x" },
      task: { name: "addition" },
      algorithm: {
        advantage: { type: "batchNorm" },
        policy: { clip: { type: "ppo" } },
        kl: { beta: 0.1, estimator: "k1", placement, sections },
      },
    });
    const algo = buildAlgorithm(config.algorithm, { maxCompletionTokens: 64 });
    const groups = rollouts();
    const all = groups[0]!.rollouts;
    const masks = sectionMasks(all, tok, algo.kl.sections);
    const res = assignAdvantages(groups, algo, 0.1, 1, masks?.masks);
    const p = packRollouts(all, tok.padId);
    const grid = new Float32Array(p.B * p.T);
    all.forEach((r, b) => r.samplerLogprobs.forEach((x, j) => (grid[b * p.T + p.starts[b]! + j] = x + 0.2)));
    const logp = tensor(grid, [p.B, p.T], { requiresGrad: true });
    const norm = lossNormalizer(all.map((r) => r.lossMask));
    backward(policySurrogate(algo, logp, p, 0.1, norm, masks ? { klMasks: masks.masks } : {}).surrogate);
    return {
      tokenAdvantages: all.map((r) => r.tokenAdvantages),
      observedKl: algo.observedKl(all.map((r) => numbersOf(r, masks?.masks))),
      grad: Array.from(logp.grad!),
      missing: masks?.metrics["kl/sectionMissingFrac"],
      kept: res.rollouts.length,
    };
  }
  it("KL in the reward: only tokens in the sections are penalised (a completion without one keeps full KL)", () => {
    const full = flip(null, "reward");
    const partial = flip(["python"], "reward");
    expect(partial.missing).toBe(0.25);
    expect(partial.tokenAdvantages).not.toEqual(full.tokenAdvantages);
    expect(partial.observedKl).not.toBe(full.observedKl);
    expect(partial.tokenAdvantages[2]).toBeDefined();
  });
  it("KL in the loss: the gradient moves only on section tokens", () => {
    const full = flip(null, "loss");
    const partial = flip(["python"], "loss");
    const moved = full.grad.map((g, k) => Math.abs(g - partial.grad[k]!) > 1e-9);
    expect(moved.some(Boolean)).toBe(true);
    // "plain text" has no section: full KL on it, so its row of the grid is unchanged.
    const p = packRollouts(rollouts()[0]!.rollouts, tok.padId);
    for (let t = 0; t < p.T; t++) expect(moved[2 * p.T + t]).toBe(false);
  });
});
