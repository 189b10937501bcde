/** A reward checker that throws inside a real training run: those completions are null, counted, and the run goes on. */
import { describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { getTask, registerTask, tasks } from "../../src/tasks/index.js";
import type { Task } from "../../src/tasks/types.js";
import { resolveConfig } from "../../src/trainer/recipe.js";
import { train } from "../../src/trainer/train.js";
import { RunDir } from "../../src/trainer/run-dir.js";
import { jsonlReporter } from "../../src/trainer/reporters.js";

/** "addition" whose checker throws on every completion with an odd number of tokens. */
function flakyAddition(): Task {
  const base = getTask("addition", { maxDigits: 1 });
  return {
    ...base,
    name: "flaky-addition",
    description: "addition with a checker that throws on odd-length completions (test only)",
    async score(example, completion, tokens) {
      if ((tokens?.length ?? completion.length) % 2 === 1) throw new Error("checker crashed on purpose");
      return base.score(example, completion, tokens);
    },
  };
}

describe("a throwing reward inside a run", () => {
  it("marks those completions unscorable, counts them, and finishes the run", async () => {
    if (!tasks.has("flaky-addition")) registerTask(flakyAddition());
    const config = resolveConfig({
      name: "flaky",
      outDir: mkdtempSync(join(tmpdir(), "rlvr-flaky-")),
      seed: 3,
      model: { type: "new", dModel: 16, nLayers: 1, nHeads: 2, maxSeqLen: 32 },
      task: { name: "flaky-addition", trainExamples: 40, testExamples: 4 },
      algorithm: { nulls: { maxNullFrac: 1 } },
      train: { steps: 3, promptsPerStep: 2, groupSize: 4, maxCompletionTokens: 8 },
      eval: { every: 0, examples: 4, atStart: false },
      checkpoint: { every: 0, keepBest: false },
      log: { progress: false },
    });
    const run = new RunDir(join(config.outDir, config.name));
    const res = await train(config, { reporters: [jsonlReporter(run)] });
    expect(res.step).toBe(3);
    const m = run.metrics();
    expect(m).toHaveLength(3);
    const nulls = m.map((r) => r["reward/nullFrac"]!);
    expect(nulls.some((x) => x > 0)).toBe(true);
    expect(nulls.every((x) => x < 1)).toBe(true);
  });
  it("stops with an error naming the task when nulls exceed maxNullFrac", async () => {
    if (!tasks.has("flaky-addition")) registerTask(flakyAddition());
    const config = resolveConfig({
      name: "flaky2",
      outDir: mkdtempSync(join(tmpdir(), "rlvr-flaky-")),
      seed: 3,
      model: { type: "new", dModel: 16, nLayers: 1, nHeads: 2, maxSeqLen: 32 },
      task: { name: "flaky-addition", trainExamples: 40, testExamples: 4 },
      algorithm: { nulls: { maxNullFrac: 0 } },
      train: { steps: 3, promptsPerStep: 2, groupSize: 4, maxCompletionTokens: 8 },
      eval: { every: 0, examples: 4, atStart: false },
      log: { progress: false },
    });
    await expect(train(config)).rejects.toThrow(/unscorable.*flaky-addition.*checker crashed on purpose/);
  });
});
