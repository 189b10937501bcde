/**
 * bench/harness/arms.ts: an arm's recipe maps the bench's sizes onto the trainer's fields and starts from the cached
 * start; a start is made once and reused; a killed arm resumes to the same weights, and only a run of its own recipe.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { armRecipe, cachedStart, reusableResult, trainArm } from "../../bench/harness/arms.js";
import { createModel } from "../../src/models/registry.js";
import { train } from "../../src/trainer/train.js";
import { Rng } from "../../src/util/index.js";

describe("arms", () => {
  it("builds the arm's recipe from the start, the task and the sizes", () => {
    const c = armRecipe({
      kind: "control",
      dir: "/tmp/arms-x",
      seed: 4,
      startDir: "/tmp/start-4",
      task: { name: "addition", options: { maxDigits: 2 }, trainExamples: 50 },
      sizes: { steps: 7, promptsPerStep: 3, groupSize: 5, lr: 2e-4 },
      maxTokens: 12,
    });
    expect(c.name).toBe("control");
    expect(c.seed).toBe(4);
    expect(c.model).toMatchObject({ type: "checkpoint", path: "/tmp/start-4/model" });
    expect(c.task).toMatchObject({ name: "addition", options: { maxDigits: 2 }, trainExamples: 50 });
    expect(c.train).toMatchObject({ steps: 7, promptsPerStep: 3, groupSize: 5, lr: 2e-4, maxCompletionTokens: 12 });
    expect(c.sampler).toMatchObject({ type: "builtin", temperature: 1 });
    expect(c.eval.every).toBe(0);
    expect(c.checkpoint).toMatchObject({ every: 50, keepLast: 1 });
  });

  it("reuses a job's result only when the compared keys are equal", () => {
    const dir = mkdtempSync(join(tmpdir(), "rlvr-arms-reuse-"));
    const job = { dir, kind: "rl", seed: 1, sizes: { steps: 250 } };
    expect(reusableResult(job, ["kind", "seed", "sizes"])).toBeNull(); // nothing stored yet
    writeFileSync(join(dir, "result.json"), JSON.stringify({ ...job, eval: { pass: 0.5 } }));
    expect(reusableResult(job, ["kind", "seed", "sizes"])).toMatchObject({ eval: { pass: 0.5 } });
    expect(reusableResult({ ...job, sizes: { steps: 100 } }, ["kind", "seed", "sizes"])).toBeNull();
    expect(reusableResult({ ...job, seed: 2 }, ["kind", "sizes"])).not.toBeNull(); // only the keys given count
  });

  it("resumes a killed arm to the same weights, and starts over a run of another length", async () => {
    const root = mkdtempSync(join(tmpdir(), "rlvr-arms-resume-"));
    const startDir = join(root, "start");
    await cachedStart(startDir, async () => createModel("micro-char", new Rng(3)));
    const arm = (dir: string, steps: number) =>
      armRecipe({
        kind: "rl",
        dir: join(root, dir),
        seed: 5,
        startDir,
        task: { name: "addition", options: { maxDigits: 1 }, trainExamples: 40 },
        sizes: { steps, promptsPerStep: 1, groupSize: 2, lr: 1e-3 },
        maxTokens: 3,
      });
    const weights = (ck: string) => readFileSync(join(ck, "model.safetensors"));
    const straight = await trainArm(arm("a", 53), false);
    // the same arm killed after its step-50 checkpoint, then run again with resume
    await train(arm("b", 53), { stopAfter: 50, overwrite: true, warn: () => {} });
    expect(readdirSync(join(root, "b", "rl", "checkpoints"))).toContain("step-50");
    const resumed = await trainArm(arm("b", 53), false, { resume: true });
    expect(resumed).toBe(join(root, "b", "rl", "checkpoints", "step-53"));
    expect(weights(resumed).equals(weights(straight))).toBe(true);
    const steps = () =>
      readFileSync(join(root, "b", "rl", "metrics.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { step: number }).step);
    // the killed part ran without trainArm's metrics reporter, so the log holds only what was trained again
    expect(steps()).toEqual([51, 52, 53]);
    // a longer recipe in the same folder is another run: it starts over from the start
    await trainArm(arm("b", 54), false, { resume: true });
    expect(steps()).toEqual(Array.from({ length: 54 }, (_, i) => i + 1));
  }, 60_000);

  it("makes a start once and reuses it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rlvr-arms-"));
    let made = 0;
    const make = async () => {
      made++;
      return createModel("micro-char", new Rng(1));
    };
    const a = await cachedStart(dir, make);
    const b = await cachedStart(dir, make);
    expect([a, b, made]).toEqual([join(dir, "model"), join(dir, "model"), 1]);
    expect(existsSync(join(a, "model.safetensors"))).toBe(true);
  });
});
