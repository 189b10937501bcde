/**
 * A probe of bench:wd1's sudoku start (docs/diffusion.md, "The start (SFT)"): SFT of a fresh DiffusionLM (recipes/
 * wd1.yaml's shape) by the LLaDA objective, then greedy and sampled answers on 100 `tune` puzzles: the share of given
 * cells copied, of blank cells right, and of puzzles solved. Knobs (defaults from bench/wd1-settings.ts, the bench's
 * model and sudoku settings): PROBE_STEPS (1000), PROBE_LR (the bench's SFT lr), PROBE_GIVENS (the bench's givens),
 * PROBE_D and PROBE_LAYERS (the bench's model). The run folder goes under runs/wd1-start-probe/. The bench itself
 * chooses each seed's start by its start rule (`BENCH_WD1_ARMS= npm run bench:wd1` makes only the starts).
 * Run: npx tsx bench/wd1-start.ts
 */
import { join, resolve } from "node:path";
import { loadModel } from "../src/models/index.js";
import { getTask } from "../src/tasks/index.js";
import { evaluate } from "../src/trainer/evaluate.js";
import { resolveConfig } from "../src/trainer/recipe.js";
import { train } from "../src/trainer/train.js";
import { heldOutExamples } from "./harness/index.js";
import { MODEL, SUDOKU } from "./wd1-settings.js";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const steps = env("PROBE_STEPS", 1000);
const lr = env("PROBE_LR", SUDOKU.sftLr);
const givens = env("PROBE_GIVENS", SUDOKU.options.givens as number);
const dModel = env("PROBE_D", MODEL.dModel);
const nLayers = env("PROBE_LAYERS", MODEL.nLayers);

const config = resolveConfig({
  name: `start-${steps}-${lr}-${givens}-${dModel}x${nLayers}`,
  seed: 0,
  outDir: resolve(import.meta.dirname, "..", "runs", "wd1-start-probe"),
  model: { ...MODEL, dModel, nLayers, maxSeqLen: SUDOKU.maxSeqLen },
  task: { name: "sudoku", options: { givens }, trainExamples: 3000, testExamples: 100, seed: 0 },
  sft: { enabled: true, steps, batchSize: 16, lr },
  train: { steps: 1, promptsPerStep: 4, groupSize: 6, maxCompletionTokens: SUDOKU.maxTokens, lr: 3e-4 },
  sampler: { type: "builtin", temperature: 0.9 },
  eval: { every: 0, atStart: false, examples: 1 },
  checkpoint: { every: 0, keepLast: 1 },
  log: { progress: false },
  algorithm: { advantage: { type: "meanOnly" }, kl: { beta: 0 }, diffusion: { type: "wd1" } },
});
const t0 = performance.now();
const res = await train(config, { resume: false, overwrite: true, stopAfter: 0, reporters: [] });
console.log(`SFT ${steps} steps at lr ${lr}, ${givens} givens: ${((performance.now() - t0) / 1000).toFixed(0)} s`);
const { model, tokenizer } = loadModel(join(res.runDir, "checkpoints", "start"));
const task = getTask("sudoku", { givens });
const examples = heldOutExamples(task, "tune", 100);
for (const temperature of [0, 0.3, 1]) {
  const r = await evaluate(model, tokenizer, task, examples, {
    temperature,
    k: [1],
    maxNewTokens: SUDOKU.maxTokens,
    seed: 0,
  });
  let givenOk = 0,
    givenN = 0,
    blankOk = 0,
    blankN = 0;
  r.groups.forEach((g, i) => {
    const cells = /<answer>(\d{16})/.exec(g.rollouts[0]!.text)?.[1] ?? "";
    const puzzle = /Sudoku (\d{16})/.exec(examples[i]!.prompt)![1]!;
    const solution = /<answer>(\d{16})/.exec(examples[i]!.goldCompletion!)![1]!;
    for (let c = 0; c < 16; c++) {
      if (puzzle[c] !== "0") [givenN, givenOk] = [givenN + 1, givenOk + (cells[c] === puzzle[c] ? 1 : 0)];
      else [blankN, blankOk] = [blankN + 1, blankOk + (cells[c] === solution[c] ? 1 : 0)];
    }
  });
  const solved = r.metrics["eval/sudoku/pass@1"]!;
  console.log(
    `T ${temperature}: givens copied ${((100 * givenOk) / givenN).toFixed(1)}%, blanks right ` +
      `${((100 * blankOk) / blankN).toFixed(1)}%, solved ${(100 * solved).toFixed(1)}%`,
  );
}
