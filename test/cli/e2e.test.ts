/**
 * End to end through the real CLI (the same `main` that bin/rlvr.js runs): `rlvr train` takes a tiny character
 * model through an SFT warm start and a few GRPO steps on CPU, and its reward rises; then `rlvr eval`, `rlvr sample`
 * and `rlvr tasks` work on the run folder it wrote. Seeded, so the numbers are the same on every run of a backend.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { main } from "../../src/cli/index.js";
import { RunDir } from "../../src/trainer/run-dir.js";

const dir = mkdtempSync(join(tmpdir(), "rlvr-e2e-"));
const RECIPE = join(dir, "tiny.yaml");
writeFileSync(
  RECIPE,
  `
name: tiny
outDir: ${join(dir, "runs")}
seed: 1
model: { type: new, dModel: 32, nLayers: 2, nHeads: 2, maxSeqLen: 40 }
task: { name: addition, options: { maxDigits: 1 }, trainExamples: 70, testExamples: 20 }
sft: { enabled: true, steps: 100, batchSize: 16, lr: 0.003 }
algorithm: { kl: { beta: 0 } }
train: { steps: 20, promptsPerStep: 8, groupSize: 8, maxCompletionTokens: 14, lr: 0.003 }
eval: { every: 0, examples: 20 }
checkpoint: { every: 0, keepBest: false }
log: { progress: false }
`,
);

async function cli(...args: string[]): Promise<string> {
  const out: string[] = [];
  const spy = vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void out.push(a.join(" ")));
  try {
    await main(["node", "rlvr", ...args]);
  } finally {
    spy.mockRestore();
  }
  return out.join("\n");
}

afterEach(() => {
  process.exitCode = undefined;
});

describe("rlvr end to end", () => {
  const run = new RunDir(join(dir, "runs", "tiny"));
  it("train: reward rises within a few CPU steps", async () => {
    const out = await cli("train", RECIPE, "--no-progress");
    expect(out).toContain("held-out pass@1 before");
    const m = run.metrics();
    const r = m.map((x) => x["reward/mean"]!);
    const k = 4;
    const first = r.slice(0, k).reduce((a, b) => a + b, 0) / k;
    const last = r.slice(-k).reduce((a, b) => a + b, 0) / k;
    expect(last).toBeGreaterThan(first + 0.05);
    for (const f of [
      "config.json",
      "metrics.jsonl",
      "samples.jsonl",
      "eval.jsonl",
      "plot.svg",
      "checkpoints/start/model.safetensors",
    ]) {
      expect(existsSync(join(run.root, f)), f).toBe(true);
    }
    expect(readFileSync(join(run.root, "plot.svg"), "utf8")).toContain("<polyline");
  });
  it("eval: a run folder's newest checkpoint on the held-out split", async () => {
    // Greedy, on the same 20 held-out questions as the run's own final evaluation: the numbers must agree exactly.
    // Every figure is compared, and the mean reward is non-zero (format credit), so the agreement is not 0 === 0.
    // pass@1 itself is not required to be above 0: on 20 questions after 20 steps it is 0 or 0.05 depending on the
    // GEMM path (the AVX-512 and AVX2 kernels round differently, and the tiny run's outcome follows).
    const out = await cli("eval", run.root, "--json", "--examples", "20", "--temperature", "0");
    const j = JSON.parse(out.trim().split("\n").pop()!) as Record<string, unknown>;
    const lines = readFileSync(join(run.root, "eval.jsonl"), "utf8").trim().split("\n");
    const final = JSON.parse(lines[lines.length - 1]!) as Record<string, number>;
    expect(final["eval/addition/reward"]).toBeGreaterThan(0);
    const figures = Object.keys(final).filter((k) => k.startsWith("eval/addition/"));
    expect(figures).toContain("eval/addition/pass@1");
    for (const k of figures) expect(j[k], k).toBe(final[k]);
    expect(j.checkpoint).toContain("step-");
  });
  it("sample: scored completions for task prompts", async () => {
    const out = await cli("sample", run.root, "--task", "addition", "--count", "2", "-n", "2", "--temperature", "0");
    expect(out.match(/reward /g)?.length).toBe(4);
  });
  it("tasks: lists the built-in tasks and shows one", async () => {
    expect(await cli("tasks")).toMatch(/addition[\s\S]*countdown/);
    expect(await cli("tasks", "countdown", "--show", "1")).toContain("gold completion");
  });
  it("a bad recipe fails with the field named and exit status 1, no stack trace", async () => {
    const bad = join(dir, "bad.yaml");
    writeFileSync(bad, "model: { type: new }\ntask: { name: addition }\nalgorithm: { loss: { aggregation: mean } }\n");
    const err: string[] = [];
    const spy = vi.spyOn(console, "error").mockImplementation((...a: unknown[]) => void err.push(a.join(" ")));
    await main(["node", "rlvr", "train", bad]);
    spy.mockRestore();
    expect(process.exitCode).toBe(1);
    expect(err.join("\n")).toMatch(/algorithm\.loss\.aggregation: "mean" is not allowed; allowed: "seqMeanTokenMean"/);
  });
});
