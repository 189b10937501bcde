/**
 * Helpers of the remote-sampler tests: a tiny char checkpoint saved from the trainer's own `buildModel` (so the
 * recipe's `model: {type: checkpoint}` and the server load the same weights), `rlvr serve` on a loopback port, and
 * a 3-step training run on addition whose rewards are a function of the sampled ids (a random tiny model would score
 * 0 everywhere, which leaves nothing to compare).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { saveModel } from "../../src/models/checkpoint.js";
import { buildModel } from "../../src/trainer/model-setup.js";
import { resolveConfig } from "../../src/trainer/recipe.js";
import { train, type TrainOptions } from "../../src/trainer/train.js";
import { RunDir } from "../../src/trainer/run-dir.js";
import { jsonlReporter } from "../../src/trainer/reporters.js";
import { startModelServer, type RunningModelServer } from "../../src/serve/model-server/index.js";
import type { RolloutGroup } from "../../src/rollout/types.js";

/** A 1-layer GPT-2-shaped char model saved to a fresh folder (weights from `seed`). */
export function tinyPolicy(seed = 7): string {
  const dir = join(mkdtempSync(join(tmpdir(), "rlvr-remote-")), "policy");
  const { model, tokenizer } = buildModel(
    { type: "new", arch: "gpt2", dModel: 16, nLayers: 1, nHeads: 2, maxSeqLen: 32, tokenizer: "char" },
    seed,
  );
  saveModel(dir, model, tokenizer);
  return dir;
}

/** `rlvr serve` for `dir` on an ephemeral loopback port. */
export function serve(dir: string, options: Record<string, unknown> = {}): Promise<RunningModelServer> {
  return startModelServer(dir, { port: 0, host: "127.0.0.1", batchWindowMs: 1, modelName: "policy", ...options });
}

/** Rewards with spread: the parity of the sum of the completion's ids (the same ids give the same reward). */
export const idRewards = (gs: RolloutGroup[]): void =>
  gs.forEach((g) =>
    g.rollouts.forEach((r) => {
      r.reward = r.completionIds.reduce((a, b) => a + b, 0) % 2;
      r.terms = { parity: r.reward };
    }),
  );

/** Metrics of a short seeded run of the checkpoint `policy` with this sampler and algorithm section. */
export async function runWith(
  policy: string,
  sampler: object,
  algorithm: object = {},
  opts: TrainOptions & { steps?: number; outDir?: string } = {},
): Promise<{ metrics: Record<string, number>[]; runDir: string }> {
  const config = resolveConfig({
    name: "run",
    outDir: opts.outDir ?? mkdtempSync(join(tmpdir(), "rlvr-remote-run-")),
    seed: 11,
    model: { type: "checkpoint", path: policy },
    task: { name: "addition", options: { maxDigits: 1 }, trainExamples: 40, testExamples: 4 },
    sampler,
    algorithm: { kl: { beta: 0 }, ...algorithm },
    train: { steps: opts.steps ?? 3, promptsPerStep: 2, groupSize: 4, maxCompletionTokens: 6, lr: 3e-3 },
    eval: { every: 0, examples: 4, atStart: false },
    checkpoint: { every: 1, keepBest: false },
    log: { progress: false, sampleGroups: 0 },
  });
  const dir = new RunDir(join(config.outDir, config.name));
  await train(config, { reporters: [jsonlReporter(dir)], warn: () => {}, transformGroups: idRewards, ...opts });
  return { metrics: dir.metrics(), runDir: dir.root };
}
