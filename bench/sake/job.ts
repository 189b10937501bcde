/**
 * One job of `npm run bench:sake`, run in its own process (bench/harness/child-job.ts, one engine thread):
 *
 * - `sft`: the seed's start: a fresh policy trained by SFT on gold trajectories (tool output masked), with or without
 *   the filtering turn, on the questions about the SFT half of the train drugs (settings.ts, `inSftHalf`; skipped
 *   when `<startDir>/model` exists);
 * - `rl`: GRPO from the start, episodes through the kg-tools environment, on a train set that mostly holds prompts
 *   SFT never saw (settings.ts, RL_TRAIN_EXAMPLES);
 * - `control`: the same run with the verifier's outputs permuted within each group (bench/harness/controls.ts).
 *
 * Every job evaluates its final model on the held-out half `split` of the questions about drugs never asked about in
 * training: EM at every decoding of bench/harness/decoding.ts, and greedy tokens per question and format rate.
 * Writes `<dir>/result.json`. Usage: `tsx bench/sake/job.ts '<SakeJob as JSON>'`.
 */
import { DECODINGS, heldOutHalf } from "../harness/index.js";
import { armRecipe, cachedStart, jobEntry, trainArm } from "../harness/arms.js";
import { Rng } from "../../src/util/index.js";
import { getTask, sakeTestSize } from "../../src/tasks/index.js";
import { buildModel } from "../../src/trainer/model-setup.js";
import { sft, sftExampleOf } from "../../src/trainer/sft.js";
import { loadModel } from "../../src/models/checkpoint.js";
import { evaluate } from "../../src/trainer/evaluate.js";
import {
  MAX_TOKENS,
  inSftHalf,
  MODEL,
  RL_TRAIN_EXAMPLES,
  TRAIN_EXAMPLES,
  taskOptions,
  type SakeEval,
  type SakeJob,
  type SakeResult,
} from "./settings.js";

/** Held-out evaluation of a saved model (see the file comment). */
export async function evaluateModel(modelDir: string, job: SakeJob): Promise<SakeEval> {
  const { model, tokenizer } = loadModel(modelDir);
  const options = taskOptions(job.filterTurn);
  const task = getTask("sake", options);
  const all = task.generate("test", sakeTestSize(options), 0);
  const examples = all.filter((e) => heldOutHalf(e.prompt) === job.split).slice(0, job.sizes.smoke ? 6 : undefined);
  const pass: Record<string, number> = {};
  let tokens = 0,
    format = 0;
  for (const d of DECODINGS) {
    const k = d.temperature === 0 ? [1] : [...new Set([1, job.sizes.evalSamples])];
    const r = await evaluate(model, tokenizer, task, examples, {
      maxNewTokens: MAX_TOKENS,
      seed: job.seed,
      temperature: d.temperature,
      k,
    });
    pass[d.label] = r.metrics["eval/sake/pass@1"]!;
    if (d.temperature !== 0) continue;
    for (const ro of r.groups.flatMap((g) => g.rollouts)) {
      tokens += ro.completionIds.length;
      format += Math.round(((ro.terms["kg"] ?? 0) - 0.7 * (ro.terms["em"] ?? 0)) / 0.3); // kg = 0.3·format + 0.7·em
    }
  }
  return {
    pass,
    tokensPerQuestion: tokens / examples.length,
    formatRate: format / examples.length,
    questions: examples.length,
  };
}

async function runJob(job: SakeJob): Promise<SakeResult> {
  const t0 = performance.now();
  const seconds = () => (performance.now() - t0) / 1000;
  const trainExamples = job.kind === "sft" ? TRAIN_EXAMPLES : RL_TRAIN_EXAMPLES;
  const task = { name: "sake", options: taskOptions(job.filterTurn), trainExamples };
  if (job.kind === "sft") {
    const modelDir = await cachedStart(job.startDir, async () => {
      const policy = buildModel(MODEL, job.seed);
      const all = getTask(task.name, task.options).generate("train", TRAIN_EXAMPLES, 0);
      const trainSet = job.sizes.smoke ? all : all.filter((e) => inSftHalf(e.prompt));
      const opts = { steps: job.sizes.sftSteps, batchSize: 16, lr: 2e-3, rng: new Rng(job.seed).split("sft") };
      await sft(policy.model, policy.tokenizer, trainSet.map(sftExampleOf), opts);
      return policy;
    });
    const trainSeconds = seconds();
    return { ...job, eval: await evaluateModel(modelDir, job), trainSeconds };
  }
  const config = armRecipe({ ...job, task, sizes: job.sizes, maxTokens: MAX_TOKENS });
  // a killed arm resumes from its newest checkpoint under BENCH_SAKE_REUSE=1 (the runner's reuse)
  const checkpoint = await trainArm(config, job.kind === "control", { resume: process.env.BENCH_SAKE_REUSE === "1" });
  const trainSeconds = seconds();
  return { ...job, eval: await evaluateModel(checkpoint, job), trainSeconds };
}

await jobEntry(import.meta.url, runJob);
