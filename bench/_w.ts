// scratch: wd1 alone on the tune split (not committed)
import { join, resolve } from "node:path";
import { loadModel } from "../src/models/index.js";
import { getTask } from "../src/tasks/index.js";
import { evaluate } from "../src/trainer/evaluate.js";
import { resolveConfig } from "../src/trainer/recipe.js";
import { train } from "../src/trainer/train.js";
import { heldOutExamples } from "./harness/index.js";
const OUT = resolve("runs/_w");
const SEED = Number(process.env.W_SEED ?? 1), LR = Number(process.env.W_LR ?? 2e-5), STEPS = Number(process.env.W_STEPS ?? 300);
const MODEL = { type: "new", arch: "llama", dModel: 96, nLayers: 3, nHeads: 4, nKvHeads: 2, maxSeqLen: 64 };
const WD1 = { advantage: { type: "meanOnly" }, kl: { beta: 0 }, diffusion: { type: "wd1", estimator: "trajectory", chunks: 4 } };
const recipe = (name: string, model: object, sft: boolean) => resolveConfig({ name, seed: SEED, outDir: OUT, model,
  task: { name: "sudoku", options: { givens: 6 }, trainExamples: 3000, testExamples: 100, seed: 0 },
  sft: { enabled: sft, steps: 1000, batchSize: 16, lr: 5e-4 },
  train: { steps: STEPS, promptsPerStep: 16, groupSize: 6, innerIterations: 1, microBatchSize: 48, maxCompletionTokens: 34, lr: LR },
  sampler: { type: "builtin", temperature: 1.5 }, eval: { every: 0, atStart: false, examples: 1 },
  checkpoint: { every: 50, keepLast: 10 }, log: { progress: false }, algorithm: WD1 } as never);
async function greedy(dir: string) {
  const { model, tokenizer } = loadModel(dir);
  const task = getTask("sudoku", { givens: 6 });
  const r = await evaluate(model, tokenizer, task, heldOutExamples(task, "tune", 200), { temperature: 0, k: [1], maxNewTokens: 34, seed: SEED });
  return r.metrics["eval/sudoku/pass@1"]!;
}
const s = await train(recipe("start", MODEL, true), { resume: false, overwrite: true, stopAfter: 0, reporters: [] });
const start = join(s.runDir, "checkpoints", "start");
console.log("start greedy", await greedy(start));
const rew: number[] = [];
const r = await train(recipe(`wd1-${LR}`, { type: "checkpoint", path: start }, false), { resume: false, overwrite: true,
  reporters: [{ onStep: (i, m) => { rew.push(m["reward/mean"] ?? 0); if (i % 20 === 0) console.log(i, (rew.slice(-20).reduce((a, b) => a + b, 0) / 20).toFixed(3), (m["time/step"] ?? 0).toFixed(2), new Date().toISOString()); } }] });
for (let st = 50; st <= r.step; st += 50) console.log("step", st, "greedy", await greedy(join(r.runDir, "checkpoints", `step-${st}`)));
