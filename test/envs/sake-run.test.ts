/**
 * SAKE end to end on a tiny model: the task's environment is found through the registry, episodes run through the
 * episode loop inside `sampleGroups`, a random policy's bad input earns the defined reward with counted errors
 * (the run never crashes), and a few training steps through `train()` log the multi-turn metrics.
 */
import { describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { Rng } from "../../src/util/index.js";
import { createModel } from "../../src/models/registry.js";
import { CharTokenizer } from "../../src/models/tokenizer.js";
import "../../src/rewards/index.js";
import { getTask } from "../../src/tasks/index.js";
import { sampleGroups, scoreGroups } from "../../src/rollout/groups.js";
import { hasEnvironment, registerEnvironment } from "../../src/envs/index.js";
import { resolveConfig } from "../../src/trainer/recipe.js";
import { train } from "../../src/trainer/train.js";
import { RunDir } from "../../src/trainer/run-dir.js";
import { jsonlReporter } from "../../src/trainer/reporters.js";

describe("sake through the rollout layer", () => {
  it("a random policy's episodes are scored with defined rewards and counted errors", async () => {
    const task = getTask("sake");
    const examples = task.generate("train", 3, 0);
    const model = createModel("micro-char", new Rng(1)).model.eval();
    const groups = await sampleGroups(model, new CharTokenizer(), task, examples, {
      groupSize: 2,
      maxNewTokens: 60,
      temperature: 1,
      rng: new Rng(2),
      policyVersion: 0,
      idPrefix: "1",
    });
    const all = groups.flatMap((g) => g.rollouts);
    await scoreGroups(task, new Map(examples.map((e) => [e.id, e])), groups);
    for (const r of all) {
      expect(r.episode?.env).toBe("kg-tools");
      expect(r.reward).not.toBeNull();
      expect(r.completionIds.length).toBeLessThanOrEqual(60);
      // A random policy makes no valid call: each episode ends by bad input (error counted) or a budget.
      expect(r.episode!.errors.length > 0 || r.episode!.truncated !== undefined).toBe(true);
      if (r.episode!.envReward !== undefined) expect(r.reward).toBe(0);
    }
  });

  it("trains for two steps and logs episode metrics", async () => {
    const config = resolveConfig({
      name: "sake",
      outDir: mkdtempSync(join(tmpdir(), "rlvr-sake-")),
      seed: 1,
      model: { type: "new", dModel: 16, nLayers: 1, nHeads: 2, maxSeqLen: 512 },
      task: { name: "sake", trainExamples: 20, testExamples: 4 },
      train: { steps: 2, promptsPerStep: 2, groupSize: 2, maxCompletionTokens: 48 },
      eval: { every: 0, examples: 2, atStart: false },
      checkpoint: { every: 0, keepBest: false },
      log: { progress: false },
    });
    const run = new RunDir(join(config.outDir, config.name));
    const res = await train(config, { reporters: [jsonlReporter(run)], warn: () => {} });
    expect(res.step).toBe(2);
    for (const m of run.metrics()) {
      expect(m["episode/turnsMean"]).toBeGreaterThanOrEqual(1);
      expect(m["episode/errors"]! + m["episode/truncatedFrac"]!).toBeGreaterThan(0);
    }
  });
});

describe("an environment whose start throws", () => {
  it("ends those episodes through onError instead of crashing the step", async () => {
    if (!hasEnvironment("throws-at-start"))
      registerEnvironment({
        name: "throws-at-start",
        description: "test only",
        create: () => ({
          name: "throws-at-start",
          stop: ["."],
          budgets: { maxTurns: 2, maxTokensPerTurn: 4 },
          timeoutMs: 100,
          onError: "end",
          errorReward: -1,
          loopReward: 0,
          start: () => {
            throw new Error("no world for this example");
          },
        }),
      });
    const base = getTask("sake");
    const task = { ...base, name: "sake-broken", environment: { name: "throws-at-start" } };
    const examples = base.generate("train", 2, 0);
    const groups = await sampleGroups(
      createModel("micro-char", new Rng(1)).model.eval(),
      new CharTokenizer(),
      task,
      examples,
      {
        groupSize: 1,
        maxNewTokens: 12,
        temperature: 1,
        rng: new Rng(2),
        policyVersion: 0,
        idPrefix: "1",
      },
    );
    await scoreGroups(task, new Map(examples.map((e) => [e.id, e])), groups);
    for (const r of groups.flatMap((g) => g.rollouts)) {
      expect(r.reward).toBe(-1);
      expect(r.episode!.errors[0]).toMatch(/start failed: no world/);
    }
  });
});
