/**
 * Makes the demo's SFT start checkpoint (assets/demo-start/): a small char-level GPT trained briefly on the demo
 * task's gold completions, on purpose short of perfect so that `rlvr demo` has room to show RL improving it.
 * Deterministic (seeded). Run: `npx tsx scripts/make-demo-checkpoint.ts [--steps N] [--out DIR]`.
 */
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { getTask } from "../src/tasks/index.js";
import { loadRecipe } from "../src/trainer/recipe.js";
import { buildModel } from "../src/trainer/model-setup.js";
import { sftWarmStart } from "../src/trainer/warm-start.js";
import { evaluate } from "../src/trainer/evaluate.js";
import { saveModel } from "../src/models/checkpoint.js";

const ROOT = resolve(import.meta.dirname, "..");
const { values } = parseArgs({
  options: {
    steps: { type: "string", default: "450" },
    lr: { type: "string", default: "0.002" },
    batch: { type: "string", default: "32" },
    out: { type: "string", default: join(ROOT, "assets", "demo-start") },
    seed: { type: "string", default: "0" },
  },
});

/** The demo model: ~0.8M parameters, 4 layers of width 128, character vocabulary. */
const MODEL = {
  type: "new" as const,
  arch: "gpt2" as const,
  dModel: 128,
  nLayers: 4,
  nHeads: 4,
  maxSeqLen: 64,
  tokenizer: "char" as const,
};

const demo = loadRecipe(join(ROOT, "recipes", "demo.yaml"));
const task = getTask(demo.task.name, demo.task.options);
const seed = Number(values.seed);
const policy = buildModel(MODEL, seed);
const trainSet = task.generate("train", demo.task.trainExamples, demo.task.seed);
const t0 = Date.now();
await sftWarmStart(policy, trainSet, {
  ...demo,
  seed,
  sft: { enabled: true, steps: Number(values.steps), batchSize: Number(values.batch), lr: Number(values.lr) },
});
const testSet = task.generate("test", demo.eval.examples, demo.task.seed);
const res = await evaluate(policy.model, policy.tokenizer, task, testSet, {
  temperature: 0,
  k: [1],
  maxNewTokens: demo.train.maxCompletionTokens,
  seed: 0,
});
saveModel(values.out!, policy.model, policy.tokenizer);
const params = policy.model.namedParameters().reduce((s, [, p]) => s + p.size, 0);
console.log(
  `saved ${values.out} (${(params / 1e6).toFixed(2)}M params) after ${values.steps} SFT steps in ${((Date.now() - t0) / 1000).toFixed(0)}s; ` +
    `held-out greedy pass@1 ${res.metrics[`eval/${task.name}/pass@1`]!.toFixed(3)}`,
);
