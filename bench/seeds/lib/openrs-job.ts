/**
 * One RL arm of the `openrs` and `drgrpo` seed systems, run in its own process (bench/harness/child-job.ts):
 * trains from the shared start with the arm's algorithm and rewards (bench/seeds/lib/openrs-settings.ts), keeping
 * the best checkpoint by held-out greedy pass@1, then evaluates the start, keep-best's checkpoint and the last step
 * greedily on the `final` held-out half (questions neither keep-best nor any setting saw). Writes `<dir>/arm.json`.
 * Usage: `tsx bench/seeds/lib/openrs-job.ts '<ArmSpec as JSON>'`.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { heldOutExamples } from "../../harness/splits.js";
import { getTask } from "../../../src/tasks/index.js";
import { resolveConfig } from "../../../src/trainer/recipe.js";
import { train } from "../../../src/trainer/train.js";
import { jsonlReporter } from "../../../src/trainer/reporters.js";
import { RunDir } from "../../../src/trainer/run-dir.js";
import { loadModel } from "../../../src/models/checkpoint.js";
import { evaluate } from "../../../src/trainer/evaluate.js";
import { taskOf, type ArmResult, type ArmSpec } from "./openrs-settings.js";

/** The arm's recipe: the preset's algorithm, the arm's rewards, greedy evaluation every `evalEvery`, keep-best on. */
export function armRecipe(spec: ArmSpec) {
  const t = taskOf(spec.task);
  const options = { ...t.options, ...(spec.cosineMaxLen ? { cosineMaxLen: spec.cosineMaxLen } : {}) };
  return resolveConfig({
    name: spec.arm,
    outDir: spec.dir,
    seed: spec.seed,
    preset: spec.preset,
    model: { type: "checkpoint", path: spec.start },
    task: { name: spec.task, options, trainExamples: t.trainExamples, testExamples: spec.evalExamples },
    ...(spec.preset === "grpo" ? { algorithm: { kl: { beta: spec.beta } } } : {}),
    sampler: { type: "builtin", temperature: 1 },
    train: {
      steps: spec.steps,
      promptsPerStep: spec.promptsPerStep,
      groupSize: spec.groupSize,
      maxCompletionTokens: t.maxTokens,
      lr: spec.lr,
      microBatchSize: 64,
    },
    eval: { every: spec.evalEvery, atStart: true, examples: spec.evalExamples, temperature: 0, k: [1] },
    checkpoint: { every: 0, keepLast: 1, keepBest: true },
    log: { sampleGroups: 1, progress: false },
  });
}

/** Greedy pass@1 of a saved model on the first `finalExamples` questions of the `final` held-out half (plain correctness). */
async function finalPass(spec: ArmSpec, modelDir: string): Promise<number> {
  const { model, tokenizer } = loadModel(modelDir);
  const t = taskOf(spec.task);
  const task = getTask(spec.task, t.options);
  const res = await evaluate(model, tokenizer, task, heldOutExamples(task, "final", spec.finalExamples), {
    temperature: 0,
    k: [1],
    maxNewTokens: t.maxTokens,
    seed: spec.seed,
  });
  return res.metrics[`eval/${spec.task}/pass@1`]!;
}

const orNull = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? null : x);

async function runArm(spec: ArmSpec): Promise<ArmResult> {
  const config = armRecipe(spec);
  const run = new RunDir(join(spec.dir, spec.arm));
  const t0 = performance.now();
  const res = await train(config, { resume: false, overwrite: true, reporters: [jsonlReporter(run)] });
  const trainSeconds = (performance.now() - t0) / 1000;
  const steps_ = run.metrics().map((m) => ({
    step: m.step,
    correct: m["reward/correct/mean"] ?? NaN,
    correctLen: orNull(m["length/correctMean"]),
    wrongLen: orNull(m["length/wrongMean"]),
    len: m["length/mean"] ?? NaN,
  }));
  const evals = run.evals().map((e) => ({ step: e.step, pass: e[`eval/${spec.task}/pass@1`] ?? NaN }));
  const ck = join(res.runDir, "checkpoints");
  const final = {
    start: await finalPass(spec, join(ck, "start")),
    best: res.best ? await finalPass(spec, join(ck, "best")) : NaN,
    last: await finalPass(spec, join(ck, `step-${res.step}`)),
  };
  return { ...spec, steps_, evals, best: res.best, final, trainSeconds };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const spec = JSON.parse(process.argv[2]!) as ArmSpec;
  const result = await runArm(spec);
  writeFileSync(join(spec.dir, "arm.json"), JSON.stringify(result));
}
