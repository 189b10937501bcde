/**
 * The `drgrpo` seed system's pure parts: the separation test behind `seeds.drgrpo.separated` (every seed of one arm
 * above every seed of the other) and the per-seed difference behind `wrong_len_growth_delta`, and the two arms'
 * recipes: from the same start, with the same sizes and lr, they differ only in the advantage (z-score against
 * mean-only), the loss aggregation (per-sequence token mean against the constant normaliser) and the clip (which
 * never acts on-policy): the two biases Dr. GRPO removes. Both run without KL (β 0).
 */
import { describe, expect, it } from "vitest";
import { separation } from "../../bench/seeds/lib/openrs-metrics.js";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { armSizes, runArm } from "../../bench/seeds/lib/openrs-settings.js";
import { armRecipe } from "../../bench/seeds/lib/openrs-job.js";
import drgrpo from "../../bench/seeds/drgrpo.js";

describe("separation", () => {
  it("per-seed differences, and whether the arms' seeds overlap", () => {
    const s = separation([5, 7, 6], [1, 2, 5.5]);
    expect(s.diffs).toEqual([4, 5, 0.5]);
    expect(s.aAbove).toBe(false); // 5 < 5.5: the spreads overlap although every per-seed difference is positive
    expect(separation([5, 7, 6], [1, 2, 4.9]).aAbove).toBe(true);
    expect(separation([1, 2], [3, 4]).aBelow).toBe(true);
    expect(() => separation([1], [1, 2])).toThrow(/same seeds/);
    expect(() => separation([], [])).toThrow(/same seeds/);
  });
});

describe("the drgrpo arms", () => {
  const base = { seed: 1, task: "countdown" as const, start: "/s", dir: "/d", beta: 0, lr: 1e-4, ...armSizes(false) };
  const g = armRecipe({ ...base, arm: "grpo", preset: "grpo" });
  const d = armRecipe({ ...base, arm: "drGrpo", preset: "drGrpo" });
  it("GRPO: z-score advantages, per-sequence token mean; Dr. GRPO: mean-only, constant normaliser; both β 0", () => {
    expect(g.algorithm.advantage.type).toBe("zScore");
    expect(g.algorithm.loss.aggregation).toBe("seqMeanTokenMean");
    expect(g.algorithm.kl.beta).toBe(0);
    expect(d.algorithm.advantage.type).toBe("meanOnly");
    expect(d.algorithm.loss.aggregation).toBe("constantNorm");
    expect(d.algorithm.kl).toEqual(g.algorithm.kl); // Dr. GRPO's "no KL" is β 0: no reference model in either arm
  });
  it("the same task (countdown), start, sizes, sampler and evaluation", () => {
    expect(g.task).toEqual(d.task);
    expect(g.task.name).toBe("countdown");
    expect(g.train.maxCompletionTokens).toBe(24);
    expect(g.train).toEqual(d.train);
    expect(g.model).toEqual(d.model);
    expect(g.sampler).toEqual(d.sampler);
    expect(g.eval).toEqual(d.eval);
    expect(g.train.innerIterations * g.train.miniBatches).toBe(1); // on-policy: the clip never acts
  });
  it("is a SeedSystem named drgrpo", () => {
    expect(drgrpo.name).toBe("drgrpo");
  });
});

describe("runArm", () => {
  it("runs an arm once per process (read here from its result file), and report-only refuses a file of other settings", async () => {
    const root = mkdtempSync(join(tmpdir(), "openrs-arms-"));
    const start = join(root, "start", "model");
    const spec = {
      arm: "grpo" as const,
      seed: 0,
      task: "countdown" as const,
      start,
      preset: "grpo" as const,
      beta: 0,
      lr: 1e-4,
      ...armSizes(true),
    };
    const dir = join(root, "work", "grpo-0");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "arm.json"), JSON.stringify({ ...spec, dir, marker: 42 }));
    process.env.BENCH_SEEDS_REPORT_ONLY = "1";
    try {
      const a = runArm(spec, join(root, "work"));
      expect(runArm({ ...spec }, join(root, "work"))).toBe(a);
      expect(((await a) as unknown as { marker: number }).marker).toBe(42);
      // a different lr is another arm: the file there was made with other settings, so report-only refuses it
      await expect(runArm({ ...spec, lr: 2e-4 }, join(root, "work"))).rejects.toThrow(
        /arm\.json was made with other settings \(lr\)/,
      );
      await expect(runArm({ ...spec, seed: 1 }, join(root, "work"))).rejects.toThrow(/ENOENT.*grpo-1/);
    } finally {
      delete process.env.BENCH_SEEDS_REPORT_ONLY;
    }
  });
});
