/**
 * The SIRL seed bench's pure parts (bench/seeds/lib/sirl-*.ts): knapsack data read back from prompts, the taught
 * compact program scores full marks on the task's own reward (format, runs, the HiGHS objective), a program with one
 * copied number wrong loses the objective, the KL arms of the three-way comparison resolve to the right recipe, and
 * the three-way figure reads every arm at one decoding. The recipe loads with partial KL on <model> and <code>.
 */
import { afterAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { closeSharedPool } from "../../src/rewards/sandbox/pool.js";
import { createOptimisationTask } from "../../src/tasks/optimisation.js";
import { loadRecipe } from "../../src/trainer/recipe.js";
import { klSectionMask } from "../../src/trainer/kl-sections.js";
import { CharTokenizer } from "../../src/models/tokenizer.js";
import { ENDPOINT_DECODINGS } from "../../bench/harness/index.js";
import { compactKnapsackCompletion, parseKnapsack } from "../../bench/seeds/lib/sirl-gold.js";
import { klOverride, SIRL } from "../../bench/seeds/lib/sirl-settings.js";
import { threeWay } from "../../bench/seeds/lib/sirl-metrics.js";

afterAll(() => closeSharedPool());

const RECIPE = join(import.meta.dirname, "../../recipes/sirl.yaml");
const task = createOptimisationTask({ families: ["knapsack"], prompt: "question" });

describe("sirl compact knapsack programs", () => {
  it("reads capacity and (value, weight) pairs back from a prompt, in order", () => {
    const prompt =
      "A hiker can carry at most 30 kg. The items (value, weight in kg) are: rope (10, 12), jacket (28, 3) and map (16, 8).\nEach item is taken whole or left behind.\n";
    expect(parseKnapsack(prompt)).toEqual({
      capacity: 30,
      items: [
        [10, 12],
        [28, 3],
        [16, 8],
      ],
    });
    expect(() => parseKnapsack("A workshop makes chairs.")).toThrow(/not a knapsack prompt/);
  });

  it("the taught program earns full marks (format, runs, objective) on 12 generated problems", async () => {
    const examples = task.generate("train", 12, 5);
    const results = await Promise.all(
      examples.map((e) => task.score(e, compactKnapsackCompletion(parseKnapsack(e.prompt)))),
    );
    expect(results.map((r) => r.terms)).toEqual(
      results.map(() => ({ format: 1, runs: 1, objective: 1, solutionHit: expect.any(Number) })),
    );
  });

  it("one wrong capacity keeps format and runs but loses the objective", async () => {
    const e = task.generate("train", 1, 3)[0]!;
    const d = parseKnapsack(e.prompt);
    const wrong = compactKnapsackCompletion({ ...d, capacity: d.capacity + 1000 }); // every item fits
    const r = await task.score(e, wrong);
    expect(r.terms).toMatchObject({ format: 1, runs: 1, objective: 0 });
  });

  it("fits the bench's model: prompt + completion within maxSeqLen, completion within the token budget", () => {
    const s = SIRL(false);
    for (const e of task.generate("train", 40, 0)) {
      const c = compactKnapsackCompletion(parseKnapsack(e.prompt));
      expect(c.length).toBeLessThanOrEqual(s.rl.maxCompletionTokens);
      expect(e.prompt.length + c.length + 2).toBeLessThanOrEqual(s.model.maxSeqLen);
    }
  });

  it("partial KL covers the <model> and <code> sections of the taught program and not <think>", () => {
    const tok = new CharTokenizer();
    const c = compactKnapsackCompletion({ capacity: 9, items: [[1, 2]] });
    const { mask, missing } = klSectionMask(tok.encode(c), tok, ["model", "code"]);
    expect(missing).toBe(false);
    expect(mask[c.indexOf("knapsack")]).toBe(0);
    expect(mask[c.indexOf("<model>")]).toBe(1);
    expect(mask[c.indexOf("addConstraint")]).toBe(1);
  });
});

describe("sirl KL arms and figures", () => {
  it("recipes/sirl.yaml is REINFORCE++ with partial KL on model and code; the arms change only the KL", () => {
    const c = loadRecipe(RECIPE);
    expect(c.algorithm.advantage.type).toBe("batchNorm");
    expect(c.algorithm.kl).toMatchObject({ sections: ["model", "code"], placement: "reward", estimator: "k1" });
    expect(c.algorithm.kl.beta).toBeGreaterThan(0);
    const full = loadRecipe(RECIPE, { algorithm: { kl: klOverride("full") } });
    const none = loadRecipe(RECIPE, { algorithm: { kl: klOverride("none") } });
    expect(full.algorithm.kl.sections).toBeNull();
    expect(full.algorithm.kl.beta).toBe(c.algorithm.kl.beta);
    expect(none.algorithm.kl.beta).toBe(0);
    expect(loadRecipe(RECIPE, { algorithm: { kl: klOverride("control") } }).algorithm.kl).toEqual(c.algorithm.kl);
    expect({ ...full.algorithm, kl: null }).toEqual({ ...c.algorithm, kl: null });
  });

  it("reads the three KL arms at one decoding, and refuses a missing rate", () => {
    const arm = (t0: number, t1: number) => ({ correct: { T0: t0, T1: t1 } });
    expect(threeWay({ partial: arm(0.5, 0.4), full: arm(0.3, 0.6), none: arm(0.2, 0.1) }, "T0")).toEqual({
      partial: 0.5,
      full: 0.3,
      none: 0.2,
    });
    expect(() => threeWay({ partial: arm(0.5, 0.4), full: { correct: {} }, none: arm(0, 0) }, "T0")).toThrow(
      /full has no rate at T0/,
    );
    expect(ENDPOINT_DECODINGS.map((d) => d.label)).toEqual(["T0", "T1"]);
  });
});
