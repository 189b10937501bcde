/**
 * ExGRPO replay in the training loop (spec §6): the delayed start fires on exactly the step after the first fresh
 * pass rate above 35%, solved questions retire, mixed groups reach the shaped loss, replay is inert before its
 * start, the buffer survives resume, and missing behaviour log-probs or an unclipped policy fail at load.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { getTask } from "../../src/tasks/index.js";
import { resolveConfig } from "../../src/trainer/recipe.js";
import { train } from "../../src/trainer/train.js";
import { RunDir } from "../../src/trainer/run-dir.js";
import { jsonlReporter } from "../../src/trainer/reporters.js";
import type { RolloutGroup } from "../../src/rollout/types.js";

const TERMS = getTask("addition", { maxDigits: 1 }).terms;
/** Correct members per group, by step: fresh pass rates 4/16, 5/16 (group 0 solved: retired), 6/16, then 2 per group. */
const CORRECT: Record<number, number[]> = { 1: [1, 1, 1, 1], 2: [4, 1, 0, 0], 3: [2, 2, 1, 1] };

/** Sets each fresh completion's terms by its place in the step (the tiny model's text does not matter). */
const scripted = (groups: RolloutGroup[], step: number) =>
  groups.forEach((g, gi) =>
    g.rollouts.forEach((r, j) => {
      const k = (CORRECT[step] ?? [2, 2, 2, 2])[gi] ?? 0;
      r.terms = Object.fromEntries(TERMS.map((t) => [t.name, t.name === "correct" ? (j < k ? 1 : 0) : 1]));
      r.reward = TERMS.reduce((a, t) => a + t.weight * r.terms[t.name]!, 0);
    }),
  );

function recipe(name: string, outDir: string, replay: object = {}, steps = 5) {
  return resolveConfig({
    name,
    outDir,
    seed: 3,
    preset: "exgrpo",
    model: { type: "new", dModel: 16, nLayers: 1, nHeads: 2, maxSeqLen: 32 },
    task: { name: "addition", options: { maxDigits: 1 }, trainExamples: 40, testExamples: 4 },
    algorithm: { replay: { type: "exgrpo", ...replay } },
    train: { steps, promptsPerStep: 4, groupSize: 4, maxCompletionTokens: 6, lr: 1e-3 },
    eval: { every: 0, examples: 4, atStart: false },
    checkpoint: { every: 1, keepLast: 5, keepBest: false },
    log: { progress: false, sampleGroups: 0 },
  });
}

async function run(config: ReturnType<typeof recipe>, stopAfter?: number, transform = scripted) {
  const dir = new RunDir(join(config.outDir, config.name));
  await train(config, {
    reporters: [jsonlReporter(dir)],
    warn: () => {},
    transformGroups: transform,
    ...(stopAfter ? { stopAfter } : {}),
  });
  return dir.metrics();
}

describe("ExGRPO replay in a run", () => {
  it("starts exactly after the first step whose fresh pass rate exceeds 0.35; retires solved questions", async () => {
    const m = await run(recipe("start", mkdtempSync(join(tmpdir(), "rlvr-replay-"))));
    expect(m.map((s) => s["replay/passRate"])).toEqual([4 / 16, 5 / 16, 6 / 16, 8 / 14, 8 / 14]);
    expect(m.map((s) => s["replay/started"])).toEqual([0, 0, 1, 1, 1]); // state after the step
    expect(m.map((s) => s["replay/frac"])).toEqual([0, 0, 0, 0.5, 0.5]); // ⌊0.5·4⌋ of 4 questions from step 4
    expect(m[1]!["replay/retired"]).toBe(1); // step 2's group 0 was all correct
    for (const s of m.slice(0, 3)) expect(s["replay/shapedRatioMean"]).toBeUndefined();
    for (const s of m.slice(3)) {
      // The replayed rows reached the loss with f(w) = w/(w + 0.1) ∈ (0, 1), sampled by an older policy.
      expect(s["replay/shapedRatioMean"]).toBeGreaterThan(0);
      expect(s["replay/shapedRatioMean"]).toBeLessThan(1);
      expect(s["replay/versionLagMean"]).toBeGreaterThanOrEqual(1);
      // Their lp_old are behaviour log-probs: kept out of the sampler/trainer mismatch check.
      expect(s["mismatch/logpDiffMax"]).toBeLessThan(1e-3);
      expect(s["reward/correct/mean"]).toBe(8 / 14); // reward metrics describe fresh rows only (10/16 with replays)
    }
  });

  it("before its start, replay changes nothing: the same numbers as the run without replay", async () => {
    const out = mkdtempSync(join(tmpdir(), "rlvr-replay-"));
    const never = await run(recipe("never", out, { startPassRate: 1 }));
    const none = recipe("none", out);
    const plain = await run({ ...none, algorithm: { ...none.algorithm, replay: { type: "none" } } });
    expect(never.map((s) => s["loss/total"])).toEqual(plain.map((s) => s["loss/total"]));
    expect(never.map((s) => s["grad/norm"])).toEqual(plain.map((s) => s["grad/norm"]));
  });

  it("resume restores the buffer (same steps as an uninterrupted run); a stored answer without its log-probs fails", async () => {
    const out = mkdtempSync(join(tmpdir(), "rlvr-replay-"));
    const whole = await run(recipe("whole", out));
    const config = recipe("split", out);
    await run(config, 4);
    const resumed = await run(config);
    expect(resumed.map((s) => s["loss/total"])).toEqual(whole.map((s) => s["loss/total"]));
    expect(resumed.map((s) => s["replay/frac"])).toEqual(whole.map((s) => s["replay/frac"]));

    const statePath = join(out, "split", "checkpoints", "step-5", "state.json");
    const state = JSON.parse(readFileSync(statePath, "utf8"));
    delete state.replay.entries[0][1].rollouts[0].behaviorLogprobs;
    writeFileSync(statePath, JSON.stringify(state));
    await expect(run(recipe("split", out, {}, 6))).rejects.toThrow(/behaviorLogprobs\) are missing/);
  });

  it("runs with zero-std resampling (a step's later generation batches are all fresh)", async () => {
    const config = recipe("resample", mkdtempSync(join(tmpdir(), "rlvr-replay-")));
    const resample = { ...config.algorithm, zeroStd: { policy: "resample" as const, maxGenBatches: 3 } };
    // Step 4 (replay on): the first fresh group is all correct, so that step generates a second batch.
    const solvedAt4 = (groups: RolloutGroup[], step: number) => {
      scripted(groups, step);
      if (step === 4) scripted([groups[0]!], 2);
    };
    const m = await run({ ...config, algorithm: resample }, undefined, solvedAt4);
    expect(m).toHaveLength(5);
    expect(m[3]!["dynamic/genBatches"]).toBeGreaterThan(1);
    expect(m[3]!["replay/frac"]).toBe(0.5);
  });
  it.each([
    ["ratio", { ratio: 0.25 }],
    ["startPassRate", { startPassRate: 0.3 }],
    ["maxPerQuestion", { maxPerQuestion: 1 }],
    ["sigma", { sigma: 0.05 }],
  ])("flipping replay.%s moves the numbers of the steps with replay", async (_field, flip) => {
    const out = mkdtempSync(join(tmpdir(), "rlvr-replay-"));
    const loss = (m: Record<string, number>[]) => m.map((s) => s["loss/total"]);
    const base = await run(recipe("base", out));
    const flipped = await run(recipe("flipped", out, flip));
    expect(loss(flipped)).not.toEqual(loss(base));
  });

  it("config errors name the field: an unclipped policy, or a sampler without exact log-probs", () => {
    const base = {
      model: { type: "new" },
      task: { name: "addition" },
      algorithm: { replay: { type: "exgrpo" } },
    };
    expect(() => resolveConfig(base)).toThrow(/algorithm\.policy\.clip: clip "none" with algorithm\.replay/);
    expect(() =>
      resolveConfig({
        ...base,
        algorithm: { ...base.algorithm, policy: { clip: { type: "ppo" } }, diffusion: { type: "wd1" } },
      }),
    ).toThrow(/algorithm\.replay: replayed answers need the behaviour log-probs/);
    expect(() => resolveConfig({ ...base, algorithm: { replay: { type: "exgrpo", ratio: 1 } } })).toThrow(/ratio/);
  });
});
