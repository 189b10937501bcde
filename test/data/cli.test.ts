/**
 * The real CLI, in one child process (test/cli/run-many.ts, the same `main` as bin/rlvr.js): `rlvr data export`
 * writes a built-in task as verl Parquet, `rlvr data inspect` reads it, and `rlvr train` runs a YAML recipe in the
 * short form (`task: { type: dataset, ... }`) whose data file and reward module are relative to the recipe's folder.
 * Bad input ends in one `rlvr:` line naming the file and line.
 */
import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { RunReport } from "../cli/run-many.js";
import { tmp, writeRewardModule } from "./helpers.js";

const ROOT = resolve(import.meta.dirname, "../..");

function runMany(lines: string[][], dir: string): RunReport[] {
  const file = join(dir, "lines.json");
  writeFileSync(file, JSON.stringify(lines));
  const r = spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "test/cli/run-many.ts"), file], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 240_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return (JSON.parse(r.stdout.trim().split("\n").pop()!) as { reports: RunReport[] }).reports;
}

describe("rlvr data and a dataset recipe through the CLI", () => {
  it("exports, inspects and trains on the export with a user reward", () => {
    const dir = tmp();
    writeRewardModule(dir);
    writeFileSync(
      join(dir, "recipe.yaml"),
      [
        "model: { type: new, dModel: 16, nLayers: 1, nHeads: 2, maxSeqLen: 32 }",
        "task:",
        "  type: dataset",
        "  path: sums.parquet",
        "  reward:",
        "    - { term: correct, reward: { module: ./my-reward.ts, export: score } }",
        "    - { term: format, weight: 0.2, reward: boxed-format }",
        "  stop: ['}']",
        "algorithm: { nulls: { maxNullFrac: 1 } }",
        "train: { steps: 2, promptsPerStep: 2, groupSize: 4, maxCompletionTokens: 8 }",
        "eval: { every: 0, examples: 4, atStart: false }",
        "checkpoint: { every: 0, keepBest: false }",
        "log: { progress: false }",
      ].join("\n"),
    );
    writeFileSync(join(dir, "bad.jsonl"), '{"prompt":"1+1=","answer":"2"}\nnot json\n');
    const [exp, inspect, trained, bad] = runMany(
      [
        [
          "data",
          "export",
          "addition",
          "--out",
          join(dir, "sums.parquet"),
          "--count",
          "20",
          "--options",
          '{"maxDigits":1}',
        ],
        ["data", "inspect", join(dir, "sums.parquet")],
        ["train", join(dir, "recipe.yaml"), "--out-dir", join(dir, "runs"), "--no-progress"],
        ["data", "inspect", join(dir, "bad.jsonl")],
      ],
      dir,
    );
    expect(exp!.stdout).toMatch(/wrote 40 rows to .*sums\.parquet/);
    expect(inspect!.stdout).toMatch(/sums\.parquet: 40 rows \(20 train, 20 test\)/);
    expect(inspect!.stdout).toContain("fields: data_source (string), prompt (list), ability (string)");
    expect(inspect!.stdout).toContain("golds the reward math-answer can parse: 40 of 40");
    expect(trained!.exitCode, trained!.stderr).toBe(0);
    expect(existsSync(join(dir, "runs", "recipe", "metrics.jsonl"))).toBe(true);
    expect(bad!.exitCode).toBe(1);
    expect(bad!.stderr).toMatch(/^rlvr: dataset .*bad\.jsonl:2: not valid JSON/);
    expect(bad!.escaped).toBeUndefined();
  }, 240_000);
});
