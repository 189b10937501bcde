/**
 * User rewards inside real training runs: one that throws on every second call costs exactly those completions
 * (null, counted in `reward/nullFrac` and in the module's error count) and the run goes on; one run in the sandbox
 * pool (`sandbox: true`) scores every completion.
 */
import { afterAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { resolveConfig } from "../../src/trainer/recipe.js";
import { train } from "../../src/trainer/train.js";
import { RunDir } from "../../src/trainer/run-dir.js";
import { jsonlReporter } from "../../src/trainer/reporters.js";
import { userRewardName, userRewardStats } from "../../src/rewards/user-module.js";
import { closeSharedPool } from "../../src/rewards/sandbox/index.js";
import { additionRows, tinyRecipe, tmp, writeJsonl, writeRewardModule } from "./helpers.js";

async function run(reward: Record<string, unknown>) {
  const dir = tmp();
  const path = writeJsonl(join(dir, "sums.jsonl"), additionRows(40));
  const module = writeRewardModule(dir);
  const config = resolveConfig(tinyRecipe(dir, { type: "dataset", path, reward: { module, ...reward } }));
  const rd = new RunDir(join(config.outDir, config.name));
  const res = await train(config, { reporters: [jsonlReporter(rd)], warn: () => {} });
  return { res, metrics: rd.metrics(), module };
}

afterAll(() => closeSharedPool());

describe("user rewards in a training run", () => {
  it("a reward that throws on every second call: half the completions are null, counted, and the run finishes", async () => {
    const { res, metrics, module } = await run({ export: "everyOther" });
    expect(res.step).toBe(2);
    // 2 prompts × 4 completions a step; the load check used the module in a worker, so the count starts at 0 here.
    for (const m of metrics) expect(m["reward/nullFrac"]).toBe(0.5);
    // 16 calls in training and 4 in the final held-out evaluation (eval.examples: 4, one sample each).
    expect(res.finalEval).not.toBeNull();
    expect(userRewardStats(userRewardName(module, "everyOther"))).toEqual({ calls: 20, errors: 10, timeouts: 0 });
  });
  it("a reward run in the sandbox pool scores every completion", async () => {
    const { res, metrics } = await run({ export: "quarter", sandbox: true });
    expect(res.step).toBe(2);
    for (const m of metrics) {
      expect(m["reward/nullFrac"]).toBe(0);
      expect(m["reward/mean"]).toBe(0.25);
    }
  }, 120_000);
});
