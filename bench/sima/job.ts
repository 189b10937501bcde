/**
 * One job of `npm run bench:sima`, run in its own process (bench/harness/child-job.ts, one engine thread):
 *
 * - `sft`: the seed's start: a fresh policy trained by SFT on solver trajectories of SFT_KINDS (the environment's
 *   observations masked, src/trainer/sft.ts) mixed with arithmetic golds (skipped when `<startDir>/model` exists);
 * - `rl`: GRPO from the start on every task kind, episodes through the grid-world environment;
 * - `control`: the same run with the verifier's outputs permuted within each group (bench/harness/controls.ts).
 *
 * Every job evaluates its final model on the held-out half `split` (whole held-out layouts, and held-out
 * compositions): success at every decoding of bench/harness/decoding.ts, greedy success per composition, episode
 * statistics, and greedy arithmetic pass@1. Writes `<dir>/result.json`.
 * Usage: `tsx bench/sima/job.ts '<SimaJob as JSON>'`.
 */
import { DECODINGS, heldOutExamples } from "../harness/index.js";
import { armRecipe, cachedStart, jobEntry, trainArm } from "../harness/arms.js";
import { Rng } from "../../src/util/index.js";
import { getTask } from "../../src/tasks/index.js";
import type { SimaGold } from "../../src/tasks/sima.js";
import { buildModel } from "../../src/trainer/model-setup.js";
import { sft, sftExampleOf, type SftExample } from "../../src/trainer/sft.js";
import { loadModel } from "../../src/models/checkpoint.js";
import { evaluate } from "../../src/trainer/evaluate.js";
import {
  ARITHMETIC,
  MAX_TOKENS,
  MODEL,
  SFT_KINDS,
  SIMA,
  type SimaEval,
  type SimaJob,
  type SimaResult,
} from "./settings.js";

/** The SFT mix: solver trajectories of SFT_KINDS and a `mix` share of arithmetic golds, shuffled. */
export function sftMix(seed: number, mix: number): SftExample[] {
  const world = getTask(SIMA.name, { ...SIMA.options, kinds: [...SFT_KINDS] }).generate("train", SIMA.trainExamples, 0);
  const nArith = Math.round((SIMA.trainExamples * mix) / (1 - mix));
  const arith = getTask(ARITHMETIC.name, ARITHMETIC.options).generate("train", nArith, 0);
  return new Rng(seed).split("mix").shuffle([...world, ...arith].map(sftExampleOf));
}

/** Held-out evaluation of a saved model (see the file comment). */
export async function evaluateModel(modelDir: string, job: SimaJob): Promise<SimaEval> {
  const { model, tokenizer } = loadModel(modelDir);
  const task = getTask(SIMA.name, SIMA.options);
  const examples = heldOutExamples(task, job.split, job.sizes.evalExamples);
  const pass: Record<string, number> = {};
  const byComposition: SimaEval["byComposition"] = {};
  let turns = 0,
    errors = 0;
  for (const d of DECODINGS) {
    const k = d.temperature === 0 ? [1] : [1, job.sizes.evalSamples].filter((x, i, a) => a.indexOf(x) === i);
    const opts = { maxNewTokens: MAX_TOKENS, seed: job.seed, temperature: d.temperature, k };
    const r = await evaluate(model, tokenizer, task, examples, opts);
    pass[d.label] = r.metrics[`eval/${SIMA.name}/pass@1`]!;
    if (d.temperature !== 0) continue;
    const byId = new Map(examples.map((e) => [e.id, e.gold as SimaGold]));
    for (const g of r.groups)
      for (const ro of g.rollouts) {
        const c = byId.get(ro.exampleId)!.composition;
        const row = (byComposition[c] ??= { ok: 0, n: 0 });
        row.n++;
        row.ok += ro.terms["success"] === 1 ? 1 : 0;
        turns += ro.episode?.turns ?? 0;
        errors += ro.episode?.errors.length ?? 0;
      }
  }
  const n = Object.values(byComposition).reduce((a, r) => a + r.n, 0);
  const arithTask = getTask(ARITHMETIC.name, ARITHMETIC.options);
  const arithExamples = heldOutExamples(arithTask, job.split, job.sizes.evalExamples);
  const a = await evaluate(model, tokenizer, arithTask, arithExamples, {
    maxNewTokens: ARITHMETIC.maxTokens,
    seed: job.seed,
    temperature: 0,
    k: [1],
  });
  return {
    pass,
    byComposition,
    arithmetic: a.metrics[`eval/${ARITHMETIC.name}/pass@1`]!,
    turnsMean: turns / Math.max(1, n),
    errorsMean: errors / Math.max(1, n),
  };
}

/**
 * The seed's start in `<job.startDir>/model`, made once: a fresh `model` (the bench's MODEL unless a probe widens it)
 * trained by SFT on the mix. Returns the model folder.
 */
export function makeStart(job: SimaJob, model: typeof MODEL = MODEL): Promise<string> {
  return cachedStart(job.startDir, async () => {
    const policy = buildModel(model, job.seed);
    const rng = new Rng(job.seed).split("sft");
    const opts = { steps: job.sizes.sftSteps, batchSize: 16, lr: 1e-3, rng };
    await sft(policy.model, policy.tokenizer, sftMix(job.seed, job.sizes.mix), opts);
    return policy;
  });
}

async function runJob(job: SimaJob): Promise<SimaResult> {
  const t0 = performance.now();
  const seconds = () => (performance.now() - t0) / 1000;
  if (job.kind === "sft") {
    const modelDir = await makeStart(job);
    const trainSeconds = seconds();
    return { ...job, eval: await evaluateModel(modelDir, job), trainSeconds };
  }
  const config = armRecipe({ ...job, task: SIMA, sizes: job.sizes, maxTokens: MAX_TOKENS });
  // a killed arm resumes from its newest checkpoint under BENCH_SIMA_REUSE=1 (the runner's reuse)
  const checkpoint = await trainArm(config, job.kind === "control", { resume: process.env.BENCH_SIMA_REUSE === "1" });
  const trainSeconds = seconds();
  return { ...job, eval: await evaluateModel(checkpoint, job), trainSeconds };
}

await jobEntry(import.meta.url, runJob);
