/** Recipe loading: defaults of spec §0, presets of §10, and errors that name the field and the allowed values. */
import { describe, expect, it } from "vitest";
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { tmpdir } from "node:os";
import { loadRecipe, resolveConfig } from "../../src/trainer/recipe.js";
import { configWarnings } from "../../src/trainer/config.js";
import { ConfigError } from "../../src/util/index.js";

const BASE = { model: { type: "checkpoint", path: "/x" }, task: { name: "addition" } };
const errorOf = (raw: unknown): string => {
  try {
    resolveConfig(raw);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("expected a ConfigError");
};

describe("defaults (spec §0: a bare config is the grpo preset)", () => {
  const c = resolveConfig(BASE);
  it("advantage: zScore, sample std, eps 1e-4, group std", () =>
    expect(c.algorithm.advantage).toEqual({ type: "zScore", std: "sample", eps: 1e-4, stdScope: "group" }));
  it("nulls excluded, maxNullFrac 0.5", () =>
    expect(c.algorithm.nulls).toEqual({ onNull: "exclude", maxNullFrac: 0.5 }));
  it("zero-std groups kept", () => expect(c.algorithm.zeroStd.policy).toBe("keep"));
  it("token ratio, no clip", () => expect(c.algorithm.policy).toEqual({ ratio: "token", clip: { type: "none" } }));
  it("KL beta 0.04, k3, in the loss", () =>
    expect(c.algorithm.kl).toMatchObject({ beta: 0.04, estimator: "k3", placement: "loss", controller: "fixed" }));
  it("seqMeanTokenMean, no entropy bonus, every token trained", () =>
    expect(c.algorithm.loss).toEqual({ aggregation: "seqMeanTokenMean", entropyCoef: 0, afterFirstError: "train" }));
  it("G 8, mu 1, M 1", () => expect(c.train).toMatchObject({ groupSize: 8, innerIterations: 1, miniBatches: 1 }));
  it("truncated kept, terms summed", () =>
    expect([c.algorithm.truncated, c.algorithm.rewardAggregate]).toEqual(["keep", "sumThenNormalize"]));
  it("sampler T = 1, no top-k/top-p", () =>
    expect(c.sampler).toEqual({ type: "builtin", temperature: 1, topK: 0, topP: 1 }));
});

describe("bad recipes fail at load, naming the field and the allowed values", () => {
  it("wrong enum value", () => {
    const msg = errorOf({ ...BASE, algorithm: { loss: { aggregation: "mean" } } });
    expect(msg).toContain("algorithm.loss.aggregation");
    expect(msg).toContain('"mean" is not allowed');
    expect(msg).toContain('"seqMeanTokenMean" | "tokenMean" | "seqMeanTokenSum" | "constantNorm"');
  });
  it("wrong union member", () => {
    const msg = errorOf({ ...BASE, algorithm: { advantage: { type: "zscore" } } });
    expect(msg).toContain("algorithm.advantage.type");
    expect(msg).toContain('"zScore" | "meanOnly" | "batchNorm" | "rloo" | "reinforcePlusPlusBaseline"');
  });
  it("misspelt field", () => {
    const msg = errorOf({ ...BASE, train: { grupSize: 4 } });
    expect(msg).toContain("train.grupSize: unknown field");
    expect(msg).toContain("groupSize");
  });
  it("field of another union member", () => {
    const msg = errorOf({ ...BASE, algorithm: { advantage: { type: "meanOnly", eps: 0.1 } } });
    expect(msg).toContain("algorithm.advantage.eps: unknown field; allowed: type");
  });
  it("out-of-range number", () =>
    expect(errorOf({ ...BASE, algorithm: { nulls: { maxNullFrac: 2 } } })).toContain("algorithm.nulls.maxNullFrac"));
  it("unknown preset", () =>
    expect(errorOf({ ...BASE, preset: "ppo" })).toMatch(/preset: "ppo" is not allowed; allowed: "grpo"/));
  it("clip none off-policy (§2.2)", () =>
    expect(errorOf({ ...BASE, train: { innerIterations: 2 } })).toContain("algorithm.policy.clip"));
  it("GSPO with another aggregation is accepted with a warning, as TRL does (§2.1)", () => {
    const c = resolveConfig({
      ...BASE,
      algorithm: { policy: { ratio: "sequence" }, loss: { aggregation: "tokenMean" } },
    });
    expect(configWarnings(c).join("\n")).toMatch(/algorithm\.policy\.ratio: .*GSPO.*tokenMean/);
    expect(configWarnings(resolveConfig({ ...BASE, algorithm: { policy: { ratio: "sequence" } } }))).toEqual([]);
  });
  it("normalizeThenSum cannot take KL in the reward", () => {
    expect(
      errorOf({ ...BASE, algorithm: { rewardAggregate: "normalizeThenSum", kl: { placement: "reward", beta: 0.1 } } }),
    ).toContain("algorithm.rewardAggregate");
  });
  it("offPolicy fields are checked by name (§5; more in test/sampling/remote-sampler.test.ts)", () => {
    expect(errorOf({ ...BASE, algorithm: { offPolicy: { correction: "clip" } } })).toContain(
      "algorithm.offPolicy.correction",
    );
  });
  it("preset sirl is accepted and merged", () => {
    const c = resolveConfig({ ...BASE, preset: "sirl" });
    expect(c.algorithm.kl).toMatchObject({
      beta: 0.0005,
      estimator: "k1",
      placement: "reward",
      sections: ["model", "python"],
    });
    expect(c.algorithm.policy.clip).toMatchObject({ type: "ppo", epsLow: 0.2, epsHigh: 0.3 });
    expect(c.train.groupSize).toBe(16);
  });
  it("dual clip must exceed 1 + epsHigh", () => {
    expect(errorOf({ ...BASE, algorithm: { policy: { clip: { type: "ppo", dualClip: 1.1 } } } })).toContain(
      "algorithm.policy.clip.dualClip",
    );
  });
  it("normalizeThenSum requires zScore (§8.1)", () => {
    expect(
      errorOf({ ...BASE, algorithm: { rewardAggregate: "normalizeThenSum", advantage: { type: "rloo" } } }),
    ).toContain("algorithm.rewardAggregate");
  });
});

describe("presets and recipe files", () => {
  it("a recipe field wins over its preset, and a changed union member replaces the preset's", () => {
    const c = resolveConfig({
      ...BASE,
      preset: "dapo",
      algorithm: { policy: { clip: { type: "ppo", epsHigh: 0.3 } } },
    });
    expect(c.algorithm.policy.clip).toEqual({ type: "ppo", epsLow: 0.2, epsHigh: 0.3, dualClip: null });
    expect(c.train.groupSize).toBe(16);
    expect(c.algorithm.zeroStd.policy).toBe("resample");
    const d = resolveConfig({ ...BASE, preset: "drGrpo", algorithm: { advantage: { type: "rloo" } } });
    expect(d.algorithm.advantage).toEqual({ type: "rloo" });
  });
  it("presets set the spec §10 pieces", () => {
    const p = (name: string) => resolveConfig({ ...BASE, preset: name }).algorithm;
    expect(p("drGrpo")).toMatchObject({
      advantage: { type: "meanOnly" },
      kl: { beta: 0 },
      loss: { aggregation: "constantNorm" },
    });
    expect(p("dapo")).toMatchObject({
      policy: { clip: { epsLow: 0.2, epsHigh: 0.28 } },
      loss: { aggregation: "tokenMean" },
      overlong: { enabled: true },
    });
    expect(p("reinforcePlusPlus")).toMatchObject({
      advantage: { type: "batchNorm" },
      kl: { beta: 0.01, estimator: "k1", placement: "reward" },
    });
    expect(p("rloo")).toMatchObject({ advantage: { type: "rloo" }, kl: { beta: 0 } });
  });
  const dir = resolve(__dirname, "../../recipes");
  for (const file of readdirSync(dir).filter((f) => /\.(ya?ml|json)$/.test(f))) {
    it(`recipes/${file} validates`, () => {
      const c = loadRecipe(join(dir, file));
      expect(c.name).toBe(file.replace(/\.(ya?ml|json)$/, ""));
      if (c.model.type === "checkpoint") expect(c.model.path.startsWith("/")).toBe(true); // resolved against the recipe's folder
    });
  }
  it("loads JSON and YAML and reports syntax errors with the file name", () => {
    const tmp = mkdtempSync(join(tmpdir(), "rlvr-recipe-"));
    writeFileSync(join(tmp, "a.json"), JSON.stringify({ ...BASE, train: { steps: 3 } }));
    writeFileSync(
      join(tmp, "b.yaml"),
      "model: {type: checkpoint, path: ./m}\ntask: {name: addition}\ntrain: {steps: 4}\n",
    );
    writeFileSync(join(tmp, "c.yaml"), "model: [unclosed\n");
    expect(loadRecipe(join(tmp, "a.json")).train.steps).toBe(3);
    const b = loadRecipe(join(tmp, "b.yaml"), { train: { lr: 0.5 } });
    expect([b.train.steps, b.train.lr, b.model.type === "checkpoint" && b.model.path]).toEqual([
      4,
      0.5,
      join(tmp, "m"),
    ]);
    expect(() => loadRecipe(join(tmp, "c.yaml"))).toThrow(/c\.yaml: not valid YAML/);
    expect(() => loadRecipe(join(tmp, "missing.yaml"))).toThrow(/file not found/);
  });
});

describe("task validation at load", () => {
  it("unknown task names the field and the registered tasks", () => {
    const msg = errorOf({ ...BASE, task: { name: "adition" } });
    expect(msg).toContain('task.name: "adition" is not a registered task; allowed:');
    expect(msg).toContain('"addition"');
  });
  it("bad task option names the option", () =>
    expect(errorOf({ ...BASE, task: { name: "addition", options: { maxDigit: 3 } } })).toContain("task.options"));
});
