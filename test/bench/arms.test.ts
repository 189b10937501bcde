/**
 * bench/harness/arms.ts: an arm's recipe maps the bench's sizes onto the trainer's fields and starts from the cached
 * start; a start is made once and reused.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { armRecipe, cachedStart } from "../../bench/harness/arms.js";
import { createModel } from "../../src/models/registry.js";
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
  });

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
