/**
 * The training config: one zod schema per component, composed into `TrainConfig`. The `algorithm` section is
 * src/algorithms/schema.ts (that layer owns each algorithm option once); the rest is defined here, each field with
 * its default and a `.describe()` (the CLI help and docs/training.md come from these). Choices that carry their
 * own fields are `discriminatedUnion("type", ...)`.
 * Objects are strict: an unknown field is an error naming it, so a typo never silently falls back to a default.
 *
 * Cross-field rules (spec §2.2, §2.1, §8.1, §1.7) live in `checkConfig` below, each error naming its field.
 */
import { z } from "zod";
import {
  AdvantageSchema,
  AlgorithmSchema,
  ClipSchema,
  KlSchema,
  LossSchema,
  NullsSchema,
  OverlongSchema,
  PolicySchema,
  ReplaySchema,
  ZeroStdSchema,
} from "../algorithms/schema.js";
import { PRESETS } from "../algorithms/presets.js";
import { VisionConfigSchema } from "../models/vision-config.js";
import { lossOptionsOf } from "../algorithms/build.js";
import { lossOptionWarnings } from "../algorithms/loss-options.js";
import { resolveOldLogprobs } from "../algorithms/off-policy.js";
import { OpenAiSamplerSchema } from "../sampling/remote/options.js";

// ---------------------------------------------------------------------------------------------- model and data

/** Where the policy's weights come from. */
export const ModelSchema = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("checkpoint"),
    path: z.string().min(1).describe("directory written by saveModel (or a local Hugging Face Llama/Qwen2 directory)"),
  }),
  z.strictObject({
    type: z.literal("new"),
    arch: z
      .enum(["gpt2", "llama"])
      .default("gpt2")
      .describe("gpt2: learned positions, LayerNorm, GELU; llama: RoPE, RMSNorm, SwiGLU"),
    dModel: z.number().int().positive().default(128).describe("hidden width"),
    nLayers: z.number().int().positive().default(4).describe("transformer blocks"),
    nHeads: z.number().int().positive().default(4).describe("attention heads"),
    nKvHeads: z.number().int().positive().optional().describe("key/value heads (GQA); default nHeads"),
    dFf: z.number().int().positive().optional().describe("MLP width; default 4·dModel"),
    maxSeqLen: z.number().int().positive().default(128).describe("longest prompt + completion"),
    tokenizer: z
      .union([
        z.literal("char"),
        z.strictObject({
          file: z.string().min(1).describe("a Hugging Face tokenizer.json (tokenizer_config.json beside it names eos)"),
        }),
      ])
      .default("char")
      .describe('"char" (the built-in character tokenizer) or { file }: a tokenizer.json, e.g. a BPE made for a task'),
    vision: VisionConfigSchema.optional().describe("a vision encoder (vision-language policy; docs/vision.md)"),
  }),
]);

/** The task to train and evaluate on (a name in the task registry). */
export const TaskSchema = z.strictObject({
  name: z.string().min(1).describe("task registry name (see `rlvr tasks`)"),
  options: z
    .record(z.string(), z.unknown())
    .default({})
    .describe("the task's difficulty options (validated by the task's schema)"),
  trainExamples: z.number().int().positive().default(5000).describe("size of the generated train split"),
  testExamples: z.number().int().positive().default(200).describe("size of the generated held-out split"),
  seed: z.number().int().nonnegative().default(0).describe("seed of the task generator (independent of the run seed)"),
});

/** How completions are drawn during training rollouts. */
export const SamplerSchema = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("builtin"),
    temperature: z.number().positive().default(1).describe("T; every log-prob is log_softmax(logits / T) (spec §0)"),
    topK: z
      .number()
      .int()
      .nonnegative()
      .default(0)
      .describe("0 = off; > 0 makes sampled and trained distributions differ (warning)"),
    topP: z
      .number()
      .gt(0)
      .lte(1)
      .default(1)
      .describe("1 = off; < 1 makes sampled and trained distributions differ (warning)"),
    diffusion: z
      .strictObject({
        steps: z
          .number()
          .int()
          .positive()
          .optional()
          .describe("denoising steps over the answer; a multiple of the blocks (default one per token)"),
        blockLength: z
          .number()
          .int()
          .positive()
          .optional()
          .describe("semi-autoregressive block length; divides train.maxCompletionTokens (default one block)"),
        remasking: z
          .enum(["lowConfidence", "random"])
          .optional()
          .describe("which proposals stay masked: the least confident (LLaDA's default) or a random choice"),
      })
      .optional()
      .describe("the masked-diffusion sampler's knobs (algorithm.diffusion policies only; docs/diffusion.md)"),
  }),
  OpenAiSamplerSchema, // generation on an OpenAI-compatible server (docs/remote-sampler.md)
]);

// ------------------------------------------------------------------------------------------ algorithm (spec §1-8)

// The algorithm section is owned by src/algorithms (schema, defaults, presets and the functions that apply them).
export {
  AdvantageSchema,
  ClipSchema,
  PolicySchema,
  KlSchema,
  LossSchema,
  ZeroStdSchema,
  NullsSchema,
  OverlongSchema,
  ReplaySchema,
  AlgorithmSchema,
};

// ------------------------------------------------------------------------------------------ optimisation and loop

/** Optimizer. */
export const OptimizerSchema = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("adamw"),
    betas: z
      .tuple([z.number().min(0).lt(1), z.number().min(0).lt(1)])
      .default([0.9, 0.999])
      .describe("Adam β1, β2"),
    eps: z.number().positive().default(1e-8).describe("Adam ε"),
    weightDecay: z.number().nonnegative().default(0).describe("decoupled weight decay"),
  }),
  z.strictObject({ type: z.literal("sgd"), momentum: z.number().min(0).lt(1).default(0).describe("momentum") }),
]);

/** Learning-rate schedule over RL steps. */
export const ScheduleSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("constant") }),
  z.strictObject({ type: z.literal("linearWarmup"), warmupSteps: z.number().int().nonnegative().default(0) }),
  z.strictObject({
    type: z.literal("cosine"),
    warmupSteps: z.number().int().nonnegative().default(0),
    minLrFrac: z.number().min(0).max(1).default(0.1).describe("floor as a fraction of lr"),
  }),
]);

/** The RL loop's sizes and optimizer. */
export const TrainSchema = z.strictObject({
  steps: z.number().int().positive().default(100).describe("RL steps (rollout batches)"),
  promptsPerStep: z.number().int().positive().default(8).describe("Q: prompts per step"),
  groupSize: z.number().int().positive().default(8).describe("G: completions per prompt (TRL num_generations)"),
  maxCompletionTokens: z.number().int().positive().default(64).describe("L_max: token budget of a completion"),
  innerIterations: z.number().int().positive().default(1).describe("μ: passes over each rollout batch (§5)"),
  miniBatches: z.number().int().positive().default(1).describe("M: optimizer steps per pass (§5)"),
  microBatchSize: z
    .number()
    .int()
    .positive()
    .default(16)
    .describe("sequences per forward/backward; gradients accumulate"),
  lr: z.number().positive().default(1e-4).describe("peak learning rate"),
  maxGradNorm: z.number().positive().nullable().default(1).describe("global gradient-norm clip; null = off"),
  optimizer: OptimizerSchema.prefault({ type: "adamw" }),
  schedule: ScheduleSchema.prefault({ type: "constant" }),
});

/** Optional SFT warm start on the task's gold completions, before RL. */
export const SftSchema = z.strictObject({
  enabled: z.boolean().default(false).describe("run SFT on gold completions before RL"),
  steps: z.number().int().positive().default(200).describe("SFT optimizer steps"),
  batchSize: z.number().int().positive().default(32).describe("examples per SFT step"),
  lr: z.number().positive().default(1e-3).describe("SFT learning rate"),
  taskOptions: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      "task options overriding task.options for the SFT examples only (e.g. sima's kinds: an SFT start on a subset)",
    ),
});

/**
 * LoRA (Hu et al. 2021): the SFT warm start and RL each train a low-rank adapter on frozen weights. SFT's adapter is
 * merged into the start model (checkpoints/start); RL trains a fresh one on it, saved in each checkpoint's adapter/.
 */
export const LoraSchema = z
  .strictObject({
    rank: z.number().int().positive().default(8).describe("r: rank of each adapter"),
    alpha: z.number().positive().optional().describe("scale numerator: updates are scaled by alpha / r (default r)"),
    dropout: z.number().min(0).lt(1).default(0).describe("dropout on the adapters' input"),
    targets: z
      .array(z.string().min(1))
      .nonempty()
      .default(["qProj", "vProj"])
      .describe("Linear layers that get adapters, by last name (qProj, kProj, vProj, oProj, gateProj, upProj, ...)"),
  })
  .nullable()
  .default(null);

/** Held-out evaluation (spec §9, "Evaluation"). */
export const EvalSchema = z.strictObject({
  every: z.number().int().nonnegative().default(10).describe("evaluate every N steps (0 = only at start and end)"),
  examples: z.number().int().positive().default(100).describe("held-out questions per evaluation"),
  temperature: z.number().nonnegative().default(0).describe("0 = greedy (n = 1, pass@1 only)"),
  k: z
    .array(z.number().int().positive())
    .nonempty()
    .default([1])
    .describe("pass@k values; n = max k samples per question"),
  atStart: z.boolean().default(true).describe("evaluate the start model before step 1"),
});

/** Checkpointing (spec: DESIGN "Runs on disk"). */
export const CheckpointSchema = z.strictObject({
  every: z
    .number()
    .int()
    .nonnegative()
    .default(50)
    .describe("write checkpoints/step-N every N steps (0 = only at the end)"),
  keepLast: z.number().int().positive().default(2).describe("complete step checkpoints kept on disk"),
  keepBest: z.boolean().default(true).describe("keep checkpoints/best: the weights with the best held-out pass@1"),
});

/** Logging. */
export const LogSchema = z.strictObject({
  sampleGroups: z.number().int().nonnegative().default(2).describe("groups per step written to samples.jsonl"),
  progress: z.boolean().default(true).describe("console progress bar"),
});

/** A whole recipe after validation and defaults. */
export const TrainConfigSchema = z.strictObject({
  name: z
    .string()
    .regex(/^[A-Za-z0-9._-]+$/, "letters, digits, '.', '_' or '-'")
    .default("run")
    .describe("run name: runs/<name>/"),
  outDir: z.string().default("runs").describe("parent folder of run folders"),
  seed: z.number().int().nonnegative().default(0).describe("run seed: sampling, shuffles, init"),
  preset: z
    .enum(Object.keys(PRESETS) as [keyof typeof PRESETS, ...(keyof typeof PRESETS)[]])
    .optional()
    .describe("algorithm preset applied under the recipe's own fields (spec §10)"),
  model: ModelSchema,
  reference: z.string().nullable().default(null).describe("reference checkpoint for KL; null = the start model"),
  task: TaskSchema,
  sampler: SamplerSchema.prefault({ type: "builtin" }),
  algorithm: AlgorithmSchema.prefault({}),
  train: TrainSchema.prefault({}),
  sft: SftSchema.prefault({}),
  lora: LoraSchema.describe("train LoRA adapters instead of every weight; null = full fine-tuning"),
  eval: EvalSchema.prefault({}),
  checkpoint: CheckpointSchema.prefault({}),
  log: LogSchema.prefault({}),
});

/** A validated recipe with every default filled in. */
export type TrainConfig = z.infer<typeof TrainConfigSchema>;
/** The algorithm section of a recipe. */
export type { AlgorithmConfig } from "../algorithms/schema.js";
/** The part a recipe file may give (defaults missing). */
export type TrainConfigInput = z.input<typeof TrainConfigSchema>;

/** One cross-field problem: the field and what is wrong. */
export interface ConfigProblem {
  path: string;
  message: string;
}

const GROUP_ESTIMATORS = new Set(["zScore", "meanOnly", "rloo"]);

/** Cross-field rules of the spec; returns the problems found (empty when the config is consistent). */
export function checkConfig(c: TrainConfig): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const a = c.algorithm;
  const offPolicy = c.train.innerIterations > 1 || c.train.miniBatches > 1;
  if (a.policy.clip.type === "none" && offPolicy && a.diffusion.type !== "wd1") {
    // wd1 has no ratio, so μ > 1 without a clip is fine (exempt by §7)
    out.push({
      path: "algorithm.policy.clip",
      message:
        'clip "none" is only allowed on-policy (innerIterations = miniBatches = 1); use { type: "ppo" } ' + "(§2.2)",
    });
  }
  if (a.replay.type !== "none") out.push(...replayProblems(c));
  out.push(...offPolicyProblems(c));
  out.push(...diffusionSamplerProblems(c));
  const clip = a.policy.clip;
  if (clip.type === "ppo" && clip.dualClip !== null && !(clip.dualClip > 1 + clip.epsHigh)) {
    out.push({ path: "algorithm.policy.clip.dualClip", message: `must be > 1 + epsHigh = ${1 + clip.epsHigh} (§2.2)` });
  }
  if (a.rewardAggregate === "normalizeThenSum" && a.advantage.type !== "zScore") {
    out.push({
      path: "algorithm.rewardAggregate",
      message: '"normalizeThenSum" requires advantage.type "zScore" (§8.1)',
    });
  }
  if (a.zeroStd.policy !== "keep" && !GROUP_ESTIMATORS.has(a.advantage.type)) {
    out.push({
      path: "algorithm.zeroStd.policy",
      message: `"${a.zeroStd.policy}" applies to group estimators only (zScore, meanOnly, rloo) (§1.7)`,
    });
  }
  if (c.train.groupSize < 2 && GROUP_ESTIMATORS.has(a.advantage.type)) {
    out.push({
      path: "train.groupSize",
      message: `group estimator "${a.advantage.type}" needs groupSize ≥ 2 (G = 1 gives every advantage 0)`,
    });
  }
  if (c.train.miniBatches > c.train.promptsPerStep * c.train.groupSize) {
    out.push({ path: "train.miniBatches", message: "more mini-batches than sequences in a step" });
  }
  if (c.model.type === "new" && c.model.dModel % c.model.nHeads !== 0) {
    out.push({
      path: "model.nHeads",
      message: `dModel ${c.model.dModel} is not divisible by nHeads ${c.model.nHeads}`,
    });
  }
  if (a.rewardAggregate === "normalizeThenSum" && a.kl.placement === "reward" && a.kl.beta > 0 && !a.kl.monitorOnly) {
    out.push({
      path: "algorithm.rewardAggregate",
      message:
        '"normalizeThenSum" z-scores each reward term; KL in the reward has no term to join: ' +
        'use kl.placement "loss"',
    });
  }
  return out;
}

/**
 * Rules of experience replay (§5, §6): fresh tokens need a clip (§2.2), and a replayed answer needs the behaviour
 * log-probs its sampler recorded, which a masked-diffusion policy's sampler does not have (they are estimated).
 */
function replayProblems(c: TrainConfig): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  if (c.algorithm.policy.clip.type === "none") {
    out.push({
      path: "algorithm.policy.clip",
      message: 'clip "none" with algorithm.replay: replayed batches are off-policy; use { type: "ppo" } (§2.2, §6.8)',
    });
  }
  if (c.algorithm.diffusion.type !== "none") {
    out.push({
      path: "algorithm.replay",
      message:
        "replayed answers need the behaviour log-probs recorded when they were sampled, and a masked-diffusion " +
        'sampler records none (§5, §7): use replay { type: "none" } with algorithm.diffusion',
    });
  }
  return out;
}

/**
 * Rules of the off-policy section and the remote sampler (§5, §2.2): an unclipped ratio must not carry a remote
 * sampler's log-probs or a stale batch; asynchronous generation needs a remote sampler; a remote sampler samples
 * autoregressive policies only.
 */
function offPolicyProblems(c: TrainConfig): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const o = c.algorithm.offPolicy;
  const remote = c.sampler.type === "openai";
  if (c.algorithm.policy.clip.type === "none" && c.algorithm.diffusion.type === "none") {
    if (remote && resolveOldLogprobs(o, remote) === "sampler") {
      out.push({
        path: "algorithm.policy.clip",
        message:
          'clip "none" with offPolicy.oldLogprobs "sampler" and a remote sampler: the ratio carries the ' +
          'sampler/trainer mismatch unbounded; use { type: "ppo" } (§2.2, §5)',
      });
    }
    if (o.maxStaleness > 0) {
      out.push({
        path: "algorithm.policy.clip",
        message:
          'clip "none" with offPolicy.maxStaleness > 0: stale batches are off-policy; use { type: "ppo" } (§2.2)',
      });
    }
  }
  if (o.maxStaleness > 0 && !remote) {
    out.push({
      path: "algorithm.offPolicy.maxStaleness",
      message: 'asynchronous generation needs a remote sampler (sampler.type "openai"); use 0 with the built-in one',
    });
  }
  if (remote && c.algorithm.diffusion.type !== "none") {
    out.push({
      path: "sampler.type",
      message: 'a remote sampler samples autoregressive models; a masked-diffusion policy needs sampler.type "builtin"',
    });
  }
  return out;
}

/** The diffusion sampler's knobs must fit the answer region (one block length dividing it, steps per block). */
export function diffusionSamplerProblems(c: TrainConfig): ConfigProblem[] {
  const d = c.sampler.type === "builtin" ? c.sampler.diffusion : undefined;
  if (!d) return [];
  if (c.algorithm.diffusion.type === "none")
    return [
      {
        path: "sampler.diffusion",
        message: 'applies to a masked-diffusion policy only; set algorithm.diffusion.type ("wd1" or "diffuGrpo")',
      },
    ];
  const gen = c.train.maxCompletionTokens;
  const block = d.blockLength ?? gen;
  if (gen % block !== 0)
    return [
      {
        path: "sampler.diffusion.blockLength",
        message: `${block} does not divide train.maxCompletionTokens ${gen} (the answer region)`,
      },
    ];
  const blocks = gen / block;
  if (d.steps !== undefined && d.steps % blocks !== 0)
    return [
      {
        path: "sampler.diffusion.steps",
        message: `${d.steps} is not a multiple of the ${blocks} blocks (maxCompletionTokens ${gen} / blockLength ${block})`,
      },
    ];
  return [];
}

/** Warnings the spec asks for (config is valid but probably not what was meant). */
export function configWarnings(c: TrainConfig): string[] {
  const w: string[] = [];
  const kl = c.algorithm.kl;
  const klFieldsSet =
    kl.estimator !== "k3" || kl.placement !== "loss" || kl.sections !== null || kl.controller !== "fixed";
  if (kl.beta === 0 && !kl.monitorOnly && klFieldsSet) {
    w.push("algorithm.kl: KL fields are set but beta = 0, so no reference model is used");
  }
  if (kl.monitorOnly && kl.controller === "adaptive") {
    w.push("algorithm.kl: monitorOnly puts no KL in the loss or reward, so an adaptive β acts on nothing");
  }
  if (kl.beta > 0 && kl.placement === "loss" && kl.estimator === "k1") {
    w.push('algorithm.kl.estimator: k1 in the loss has zero expected gradient (§2.3); it suits placement "reward"');
  }
  for (const msg of lossOptionWarnings(lossOptionsOf(c.algorithm, c.train.maxCompletionTokens))) {
    w.push(`algorithm.policy.ratio: ${msg}`);
  }
  if (c.sampler.topK > 0 || c.sampler.topP < 1) {
    w.push("sampler: topK/topP make the sampled distribution differ from the trained one (§5)");
  }
  return w;
}
