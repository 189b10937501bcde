/**
 * One job of the CUDA-L2 seed bench (bench/seeds/cudal2.ts), run in its own one-thread process:
 *
 * - `sft`: trains the start of a seed on the taught-kernel mixture (cudal2-kernels.ts), saves and evaluates it;
 * - `rl`: recipes/cuda-l2.yaml from that start, collecting every rewarded training kernel for the audit, then
 *   evaluates the final policy and reruns each rewarded kernel with fresh inputs (the audit);
 * - `control`: the same run with the verifier's outputs permuted inside each group, then evaluates.
 *
 * Evaluation: held-out shapes (the `final` half unless BENCH_SPLIT=tune), sampled at each decoding of
 * `ENDPOINT_DECODINGS`; each completion's kernel is timed by the task's own reward (kernel-speed, same profile as
 * training) and scored `speedupOf` (measured S when every gate passes, 0 when one fails).
 * Usage: `tsx bench/seeds/lib/cudal2-job.ts '<Cudal2Job as JSON>'`.
 */
import { randomInt } from "node:crypto";
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
import { trainSft } from "../../../src/trainer/sft.js";
import { sampleGroups } from "../../../src/rollout/groups.js";
import { scoreKernel, type KernelGold } from "../../../src/rewards/kernel/reward.js";
import type { RolloutGroup } from "../../../src/rollout/types.js";
import { kernelCompletion, mixtureKernel } from "./cudal2-kernels.js";
import { auditCount, kernelMix, meanOf, rewardedKernels, speedupOf, type KernelSample } from "./cudal2-metrics.js";
import { CUDAL2, type Cudal2Job, type Cudal2Result } from "./cudal2-settings.js";

const ROOT = resolve(import.meta.dirname, "..", "..", "..");
const RECIPE = join(ROOT, "recipes", "cuda-l2.yaml");

/** The recipe of the RL and control arms: recipes/cuda-l2.yaml from the start, at the bench's size. */
export function armRecipe(spec: Cudal2Job, start: string) {
  const s = CUDAL2(spec.smoke);
  return loadRecipe(RECIPE, {
    name: spec.kind,
    outDir: spec.dir,
    seed: spec.seed,
    model: { type: "checkpoint", path: start },
    sft: { enabled: false },
    task: { trainExamples: s.rl.shapes },
    train: { steps: s.rl.steps, promptsPerStep: s.rl.promptsPerStep, groupSize: s.rl.groupSize },
    eval: { every: 0, atStart: false, examples: 1, temperature: 0, k: [1] },
    checkpoint: { every: 0, keepBest: false },
    log: { progress: false },
  });
}

/** Samples held-out kernels at every decoding and times each one with the task's reward. */
async function evaluateKernels(spec: Cudal2Job, modelDir: string) {
  const s = CUDAL2(spec.smoke);
  const config = armRecipe(spec, modelDir);
  const { model, tokenizer } = loadModel(modelDir);
  const task = getTask(config.task.name, config.task.options);
  const shapes = heldOutExamples(task, spec.split, s.evalShapes);
  const rewardOptions = { profile: (config.task.options as { profile: "test" | "train" | "paper" }).profile };
  const speedup: Record<string, number> = {};
  const correct: Record<string, number> = {};
  const mix: Record<string, Record<string, number>> = {};
  for (const d of ENDPOINT_DECODINGS) {
    const groups = await sampleGroups(model, tokenizer, task, shapes, {
      groupSize: d.temperature === 0 ? 1 : s.evalSamples,
      maxNewTokens: config.train.maxCompletionTokens,
      temperature: d.temperature,
      ...(task.stop ? { stop: task.stop } : {}),
      rng: new Rng(spec.seed).split(`eval-${d.label}`),
      policyVersion: -1,
      idPrefix: "eval",
    });
    const samples: KernelSample[] = [];
    for (const [q, g] of groups.entries()) {
      const gold = shapes[q]!.gold as KernelGold;
      for (const r of g.rollouts) {
        const res = await scoreKernel(r.text, gold, rewardOptions);
        samples.push({ text: r.text, correct: res.terms.correct ?? 0, speedup: res.terms.speedup ?? 0 });
      }
    }
    speedup[d.label] = meanOf(samples.map(speedupOf));
    correct[d.label] = meanOf(samples.map((x) => x.correct));
    mix[d.label] = kernelMix(samples.map((x) => x.text));
  }
  return { speedup, correct, mix };
}

/** Reruns each rewarded training kernel once with a fresh input seed: how many would a manual rerun reject? */
async function audit(spec: Cudal2Job, kernels: { text: string; gold: KernelGold }[]) {
  const config = armRecipe(spec, spec.start!);
  const profile = (config.task.options as { profile: "test" | "train" | "paper" }).profile;
  const reruns: { correct: number }[] = [];
  for (const k of kernels) {
    const r = await scoreKernel(k.text, k.gold, { profile, seed: randomInt(0, 2 ** 47) });
    reruns.push({ correct: r.terms.correct ?? 0 });
  }
  return auditCount(reruns);
}

async function runJob(spec: Cudal2Job): Promise<Cudal2Result> {
  const s = CUDAL2(spec.smoke);
  const t0 = Date.now();
  if (spec.kind === "sft") {
    const modelDir = join(spec.dir, "model");
    if (!existsSync(join(modelDir, "model.safetensors"))) {
      const config = armRecipe(spec, modelDir);
      const policy = buildModel({ ...s.model, type: "new" }, spec.seed);
      const task = getTask(config.task.name, config.task.options);
      const shapes = task.generate("train", s.sftShapes, 0);
      const pairs = Array.from({ length: s.sft.examples }, (_, i) => ({
        prompt: shapes[i % shapes.length]!.prompt,
        completion: kernelCompletion(mixtureKernel(i, s.sft.examples).source),
      }));
      trainSft(policy.model, policy.tokenizer, pairs, {
        steps: s.sft.steps,
        batchSize: s.sft.batchSize,
        lr: s.sft.lr,
        rng: new Rng(spec.seed).split("sft"),
        onStep: (m) => {
          if (m.step % 50 === 0)
            console.error(`cudal2 sft seed ${spec.seed} step ${m.step}: loss ${m.loss.toFixed(3)}`);
        },
      });
      saveModel(modelDir, policy.model, policy.tokenizer);
    }
    return { ...spec, ...(await evaluateKernels(spec, modelDir)), seconds: (Date.now() - t0) / 1000 };
  }
  const config = armRecipe(spec, spec.start!);
  const run = new RunDir(join(spec.dir, spec.kind));
  const rewarded: { text: string; gold: KernelGold }[] = [];
  const control = spec.kind === "control" ? withinGroupControl(spec.seed) : null;
  const examples = new Map(
    getTask(config.task.name, config.task.options)
      .generate("train", s.rl.shapes, 0)
      .map((e) => [e.id, e]),
  );
  const hook = (groups: RolloutGroup[], step: number) => {
    if (!control) rewarded.push(...rewardedKernels(groups, (id) => examples.get(id)?.gold as KernelGold));
    control?.(groups, step);
  };
  const t1 = performance.now();
  const res = await train(config, {
    resume: false,
    overwrite: true,
    reporters: [jsonlReporter(run)],
    transformGroups: hook,
  });
  const trainSeconds = (performance.now() - t1) / 1000;
  const trainReward = run.metrics().map((m) => m["reward/mean"] ?? NaN);
  const out = await evaluateKernels(spec, join(res.runDir, "checkpoints", `step-${res.step}`));
  const audited = control ? undefined : await audit(spec, rewarded);
  return {
    ...spec,
    ...out,
    trainReward,
    trainSeconds,
    ...(audited ? { audit: audited } : {}),
    seconds: (Date.now() - t0) / 1000,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const spec = JSON.parse(process.argv[2]!) as Cudal2Job;
  const result = await runJob(spec);
  writeFileSync(join(spec.dir, `${spec.kind}.json`), JSON.stringify(result));
  process.exit(0); // the reward pool's workers would keep the process alive
}
