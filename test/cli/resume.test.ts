/**
 * Resume: a training run killed with SIGKILL mid-run (a real child process running the CLI) and then resumed from
 * its newest complete checkpoint logs the same metrics, step for step, as an uninterrupted run with the same seed.
 * Wall-clock metrics (time/*, perf/*PerSec) are the only ones left out of the comparison.
 */
import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { tmpdir } from "node:os";
import { main } from "../../src/cli/index.js";
import { RunDir } from "../../src/trainer/run-dir.js";
import { completeSteps } from "../../src/trainer/checkpoints.js";

const ROOT = resolve(__dirname, "../..");
const STEPS = 10;

function recipe(dir: string, name: string): string {
  const path = join(dir, `${name}.yaml`);
  writeFileSync(
    path,
    [
      `name: ${name}`,
      `outDir: ${join(dir, "runs")}`,
      "seed: 7",
      "model: { type: new, dModel: 32, nLayers: 1, nHeads: 2, maxSeqLen: 40 }",
      "task: { name: addition, options: { maxDigits: 1 }, trainExamples: 60, testExamples: 8 }",
      `train: { steps: ${STEPS}, promptsPerStep: 2, groupSize: 4, maxCompletionTokens: 10, lr: 0.003 }`,
      // an untrained model earns no reward; the entropy bonus makes every step move the weights and Adam's moments
      "algorithm: { loss: { entropyCoef: 0.05 } }",
      "eval: { every: 5, examples: 8, atStart: false }",
      "checkpoint: { every: 2, keepLast: 2 }",
      "log: { progress: false }",
    ].join("\n"),
  );
  return path;
}

const stable = (rows: Record<string, number>[]) =>
  rows.map((r) =>
    Object.fromEntries(Object.entries(r).filter(([k]) => !k.startsWith("time/") && !k.endsWith("PerSec"))),
  );

describe("resume after SIGKILL", () => {
  it("gives the same metrics step for step as an uninterrupted run", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rlvr-resume-"));
    // 1. the uninterrupted reference run
    await main(["node", "rlvr", "train", recipe(dir, "straight"), "--no-progress"]);
    const straight = new RunDir(join(dir, "runs", "straight"));

    // 2. the same recipe in a child process, SIGKILLed once it has checkpointed and logged a step past it
    const killed = new RunDir(join(dir, "runs", "killed"));
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(ROOT, "test/cli/run-cli.ts"), "train", recipe(dir, "killed"), "--no-progress"],
      { cwd: ROOT, stdio: "ignore" },
    );
    const exited = new Promise<NodeJS.Signals | null>((res) => child.on("exit", (_code, signal) => res(signal)));
    let killedAt = -1;
    while (child.exitCode === null && child.signalCode === null) {
      const steps = existsSync(killed.metricsPath) ? killed.metrics().length : 0;
      if (steps >= 5 && completeSteps(killed.checkpointsDir).includes(4)) {
        killedAt = steps;
        child.kill("SIGKILL");
        break;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(await exited).toBe("SIGKILL");
    expect(killedAt).toBeGreaterThanOrEqual(5);
    expect(killedAt).toBeLessThan(STEPS);
    expect(Math.max(...completeSteps(killed.checkpointsDir))).toBeLessThan(STEPS);

    // 3. resume through the CLI: picks the newest complete checkpoint and replays the rest
    await main(["node", "rlvr", "train", join(dir, "killed.yaml"), "--no-progress"]);
    const a = stable(straight.metrics());
    const b = stable(killed.metrics());
    expect(b.map((m) => m.step)).toEqual(Array.from({ length: STEPS }, (_, i) => i + 1));
    expect(b).toEqual(a);
    expect(new Set(a.map((m) => m["entropy/mean"])).size).toBe(STEPS); // the weights really changed every step
    expect(stable(killed.evals())).toEqual(stable(straight.evals()));
  });
});
