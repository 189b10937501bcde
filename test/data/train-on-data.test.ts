/**
 * A recipe trains a tiny model on the user's data: a JSONL file and a verl Parquet file that the test writes, each
 * with built-in rewards (maths answer plus a weighted format term) and with a user reward module (TypeScript).
 */
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

const FILES = {
  jsonl: (dir: string) => writeJsonl(join(dir, "sums.jsonl"), additionRows(60)),
  parquet: (dir: string) => writeAdditionParquet(join(dir, "train.parquet")),
};

const REWARDS = {
  "built-in": () => [
    { term: "correct", reward: "math-answer" },
    { term: "format", weight: 0.2, reward: "boxed-format" },
  ],
  // A constant 0.25, so the run's mean reward shows that this reward, and no other, scored every completion.
  user: (dir: string) => ({ module: writeRewardModule(dir), export: "quarter" }),
};

describe.each(Object.keys(FILES) as (keyof typeof FILES)[])("training on a %s file", (format) => {
  it.each(Object.keys(REWARDS) as (keyof typeof REWARDS)[])("with a %s reward", async (kind) => {
    const dir = tmp();
    const task = { type: "dataset", path: FILES[format](dir), reward: REWARDS[kind](dir), stop: ["}"] };
    const { res, metrics, config } = await runRecipe(tinyRecipe(dir, task));
    expect(config.task.name).toBe("dataset");
    expect(res.step).toBe(2);
    expect(metrics).toHaveLength(2);
    for (const m of metrics) {
      // Every completion was scored (no nulls), and the mean lies in the reward's range.
      expect(m["reward/nullFrac"]).toBe(0);
      if (kind === "user") expect(m["reward/mean"]).toBe(0.25);
      else expect(m["reward/mean"]).toBeGreaterThanOrEqual(0);
      if (kind === "built-in") expect(m["reward/mean"]).toBeLessThanOrEqual(1.2);
    }
    if (kind === "built-in") expect(metrics[0]!["reward/format/mean"]).toBeTypeOf("number");
  });
});
