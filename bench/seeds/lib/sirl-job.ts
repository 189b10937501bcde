/**
 * One job of the SIRL seed bench (bench/seeds/sirl.ts), run in its own one-thread process:
 *
 * - `sft`: trains the start of a seed on compact knapsack programs (sirl-gold.ts), saves and evaluates it;
 * - `partial` (recipes/sirl.yaml: REINFORCE++, partial KL on <model> and <code>), `full` (KL on every token) and
 *   `none` (no KL): the paper's three-way comparison from the same start;
 * - `control`: `partial` with the verifier's outputs permuted inside each group.
 *
 * Evaluation: held-out questions (the `final` half unless BENCH_SPLIT=tune) at each decoding of
 * `ENDPOINT_DECODINGS`, scored by the task (program run in the sandbox, model solved by HiGHS); the figure is the
 * solver-correct rate (the `objective` term is 1). Usage: `tsx bench/seeds/lib/sirl-job.ts '<SirlJob as JSON>'`.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Rng } from "../../../src/util/index.js";
import { ENDPOINT_DECODINGS, heldOutExamples, withinGroupControl } from "../../harness/index.js";
import { getTask } from "../../../src/tasks/index.js";
import { loadRecipe } from "../../../src/trainer/recipe.js";
import { train } from "../../../src/trainer/train.js";
import { jsonlReporter } from "../../../src/trainer/reporters.js";
import { RunDir } from "../../../src/trainer/run-dir.js";
import { buildModel } from "../../../src/trainer/model-setup.js";
import { loadModel, saveModel } from "../../../src/models/checkpoint.js";
import { evaluate } from "../../../src/trainer/evaluate.js";
import { trainSft } from "../../../src/trainer/sft.js";
import { compactKnapsackCompletion, parseKnapsack } from "./sirl-gold.js";
import { SIRL, klOverride, type SirlJob, type SirlResult } from "./sirl-settings.js";

const ROOT = resolve(import.meta.dirname, "..", "..", "..");
const RECIPE = join(ROOT, "recipes", "sirl.yaml");

/** The recipe of an arm: recipes/sirl.yaml from the start, at the bench's size, with the arm's KL. */
export function armRecipe(spec: SirlJob, start: string) {
  const s = SIRL(spec.smoke);
  const arm = spec.kind === "sft" ? "partial" : spec.kind;
  return loadRecipe(RECIPE, {
    name: spec.kind,
    outDir: spec.dir,
    seed: spec.seed,
    model: { type: "checkpoint", path: start },
    sft: { enabled: false },
    task: { trainExamples: s.trainExamples, testExamples: Math.max(16, 4 * s.evalExamples) },
    algorithm: { kl: klOverride(arm) },
    train: { ...s.rl },
    eval: { every: 0, atStart: false, examples: 1, temperature: 0, k: [1] },
    checkpoint: { every: 0, keepBest: false },
    log: { progress: false },
  });
}

/** Held-out solver-correct, runs and format rates of a saved model at every decoding. */
async function evaluateModel(spec: SirlJob, modelDir: string) {
  const s = SIRL(spec.smoke);
  const config = armRecipe(spec, modelDir);
  const { model, tokenizer } = loadModel(modelDir);
  const task = getTask(config.task.name, config.task.options);
  const testSet = heldOutExamples(task, spec.split, s.evalExamples);
  const p = `eval/${task.name}`;
  const correct: Record<string, number> = {};
  const runs: Record<string, number> = {};
  const format: Record<string, number> = {};
  for (const d of ENDPOINT_DECODINGS) {
    const res = await evaluate(model, tokenizer, task, testSet, {
      maxNewTokens: config.train.maxCompletionTokens,
      seed: spec.seed,
      temperature: d.temperature,
      k: d.temperature === 0 ? [1] : [1, s.evalSamples],
    });
    correct[d.label] = res.metrics[`${p}/pass@1`]!;
    runs[d.label] = res.metrics[`${p}/reward/runs`]!;
    format[d.label] = res.metrics[`${p}/reward/format`]!;
  }
  return { correct, runs, format };
}

async function runJob(spec: SirlJob): Promise<SirlResult> {
  const s = SIRL(spec.smoke);
  const t0 = Date.now();
  const seconds = () => (Date.now() - t0) / 1000;
  if (spec.kind === "sft") {
    const modelDir = join(spec.dir, "model");
    if (!existsSync(join(modelDir, "model.safetensors"))) {
      const config = armRecipe(spec, modelDir);
      const policy = buildModel({ ...s.model, type: "new" }, spec.seed);
      const pairs = getTask(config.task.name, config.task.options)
        .generate("train", s.trainExamples, 0)
        .map((e) => ({ prompt: e.prompt, completion: compactKnapsackCompletion(parseKnapsack(e.prompt)) }));
      trainSft(policy.model, policy.tokenizer, pairs, {
        steps: s.sft.steps,
        batchSize: s.sft.batchSize,
        lr: s.sft.lr,
        rng: new Rng(spec.seed).split("sft"),
        onStep: (m) => {
          if (m.step % 50 === 0) console.error(`sirl sft seed ${spec.seed} step ${m.step}: loss ${m.loss.toFixed(3)}`);
        },
      });
      saveModel(modelDir, policy.model, policy.tokenizer);
    }
    return { ...spec, ...(await evaluateModel(spec, modelDir)), seconds: seconds() };
  }
  const config = armRecipe(spec, spec.start!);
  const run = new RunDir(join(spec.dir, spec.kind));
  const t1 = performance.now();
  const res = await train(config, {
    resume: false,
    overwrite: true,
    reporters: [jsonlReporter(run)],
    ...(spec.kind === "control" ? { transformGroups: withinGroupControl(spec.seed) } : {}),
  });
  const trainSeconds = (performance.now() - t1) / 1000;
  const metrics = run.metrics();
  const out = await evaluateModel(spec, join(res.runDir, "checkpoints", `step-${res.step}`));
  return {
    ...spec,
    ...out,
    trainReward: metrics.map((m) => m["reward/mean"] ?? NaN),
    trainKl: metrics.map((m) => m["kl/ref"] ?? NaN),
    trainSeconds,
    seconds: seconds(),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const spec = JSON.parse(process.argv[2]!) as SirlJob;
  const result = await runJob(spec);
  writeFileSync(join(spec.dir, `${spec.kind}.json`), JSON.stringify(result));
  process.exit(0); // the sandbox pool's workers would keep the process alive
}
