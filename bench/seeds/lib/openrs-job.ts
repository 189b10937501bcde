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
import { MAX_TOKENS, TASK_OPTIONS, type ArmResult, type ArmSpec } from "./openrs-settings.js";

/** The arm's recipe: the preset's algorithm, the arm's rewards, greedy evaluation every `evalEvery`, keep-best on. */
export function armRecipe(spec: ArmSpec) {
  const options = { ...TASK_OPTIONS, ...(spec.cosineMaxLen ? { cosineMaxLen: spec.cosineMaxLen } : {}) };
  return resolveConfig({
    name: spec.arm,
    outDir: spec.dir,
    seed: spec.seed,
    preset: spec.preset,
    model: { type: "checkpoint", path: spec.start },
    task: { name: "arithmetic", options, trainExamples: 7000, testExamples: spec.evalExamples },
    ...(spec.preset === "grpo" ? { algorithm: { kl: { beta: spec.beta } } } : {}),
    sampler: { type: "builtin", temperature: 1 },
    train: {
      steps: spec.steps,
      promptsPerStep: spec.promptsPerStep,
      groupSize: spec.groupSize,
      maxCompletionTokens: MAX_TOKENS,
      lr: spec.lr,
      microBatchSize: 64,
    },
    eval: { every: spec.evalEvery, atStart: true, examples: spec.evalExamples, temperature: 0, k: [1] },
    checkpoint: { every: 0, keepLast: 1, keepBest: true },
    log: { sampleGroups: 1, progress: false },
  });
}

/** Greedy pass@1 of a saved model on the first `n` questions of the `final` held-out half (plain correctness). */
async function finalPass(modelDir: string, n: number, seed: number): Promise<number> {
  const { model, tokenizer } = loadModel(modelDir);
  const task = getTask("arithmetic", TASK_OPTIONS);
  const res = await evaluate(model, tokenizer, task, heldOutExamples(task, "final", n), {
    temperature: 0,
    k: [1],
    maxNewTokens: MAX_TOKENS,
    seed,
  });
  return res.metrics["eval/arithmetic/pass@1"]!;
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
  const evals = run.evals().map((e) => ({ step: e.step, pass: e["eval/arithmetic/pass@1"] ?? NaN }));
  const ck = join(res.runDir, "checkpoints");
  const final = {
    start: await finalPass(join(ck, "start"), spec.finalExamples, spec.seed),
    best: res.best ? await finalPass(join(ck, "best"), spec.finalExamples, spec.seed) : NaN,
    last: await finalPass(join(ck, `step-${res.step}`), spec.finalExamples, spec.seed),
  };
  return { ...spec, steps_, evals, best: res.best, final, trainSeconds };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const spec = JSON.parse(process.argv[2]!) as ArmSpec;
  const result = await runArm(spec);
  writeFileSync(join(spec.dir, "arm.json"), JSON.stringify(result));
}
