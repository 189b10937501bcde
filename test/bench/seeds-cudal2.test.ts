/**
 * The CUDA-L2 seed bench's pure parts (bench/seeds/lib/cudal2-*.ts): the taught kernels pass or fail the kernel
 * reward's gates as labelled, the SFT mixture meets its shares exactly, samples are classified and counted, the
 * rewarded kernels of a step are collected once each, and the audit counts rejections. The recipe loads.
 */
import { afterAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { closeSharedPool } from "../../src/rewards/sandbox/pool.js";
import { scoreKernel, type KernelGold } from "../../src/rewards/kernel/reward.js";
import { loadRecipe } from "../../src/trainer/recipe.js";
import {
  TAUGHT,
  classifyKernel,
  kernelCompletion,
  mixtureKernel,
  NAIVE,
  BLOCKED,
} from "../../bench/seeds/lib/cudal2-kernels.js";
import { auditCount, kernelMix, meanOf, rewardedKernels, speedupOf } from "../../bench/seeds/lib/cudal2-metrics.js";
import type { RolloutGroup } from "../../src/rollout/types.js";

afterAll(() => closeSharedPool());

describe("cudal2 taught kernels", () => {
  // n ≠ k, so the wrong-stride kernel is wrong; the shape is small so the gates run in well under a second each.
  const gold: KernelGold = { m: 24, n: 40, k: 36, dtype: "float32", baseline: "naive" };
  for (const t of TAUGHT) {
    it(`${t.name} ${t.correct ? "passes" : "fails"} every gate of kernel-speed`, { timeout: 60_000 }, async () => {
      const r = await scoreKernel(kernelCompletion(t.source), gold, { profile: "test", seed: 7 });
      expect(r.terms.correct).toBe(t.correct ? 1 : 0);
      if (!t.correct) expect(r.score).toBe(-1);
    });
  }

  it("the mixture meets its shares exactly and sums to one", () => {
    expect(TAUGHT.reduce((a, t) => a + t.share, 0)).toBeCloseTo(1, 12);
    const counts: Record<string, number> = {};
    for (let i = 0; i < 40; i++) counts[mixtureKernel(i, 40).name] = (counts[mixtureKernel(i, 40).name] ?? 0) + 1;
    expect(counts).toEqual({ naive: 16, ikj: 4, blocked: 10, "no-clear": 6, "wrong-stride": 4 });
    expect(mixtureKernel(40, 40).name).toBe(mixtureKernel(0, 40).name); // cyclic
  });

  it("classifies completions by exact kernel source, anything else is other", () => {
    for (const t of TAUGHT) expect(classifyKernel(kernelCompletion(t.source))).toBe(t.name);
    expect(classifyKernel(kernelCompletion(NAIVE.replace("s += ", "s -= ")))).toBe("other");
    const mix = kernelMix([kernelCompletion(NAIVE), kernelCompletion(NAIVE), kernelCompletion(BLOCKED), "junk"]);
    expect(mix).toMatchObject({ naive: 0.5, blocked: 0.25, other: 0.25, ikj: 0 });
  });
});

describe("cudal2 figures", () => {
  it("a sample counts for S when every gate passed and 0 when one failed", () => {
    expect(speedupOf({ text: "", correct: 1, speedup: 2.5 })).toBe(2.5);
    expect(speedupOf({ text: "", correct: 0, speedup: 9 })).toBe(0);
    expect(() => speedupOf({ text: "", correct: 1, speedup: NaN })).toThrow(/bad speed-up/);
    expect(meanOf([0, 1, 2.6])).toBeCloseTo(1.2, 12);
    expect(() => meanOf([])).toThrow(/no values/);
  });

  it("collects each paid (kernel, shape) pair once, with its gold; unpaid ones are left out", () => {
    const roll = (exampleId: string, text: string, speed: number) =>
      ({ exampleId, text, terms: { speed, correct: speed >= 0 ? 1 : 0 } }) as unknown as RolloutGroup["rollouts"][0];
    const groups = [
      { rollouts: [roll("a", "K1", 1.5), roll("a", "K1", 1.5), roll("a", "K2", 0), roll("a", "K3", -1)] },
      { rollouts: [roll("b", "K1", 0.4)] },
    ] as unknown as RolloutGroup[];
    const out = rewardedKernels(groups, (id) => ({ shape: id }));
    expect(out).toEqual([
      { text: "K1", gold: { shape: "a" } },
      { text: "K1", gold: { shape: "b" } },
    ]);
    expect(() => rewardedKernels(groups, () => undefined)).toThrow(/no gold for a/);
  });

  it("the audit counts the reruns that fail a gate", () => {
    expect(auditCount([{ correct: 1 }, { correct: 0 }, { correct: 1 }])).toEqual({ rerun: 3, rejected: 1 });
    expect(auditCount([])).toEqual({ rerun: 0, rejected: 0 });
  });
});

describe("recipes/cuda-l2.yaml", () => {
  it("loads with the short prompt, the test timing profile and a start that fits the longest taught kernel", () => {
    const c = loadRecipe(join(import.meta.dirname, "../../recipes/cuda-l2.yaml"));
    expect(c.task.name).toBe("matmul-kernel");
    expect(c.task.options).toMatchObject({ prompt: "short", profile: "test" });
    const longest = Math.max(...TAUGHT.map((t) => kernelCompletion(t.source).length));
    expect(c.train.maxCompletionTokens).toBeGreaterThanOrEqual(longest + 1);
    expect(c.model.type === "new" && c.model.maxSeqLen).toBeGreaterThanOrEqual(longest + 40);
  });
});
