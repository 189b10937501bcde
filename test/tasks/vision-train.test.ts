/**
 * The vision policy through the real CLI: `rlvr train recipes/visual-rft.yaml` (shrunk by --set) runs the SFT warm
 * start, RL steps, evaluation and a checkpoint with images in every forward pass; the checkpoint loads back as a
 * vision-language model, and `rlvr sample --image FILE` reads a PNG from disk. Learning itself is a benchmark, not a
 * test (docs/vision.md).
 */
import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { loadModel } from "../../src/models/checkpoint.js";
import { VisionLanguageModel, VisionTokenizer } from "../../src/models/vision-lm.js";

const ROOT = resolve(import.meta.dirname, "..", "..");

function rlvr(cwd: string, ...args: string[]) {
  const tsx = pathToFileURL(join(ROOT, "node_modules/tsx/dist/loader.mjs")).href; // the run folder is outside the repo
  const r = spawnSync(process.execPath, ["--import", tsx, join(ROOT, "test/cli/run-cli.ts"), ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, RLVR_THREADS: "1" },
    timeout: 120_000,
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

describe("visual-rft recipe", () => {
  it("trains, checkpoints and samples with images", { timeout: 180_000 }, () => {
    const cwd = mkdtempSync(join(tmpdir(), "rlvr-vision-"));
    const small = ["sft.steps=2", "train.steps=1", "train.promptsPerStep=2", "train.groupSize=2", "eval.every=1"];
    const more = ["eval.examples=2", "checkpoint.every=1", "task.testExamples=4", "name=vis", "sft.batchSize=2"];
    const tiny = ["model.nLayers=1", "model.dModel=32", "model.vision.dModel=16", "train.maxCompletionTokens=6"];
    const sets = [...small, ...more, ...tiny].flatMap((s) => ["--set", s]);
    const train = rlvr(cwd, "train", join(ROOT, "recipes/visual-rft.yaml"), ...sets);
    expect(train.out).toMatch(/held-out pass@1 after/);
    expect(train.code).toBe(0);
    const ckpt = join(cwd, "runs/vis/checkpoints/step-1");
    expect(existsSync(join(ckpt, "model.safetensors"))).toBe(true);
    const { model, tokenizer } = loadModel(ckpt);
    expect(model).toBeInstanceOf(VisionLanguageModel);
    expect(tokenizer).toBeInstanceOf(VisionTokenizer);

    const png = join(ROOT, "test/fixtures/vision/quadrants.png");
    const s = rlvr(cwd, "sample", ckpt, "--prompt", "What?", "--image", png, "--max-new-tokens", "4");
    expect(s.code).toBe(0);
    expect(s.out).toContain('--- prompt: "<image>\\nWhat?"');
    const twoMarkers = rlvr(cwd, "sample", ckpt, "--prompt", "<image><image>", "--image", png);
    expect(twoMarkers.out).toMatch(/rlvr: --prompt has 2 <image> but only 1 --image/);
    expect(twoMarkers.code).toBe(1);
  });
});
