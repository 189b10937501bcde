/**
 * The SFT start of `npm run bench:trl:learn` and the held-out evaluation both trainers' policies get.
 *
 * The start: a 4-layer Llama with the parity fixture's BPE tokenizer, SFT'd by rlvr's trainSft on the task's gold
 * completions in chunks until its greedy pass@1 on the `tune` half reaches `sft.targetPass` (or `sft.maxSteps`),
 * written with saveModel (a checkpoint transformers loads), and cached under runs/trl-learn-start/<key>. The key
 * hashes the start's settings and the source that makes it (bench/harness/source-hash.ts, plus this file), not the
 * RL settings, so tuning the RL run reuses the start.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Rng } from "../src/util/index.js";
import { loadModel, saveModel } from "../src/models/checkpoint.js";
import { parseTransformerConfig } from "../src/models/config.js";
import { Transformer } from "../src/models/transformer.js";
import type { Tokenizer } from "../src/models/tokenizer.js";
import type { Example, Task } from "../src/tasks/types.js";
import { evaluate } from "../src/trainer/evaluate.js";
import { trainSft } from "../src/trainer/sft.js";
import { heldOutExamples, sourceHash, SFT_START_SOURCES } from "./harness/index.js";
import { S } from "./trl-learn-settings.js";
import { FIXTURE, ROOT } from "./trl-shared.js";

/** Held-out pass@1 of a model scored by the task: greedy, or the mean over `S.evalSamples` samples at temperature. */
export async function heldOutPass(
  model: Transformer,
  tokenizer: Tokenizer,
  task: Task,
  examples: readonly Example[],
  temperature = 0,
): Promise<number> {
  const k = [temperature > 0 ? S.evalSamples : 1];
  const opts = { temperature, k, maxNewTokens: S.rl.maxNewTokens, seed: 0 };
  const { metrics } = await evaluate(model, tokenizer, task, examples, opts);
  const n = temperature > 0 ? S.evalSamples : 1;
  return metrics[`eval/${task.name}/mean@${n}`]!;
}

/** The SFT start (cached): its directory, SFT steps and greedy pass@1 on the tune half. */
export async function sftStart(task: Task): Promise<{ dir: string; steps: number; tunePass: number }> {
  const key = createHash("sha256")
    .update(JSON.stringify({ task: S.task, model: S.model, sft: S.sft }))
    .update(sourceHash(ROOT, [...SFT_START_SOURCES, "bench/trl-learn-start.ts"]))
    .digest("hex")
    .slice(0, 16);
  const dir = join(ROOT, "runs", "trl-learn-start", key);
  const record = join(dir, "start.json");
  if (existsSync(record)) {
    return { dir, ...(JSON.parse(readFileSync(record, "utf8")) as { steps: number; tunePass: number }) };
  }
  const { tokenizer } = loadModel(FIXTURE);
  const config = parseTransformerConfig({
    arch: "llama",
    vocabSize: 300,
    tieEmbeddings: false,
    normEps: 1e-6,
    ...S.model,
  });
  const model = new Transformer(config, new Rng(0).split("init"));
  const pairs = task
    .generate("train", S.task.trainExamples, 0)
    .map((e) => ({ prompt: e.prompt, completion: e.goldCompletion }));
  const tune = heldOutExamples(task, "tune", S.sft.tuneExamples);
  let steps = 0;
  let tunePass = 0;
  while (steps < S.sft.maxSteps && tunePass < S.sft.targetPass) {
    // A fresh AdamW per chunk at a constant lr that follows a cosine from lr to lr / 10 over maxSteps, chunk by
    // chunk, so stopping at any chunk leaves no schedule half-done.
    const lr = S.sft.lr * (0.1 + 0.45 * (1 + Math.cos((Math.PI * steps) / S.sft.maxSteps)));
    trainSft(model, tokenizer, pairs, {
      steps: S.sft.chunk,
      batchSize: S.sft.batchSize,
      lr,
      warmupSteps: 0,
      minLrFrac: 1,
      rng: new Rng(0).split(`sft-${steps}`),
    });
    steps += S.sft.chunk;
    tunePass = await heldOutPass(model, tokenizer, task, tune);
    console.log(`  SFT start: ${steps} steps, greedy pass@1 on the tune half ${tunePass.toFixed(3)}`);
  }
  mkdirSync(dir, { recursive: true });
  saveModel(dir, model, tokenizer);
  writeFileSync(record, JSON.stringify({ steps, tunePass, settings: { task: S.task, model: S.model, sft: S.sft } }));
  return { dir, steps, tunePass };
}
