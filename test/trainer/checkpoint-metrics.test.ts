/**
 * Checkpoint timing and the crash window around it: a checkpoint step's metrics line carries `time/checkpoint`
 * (the checkpoint is written first), and a crash after the checkpoint but before that line is appended loses
 * nothing, because resume restores the line from the copy kept in the checkpoint.
 */
import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { resolveConfig } from "../../src/trainer/recipe.js";
import { train } from "../../src/trainer/train.js";
import { RunDir } from "../../src/trainer/run-dir.js";
import { jsonlReporter } from "../../src/trainer/reporters.js";

const config = () =>
  resolveConfig({
    name: "ckpt-metrics",
    outDir: mkdtempSync(join(tmpdir(), "rlvr-ckpt-metrics-")),
    seed: 5,
    model: { type: "new", dModel: 16, nLayers: 1, nHeads: 2, maxSeqLen: 32 },
    task: { name: "addition", options: { maxDigits: 1 }, trainExamples: 40, testExamples: 4 },
    algorithm: { loss: { entropyCoef: 0.05 } },
    train: { steps: 4, promptsPerStep: 2, groupSize: 4, maxCompletionTokens: 8 },
    eval: { every: 0, examples: 4, atStart: false },
    checkpoint: { every: 2, keepBest: false },
    log: { progress: false },
  });

describe("checkpoint metrics", () => {
  it("logs time/checkpoint on checkpoint steps only, and every phase timing on every step", async () => {
    const c = config();
    const run = new RunDir(join(c.outDir, c.name));
    await train(c, { reporters: [jsonlReporter(run)] });
    const m = run.metrics();
    expect(m.map((r) => r.step)).toEqual([1, 2, 3, 4]);
    expect(m.map((r) => r["time/checkpoint"] !== undefined)).toEqual([false, true, false, true]);
    for (const r of m) {
      for (const k of ["generate", "reward", "advantage", "update", "oldLogprobs", "weightSync", "step"])
        expect(r[`time/${k}`], k).toBeGreaterThanOrEqual(0);
      expect(r["time/step"]!).toBeGreaterThanOrEqual(r["time/generate"]! + r["time/update"]!);
    }
    expect(m[1]!["time/checkpoint"]!).toBeGreaterThan(0);
  });

  it("restores the metrics line of a checkpoint step lost in a crash right after the checkpoint", async () => {
    const c = config();
    const run = new RunDir(join(c.outDir, c.name));
    await train(c, { reporters: [jsonlReporter(run)] });
    const full = run.metrics();
    // the crash: step 4's checkpoint is complete but its metrics line was never appended
    const lines = readFileSync(run.metricsPath, "utf8").trimEnd().split("\n");
    writeFileSync(run.metricsPath, lines.slice(0, 3).join("\n") + "\n");
    const res = await train(c, { reporters: [jsonlReporter(run)] });
    expect(res.step).toBe(4);
    const after = run.metrics();
    expect(after.map((r) => r.step)).toEqual([1, 2, 3, 4]);
    const { "time/checkpoint": _c, "time/step": _s, ...lost } = full[3]!;
    expect(after[3]).toEqual(lost);
  });
});
