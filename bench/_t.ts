import { join, resolve } from "node:path";
import { loadModel } from "../src/models/index.js";
import { getTask } from "../src/tasks/index.js";
import { evaluate } from "../src/trainer/evaluate.js";
import { resolveConfig } from "../src/trainer/recipe.js";
import { train } from "../src/trainer/train.js";
import { DECODINGS, heldOutExamples } from "./harness/index.js";
const OUT = resolve("runs/_t");
const TASK = process.env.T_TASK ?? "arithmetic";
const OPTS = JSON.parse(process.env.T_OPTS ?? "{}");
const SFT = Number(process.env.T_SFT ?? 400), RL = Number(process.env.T_RL ?? 60);
const MAXTOK = Number(process.env.T_MAXTOK ?? 24), SEQ = Number(process.env.T_SEQ ?? 72);
const MODEL = { type: "new", arch: "llama", dModel: 96, nLayers: 3, nHeads: 4, nKvHeads: 2, maxSeqLen: SEQ };
const WD1 = { advantage: { type: "meanOnly" }, kl: { beta: 0 }, diffusion: { type: "wd1", estimator: "trajectory", chunks: 4 } };
function recipe(name: string, model: object, sft: boolean, rlSteps: number) {
  return resolveConfig({ name, seed: 0, outDir: OUT, model,
    task: { name: TASK, options: OPTS, trainExamples: 3000, testExamples: 100, seed: 0 },
    sft: { enabled: sft, steps: SFT, batchSize: 16, lr: 5e-4 },
    train: { steps: Math.max(1, rlSteps), promptsPerStep: 16, groupSize: 6, innerIterations: 1, microBatchSize: 48, maxCompletionTokens: MAXTOK, lr: Number(process.env.T_LR ?? 3e-5) },
    sampler: { type: "builtin", temperature: 1.5 }, eval: { every: 0, atStart: false, examples: 1 },
    checkpoint: { every: 0, keepLast: 1 }, log: { progress: false }, algorithm: WD1 } as never);
}
async function passAt(dir: string) {
  const { model, tokenizer } = loadModel(dir);
  const task = getTask(TASK, OPTS);
  const ex = heldOutExamples(task, "tune", 200);
  console.log("max prompt chars", Math.max(...ex.map((e) => e.prompt.length)));
  const out: Record<string, number> = {};
  for (const d of DECODINGS) {
    const r = await evaluate(model, tokenizer, task, ex, { temperature: d.temperature, k: [1], maxNewTokens: MAXTOK, seed: 0 });
    out[d.label] = r.metrics[`eval/${TASK}/pass@1`]!;
  }
  return out;
}
let t = Date.now();
const s = await train(recipe(`start`, MODEL, true, 1), { resume: false, overwrite: true, stopAfter: 0, reporters: [] });
const start = join(s.runDir, "checkpoints", "start");
console.log("sft s", (Date.now() - t) / 1000); t = Date.now();
console.log("start", await passAt(start)); console.log("eval s", (Date.now() - t) / 1000); t = Date.now();
if (RL > 0) {
  const r = await train(recipe(`wd1`, { type: "checkpoint", path: start }, false, RL), { resume: false, overwrite: true, reporters: [{ onStep: (i, m) => { console.log(i, JSON.stringify(Object.entries(m).filter(([k]) => !k.startsWith("time")).slice(0, 12))); } }] });
  console.log("rl s", (Date.now() - t) / 1000);
  console.log("wd1", await passAt(join(r.runDir, "checkpoints", `step-${r.step}`)));
}
