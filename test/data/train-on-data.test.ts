/** A recipe trains a tiny model on the user's JSONL file and on a verl Parquet file, with a built-in and a user reward. */
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { resolveConfig } from "../../src/trainer/recipe.js";
import { train } from "../../src/trainer/train.js";
import { RunDir } from "../../src/trainer/run-dir.js";
import { jsonlReporter } from "../../src/trainer/reporters.js";
import { additionRows, tinyRecipe, tmp, writeAdditionParquet, writeJsonl, writeRewardModule } from "./helpers.js";

async function runRecipe(raw: Record<string, unknown>) {
  const config = resolveConfig(raw);
  const run = new RunDir(join(config.outDir, config.name));
  const res = await train(config, { reporters: [jsonlReporter(run)], warn: () => {} });
  return { res, metrics: run.metrics(), config };
}

describe("training on your own data", () => {
  it("trains on a JSONL file with the built-in maths reward (and a format term)", async () => {
    const dir = tmp();
    const path = writeJsonl(join(dir, "sums.jsonl"), additionRows(60));
    const { res, metrics, config } = await runRecipe(
      tinyRecipe(dir, {
        type: "dataset",
        path,
        reward: [
          { term: "correct", reward: "math-answer" },
          { term: "format", weight: 0.2, reward: "boxed-format" },
        ],
        stop: ["}"],
      }),
    );
    expect(config.task.name).toBe("dataset");
    expect(res.step).toBe(2);
    expect(metrics).toHaveLength(2);
    expect(metrics[0]!["reward/format/mean"]).toBeTypeOf("number");
    expect(metrics[0]!["reward/nullFrac"]).toBe(0);
  });

  it("trains on a verl Parquet file with a user reward module (TypeScript)", async () => {
    const dir = tmp();
    const path = writeAdditionParquet(join(dir, "train.parquet"));
    const module = writeRewardModule(dir);
    const { res, metrics } = await runRecipe(
      tinyRecipe(dir, { type: "dataset", path, reward: { module, export: "score", options: { bonus: 0 } } }),
    );
    expect(res.step).toBe(2);
    expect(metrics[0]!["reward/nullFrac"]).toBe(0);
    const mean = metrics[0]!["reward/mean"]!;
    expect(mean).toBeGreaterThanOrEqual(0);
    expect(mean).toBeLessThanOrEqual(1);
  });
});
