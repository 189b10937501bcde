/**
 * The Conductor end to end through `train()`: a tiny planner, warm-started by SFT on gold plans, runs RL steps over
 * a pool of exact program workers, a frozen built-in checkpoint worker (the multiplier) and an endpoint that refuses
 * connections (the adder: with onInfraFailure "parse", its failures cost those rollouts, not the run). The planner's completion holds only
 * its own tokens (all trained, no inserted segment), the worker checkpoint's weights do not move,
 * and the executed chains appear in samples.jsonl and in the step metrics.
 */
import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Rng } from "../../src/util/index.js";
import { createModel } from "../../src/models/registry.js";
import { CharTokenizer } from "../../src/models/tokenizer.js";
import { loadModel, saveModel } from "../../src/models/checkpoint.js";
import { resolveConfig } from "../../src/trainer/recipe.js";
import { train } from "../../src/trainer/train.js";
import { RunDir } from "../../src/trainer/run-dir.js";
import { jsonlReporter } from "../../src/trainer/reporters.js";
import { loadWorkerCheckpoint } from "../../src/rollout/conductor/index.js";
import type { Rollout } from "../../src/rollout/types.js";
import type { Transformer } from "../../src/models/transformer.js";

const weights = (m: Transformer) => m.parameters().map((p) => Array.from(p.data));

describe("a few RL steps of a tiny planner", () => {
  it("trains only the planner's tokens and records each executed chain", async () => {
    const out = mkdtempSync(join(tmpdir(), "rlvr-conductor-"));
    const workerDir = join(out, "worker");
    saveModel(workerDir, createModel("micro-char", new Rng(9)).model, new CharTokenizer());
    // An endpoint that refuses connections: a port that was just free.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const deadUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/v1`;
    await new Promise((r) => probe.close(r));
    const program = (id: string, skill: string) => ({ id, description: skill, source: { type: "program", skill } });
    const workers = [
      program("r", "read"),
      { id: "m", description: "mul", skill: "multiply", maxTokens: 8, source: { type: "checkpoint", path: workerDir } },
      { id: "a", description: "add", skill: "add", source: { type: "openai", baseUrl: deadUrl, model: "gone" } },
      program("g", "generalist"),
    ];
    const config = resolveConfig({
      name: "conductor",
      outDir: out,
      seed: 3,
      preset: "grpo",
      model: { type: "new", arch: "llama", dModel: 32, nLayers: 2, nHeads: 2, maxSeqLen: 192 },
      // "parse": the dead endpoint's chains earn 0.5 (under the default "null" they are not scorable, and a run
      // where most completions are stops at maxNullFrac: test/conductor/task.test.ts).
      task: {
        name: "conductor",
        options: { workers, kinds: ["expr"], onInfraFailure: "parse" },
        trainExamples: 64,
        testExamples: 4,
      },
      sft: { enabled: true, steps: 120, batchSize: 16, lr: 0.01 },
      algorithm: { kl: { beta: 0 } },
      train: { steps: 3, promptsPerStep: 2, groupSize: 4, maxCompletionTokens: 96, lr: 0.001 },
      eval: { every: 0, examples: 2, atStart: false },
      checkpoint: { every: 0, keepBest: false },
      log: { progress: false, sampleGroups: 2 },
    });
    const run = new RunDir(join(config.outDir, config.name));
    const worker = loadWorkerCheckpoint(workerDir).model;
    const before = weights(worker);
    const rollouts: Rollout[] = [];
    const res = await train(config, {
      reporters: [jsonlReporter(run)],
      warn: () => {},
      transformGroups: (groups) => rollouts.push(...groups.flatMap((g) => g.rollouts)), // read only
    });
    expect(res.step).toBe(3);

    // The planner's tokens are the only trained tokens: one model segment, mask 1 everywhere, no worker text.
    expect(rollouts.length).toBe(3 * 2 * 4);
    for (const r of rollouts) {
      expect(r.lossMask).toEqual(r.completionIds.map(() => 1));
      expect(r.segments!.map((s) => s.kind)).toEqual(["model"]);
      const chain = r.rewardInfo?.chain as { steps: { output: string | null }[] } | undefined;
      for (const s of chain?.steps ?? []) if (s.output && s.output.length > 3) expect(r.text).not.toContain(s.output);
      expect([0, 0.5, 1]).toContain(r.reward);
    }
    // SFT on gold plans makes most plans parse, so chains were executed: the built-in worker answered, and the dead
    // endpoint failed its steps without stopping the run (those rollouts keep the parse credit 0.5).
    const executed = rollouts.filter((r) => r.rewardInfo?.chain);
    expect(executed.length).toBeGreaterThan(0);
    type Step = { worker: string; status: string; tokens: number; error?: string };
    const steps = executed.flatMap((r) => (r.rewardInfo!.chain as { steps: Step[] }).steps);
    expect(steps.some((s) => s.worker === "m" && s.status === "ok" && s.tokens > 0)).toBe(true);
    const dead = steps.filter((s) => s.worker === "a" && s.status === "error");
    expect(dead.length).toBeGreaterThan(0);
    expect(dead[0]!.error).toMatch(/^a: /);
    expect(rollouts.some((r) => r.advantage !== 0)).toBe(true); // 0.5 against 0 within a group: a learning signal

    // The worker is frozen: the copy the pool used has the weights on disk; the planner moved.
    expect(weights(worker)).toEqual(before);
    expect(weights(worker)).toEqual(weights(loadModel(workerDir).model));

    // samples.jsonl shows the chain (each step's prompt, output, worker and tokens); metrics carry steps and tokens.
    type Shown = { completions: { chain?: { steps: Record<string, unknown>[] } }[] };
    const lines = readFileSync(run.samplesPath, "utf8").trim().split("\n");
    const groups = lines.flatMap((l) => (JSON.parse(l) as { groups: Shown[] }).groups);
    const shown = groups.flatMap((g) => g.completions).filter((c) => c.chain);
    expect(shown.length).toBeGreaterThan(0);
    for (const key of ["prompt", "output", "worker", "tokens"]) expect(shown[0]!.chain!.steps[0]).toHaveProperty(key);
    const metrics = run.metrics();
    expect(metrics.some((m) => (m["conductor/stepsMean"] ?? 0) >= 1)).toBe(true);
  }, 120_000);
});
