/**
 * One job of the `exgrpo` seed system, run in its own process (bench/harness/child-job.ts, one engine thread):
 *
 * - `sft`: the seed's start, a short SFT run of a fresh model on gold completions (skipped when `<dir>/model` exists);
 * - `onpolicy`: RL from the start with the `exgrpo` preset and `replay: none` (on-policy, mean-only advantages);
 * - `exgrpo`: the same run with the preset's experience replay;
 * - `control`: `exgrpo` with the verifier's outputs permuted within each group (bench/harness/controls.ts).
 *
 * Every job evaluates its final model on the held-out half `split` at every decoding of bench/harness/decoding.ts;
 * RL jobs also record greedy pass@1 every `evalEvery` steps (on the first test questions), the per-step training
 * pass rate and replay share, and the CPU time of each step without an evaluation (for the overhead ratio).
 * Writes `<dir>/result.json`. Usage: `tsx bench/seeds/lib/exgrpo-job.ts '<ExgrpoJob as JSON>'`.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DECODINGS, heldOutExamples, withinGroupControl } from "../../harness/index.js";
import { Rng } from "../../../src/util/index.js";
import { getTask } from "../../../src/tasks/index.js";
import { resolveConfig } from "../../../src/trainer/recipe.js";
import { train } from "../../../src/trainer/train.js";
import { jsonlReporter, type Reporter } from "../../../src/trainer/reporters.js";
import { RunDir } from "../../../src/trainer/run-dir.js";
import { buildModel } from "../../../src/trainer/model-setup.js";
import { sft } from "../../../src/trainer/sft.js";
import { loadModel, saveModel } from "../../../src/models/checkpoint.js";
import { evaluate } from "../../../src/trainer/evaluate.js";
import { MAX_TOKENS, MODEL, TASK, type ExgrpoJob, type ExgrpoResult } from "./exgrpo-settings.js";

/** Held-out samples per question at the sampled decodings. */
const EVAL_SAMPLES = 4;
/** Held-out questions of the final evaluation. */
const FINAL_EXAMPLES = 200;

/** The recipe of an RL arm (also what recipes/exgrpo.yaml spells out for `rlvr train`). */
export function armRecipe(job: ExgrpoJob) {
  const s = job.sizes;
  return resolveConfig({
    name: job.kind,
    outDir: job.dir,
    seed: job.seed,
    preset: "exgrpo",
    model: { type: "checkpoint", path: join(job.startDir, "model") },
    task: { ...TASK, testExamples: s.evalExamples },
    ...(job.kind === "onpolicy" ? { algorithm: { replay: { type: "none" } } } : {}),
    sampler: { type: "builtin", temperature: 1 },
    train: {
      steps: s.steps,
      promptsPerStep: s.promptsPerStep,
      groupSize: s.groupSize,
      maxCompletionTokens: MAX_TOKENS,
      lr: s.lr,
      microBatchSize: 64,
    },
    eval: { every: s.evalEvery, atStart: true, examples: s.evalExamples, temperature: 0, k: [1] },
    checkpoint: { every: 0, keepBest: false },
    log: { sampleGroups: 1, progress: false },
  });
}

/** Held-out pass@1 of a saved model at every decoding, on the first FINAL_EXAMPLES questions of `split`. */
async function passByDecoding(modelDir: string, job: ExgrpoJob): Promise<Record<string, number>> {
  const { model, tokenizer } = loadModel(modelDir);
  const task = getTask(TASK.name, TASK.options);
  const examples = heldOutExamples(task, job.split, job.sizes.evalExamples === 10 ? 10 : FINAL_EXAMPLES);
  const out: Record<string, number> = {};
  for (const d of DECODINGS) {
    const k = d.temperature === 0 ? [1] : [1, EVAL_SAMPLES];
    const opts = { maxNewTokens: MAX_TOKENS, seed: job.seed, temperature: d.temperature, k };
    out[d.label] = (await evaluate(model, tokenizer, task, examples, opts)).metrics[`eval/${TASK.name}/pass@1`]!;
  }
  return out;
}

/** CPU seconds (user + system) of this process. */
function cpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** A reporter that times each step in CPU seconds and marks the steps that ran an evaluation. */
function stepTimer(): Reporter & { perStep: number[] } {
  let last = cpuSeconds();
  let evaluated = false;
  const perStep: number[] = [];
  return {
    perStep,
    onEval: () => (evaluated = true),
    onStep() {
      const now = cpuSeconds();
      if (!evaluated) perStep.push(now - last);
      evaluated = false;
      last = now;
    },
  };
}

async function runJob(job: ExgrpoJob): Promise<ExgrpoResult> {
  const t0 = performance.now();
  const none = { curve: [], steps_: [], replayStart: null, stepCpuSeconds: 0 };
  if (job.kind === "sft") {
    const modelDir = join(job.startDir, "model");
    if (!existsSync(join(modelDir, "model.safetensors"))) {
      const policy = buildModel(MODEL, job.seed);
      const trainSet = getTask(TASK.name, TASK.options).generate("train", TASK.trainExamples, 0);
      const pairs = trainSet.map((e) => ({ prompt: e.prompt, completion: e.goldCompletion }));
      const rng = new Rng(job.seed).split("sft");
      await sft(policy.model, policy.tokenizer, pairs, { steps: job.sizes.sftSteps, batchSize: 32, lr: 1e-3, rng });
      saveModel(modelDir, policy.model, policy.tokenizer);
    }
    const trainSeconds = (performance.now() - t0) / 1000;
    return { ...job, ...none, pass: await passByDecoding(modelDir, job), trainSeconds };
  }
  const config = armRecipe(job);
  const run = new RunDir(join(job.dir, job.kind));
  const timer = stepTimer();
  const res = await train(config, {
    resume: false,
    overwrite: true,
    reporters: [jsonlReporter(run), timer],
    warn: () => {},
    ...(job.kind === "control" ? { transformGroups: withinGroupControl(job.seed) } : {}),
  });
  const trainSeconds = (performance.now() - t0) / 1000;
  const key = `eval/${TASK.name}/pass@1`;
  const curve = run.evals().map((e) => ({ step: e.step, pass: e[key] ?? NaN }));
  const steps_ = run.metrics().map((m) => ({
    step: m.step,
    correct: m["reward/correct/mean"] ?? NaN,
    replayFrac: m["replay/frac"] ?? 0,
    retired: m["replay/retired"] ?? 0,
  }));
  const started = run.metrics().find((m) => m["replay/started"] === 1);
  const stepCpuSeconds = timer.perStep.reduce((a, b) => a + b, 0) / Math.max(1, timer.perStep.length);
  const pass = await passByDecoding(join(res.runDir, "checkpoints", `step-${res.step}`), job);
  return { ...job, pass, curve, steps_, replayStart: started?.step ?? null, stepCpuSeconds, trainSeconds };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const job = JSON.parse(process.argv[2]!) as ExgrpoJob;
  writeFileSync(join(job.dir, "result.json"), JSON.stringify(await runJob(job)));
}
