/**
 * Run folders through the real CLI in child processes (issue 11, items 11 and 12):
 * - a run with a changed recipe used to delete an earlier run's logs silently when that run had no complete
 *   checkpoint. Now five changed recipes (and a garbage or missing config.json) are each refused with an `rlvr:`
 *   error that says what to do, leaving every byte in place; `--overwrite` starts over; the same recipe restarts;
 * - leftovers that a kill at the final step leaves (a temporary checkpoint folder, pruning trash, a half-deleted
 *   step folder, a temp file of an atomic write) are cleaned when the finished run is started again.
 */
import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { tmpdir } from "node:os";
import type { RunReport } from "./run-many.js";
import { completeSteps } from "../../src/trainer/checkpoints.js";

const ROOT = resolve(import.meta.dirname, "../..");

function setup(name: string): { dir: string; recipe: string; root: string } {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-run-folder-"));
  const recipe = join(dir, `${name}.yaml`);
  writeFileSync(
    recipe,
    [
      `name: ${name}`,
      `outDir: ${join(dir, "runs")}`,
      "model: { type: new, dModel: 16, nLayers: 1, nHeads: 2, maxSeqLen: 40 }",
      "task: { name: addition, options: { maxDigits: 1 }, trainExamples: 20, testExamples: 4 }",
      "train: { steps: 3, promptsPerStep: 2, groupSize: 2, maxCompletionTokens: 6 }",
      "eval: { every: 0, examples: 2, atStart: false }",
      "checkpoint: { every: 1, keepLast: 2 }",
      "log: { progress: false }",
    ].join("\n"),
  );
  return { dir, recipe, root: join(dir, "runs", name) };
}

function runMany(dir: string, lines: string[][]): RunReport[] {
  const file = join(dir, `lines-${readdirSync(dir).length}.json`);
  writeFileSync(file, JSON.stringify(lines));
  const r = spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "test/cli/run-many.ts"), file], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 300_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return (JSON.parse(r.stdout.trim().split("\n").pop()!) as { reports: RunReport[] }).reports;
}

/** Every file under `root` with its bytes, to show that nothing was touched. */
function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const n of readdirSync(d, { withFileTypes: true })) {
      if (n.isDirectory()) walk(join(d, n.name));
      else out[join(d, n.name).slice(root.length)] = readFileSync(join(d, n.name)).toString("base64");
    }
  };
  walk(root);
  return out;
}

describe("an earlier run is never deleted without --overwrite", () => {
  it("refuses five changed recipes and unreadable configs, keeps every byte; --overwrite and the same recipe start over", () => {
    const { dir, recipe, root } = setup("keep");
    const train = (...args: string[]) => ["train", recipe, "--no-progress", ...args];
    expect(runMany(dir, [train()])[0]!.exitCode).toBe(0);
    // the earlier run was killed before its first checkpoint: logs, no complete checkpoint
    for (const n of readdirSync(join(root, "checkpoints")))
      if (n !== "start") rmSync(join(root, "checkpoints", n), { recursive: true });
    expect(completeSteps(join(root, "checkpoints"))).toEqual([]);
    const before = snapshot(root);
    const changed = [
      train("--set", "train.lr=0.01"),
      train("--set", "seed=5"),
      train("--set", "task.options.maxDigits=2"),
      train("--set", "model.dModel=32"),
      train("--set", "algorithm.kl.beta=0"),
      train("--set", "train.lr=0.01", "--no-resume"),
    ];
    const reports = runMany(dir, changed);
    for (const r of reports) {
      expect(r.escaped).toBeUndefined();
      expect(r.exitCode, r.argv.join(" ")).toBe(1);
      expect(r.stderr).toMatch(
        /^rlvr: run folder .*keep holds an earlier run made with a different recipe \(config\.json, metrics\.jsonl.*\); nothing was deleted\. Pass --overwrite/,
      );
    }
    expect(snapshot(root)).toEqual(before);

    // a garbage config.json, or logs without one, count as another recipe
    writeFileSync(join(root, "config.json"), "{ garbage");
    const r1 = runMany(dir, [train()])[0]!;
    expect(r1.exitCode).toBe(1);
    expect(r1.stderr).toMatch(/different recipe/);
    rmSync(join(root, "config.json"));
    const r2 = runMany(dir, [train()])[0]!;
    expect(r2.exitCode).toBe(1);
    expect(r2.stderr).toMatch(/different recipe \(metrics\.jsonl/);
    expect(readFileSync(join(root, "metrics.jsonl"), "utf8")).toBe(
      Buffer.from(before["/metrics.jsonl"]!, "base64").toString("utf8"),
    );

    // --overwrite says so: the run starts over with the new recipe
    const [over, same] = runMany(dir, [
      train("--set", "train.lr=0.01", "--overwrite"),
      train("--set", "train.lr=0.01", "--no-resume"),
    ]);
    expect(over!.exitCode, over!.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(root, "config.json"), "utf8")).train.lr).toBe(0.01);
    // the same recipe may start over (--no-resume) without --overwrite: it regenerates what it deletes
    expect(same!.exitCode, same!.stderr).toBe(0);
    expect(completeSteps(join(root, "checkpoints"))).toEqual([2, 3]);
  });
});

describe("leftovers of a kill at the final step", () => {
  it("are removed when the finished run is started again, and the complete checkpoints stay", () => {
    const { dir, recipe, root } = setup("final");
    expect(runMany(dir, [["train", recipe, "--no-progress"]])[0]!.exitCode).toBe(0);
    const ck = join(root, "checkpoints");
    // what kills leave: the final checkpoint's temp folder, pruning trash, an in-place half-deleted step folder
    // (older versions), a temp file of an atomic JSONL rewrite
    mkdirSync(join(ck, ".step-3.999999.tmp"));
    writeFileSync(join(ck, ".step-3.999999.tmp", "model.safetensors"), "half");
    mkdirSync(join(ck, ".step-1.999999.trash"));
    mkdirSync(join(ck, "step-1"));
    writeFileSync(join(ck, "step-1", "state.json"), "{}");
    writeFileSync(join(root, ".metrics.jsonl.999999.1700000000000.tmp"), "");
    const [again] = runMany(dir, [["train", recipe, "--no-progress"]]);
    expect(again!.exitCode, again!.stderr).toBe(0);
    expect(readdirSync(ck).sort()).toEqual(["best", "start", "step-2", "step-3"]);
    expect(readdirSync(root).filter((n) => n.startsWith("."))).toEqual([]);
    expect(existsSync(join(ck, "step-3", "COMPLETE"))).toBe(true);
  });
});
