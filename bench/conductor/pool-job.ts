/**
 * One worker of bench:conductor's pool (bench/conductor/pool.ts), trained in its own one-thread process so that the
 * pool's workers train side by side on a multi-core machine: a GPT-2-shaped character model trained by SFT on fresh
 * pairs of its skill, saved to `dir`. Usage: `tsx bench/conductor/pool-job.ts '<PoolJob as JSON>'`; writes
 * `result` ({ seconds }) when done.
 */
import { writeFileSync } from "node:fs";
import { CharTokenizer, parseTransformerConfig, saveModel, Transformer } from "../../src/models/index.js";
import { trainSft } from "../../src/trainer/sft.js";
import { skillPairs, type SkillName } from "../../src/tasks/conductor-skills.js";
import { Rng } from "../../src/util/index.js";

/** What one pool job trains, and where it puts it. */
export interface PoolJob {
  skill: SkillName;
  /** The worker's index in the pool: it picks the init, data and batch seeds. */
  index: number;
  steps: number;
  d: number;
  layers: number;
  pairs: number;
  batch: number;
  dir: string;
  result: string;
}

/** Trains and saves one worker; returns the seconds it took. */
export function trainWorker(job: PoolJob): number {
  const tokenizer = new CharTokenizer();
  const config = parseTransformerConfig({
    arch: "gpt2", // learned positions: bench:sft's adder learns in this shape, the Llama one did not (docs/models.md)
    vocabSize: tokenizer.vocabSize,
    dModel: job.d,
    nLayers: job.layers,
    nHeads: 4,
    nKvHeads: 4,
    dFf: 4 * job.d,
    maxSeqLen: 192,
    tieEmbeddings: true,
  });
  const model = new Transformer(config, new Rng(100 + job.index));
  const pairs = skillPairs(job.skill, job.pairs, new Rng(200 + job.index));
  const t0 = performance.now();
  trainSft(model, tokenizer, pairs, {
    steps: job.steps,
    batchSize: job.batch,
    lr: 0.003,
    rng: new Rng(300 + job.index),
  });
  saveModel(job.dir, model, tokenizer);
  return (performance.now() - t0) / 1000;
}

if (process.argv[1]?.endsWith("pool-job.ts")) {
  const job = JSON.parse(process.argv[2] ?? "") as PoolJob;
  const seconds = trainWorker(job);
  console.error(`worker ${job.skill}: ${job.steps} SFT steps in ${seconds.toFixed(0)} s`);
  writeFileSync(job.result, JSON.stringify({ seconds }));
}
