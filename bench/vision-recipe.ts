/**
 * The recipe every arm of `npm run bench:vision` trains with (bench/vision.ts, bench/vision-video.ts): the `grpo`
 * preset (without KL unless the arm sets a weight), the built-in sampler at T 1, an optional SFT warm start first, no evaluation during training
 * and only the last checkpoint kept (the bench evaluates the saved models itself).
 */
import { resolveConfig } from "../src/trainer/recipe.js";

type Recipe = Parameters<typeof resolveConfig>[0];

/** One arm: its task, where it starts, its SFT stage and its RL sizes. */
export interface VisionArm {
  name: string;
  seed: number;
  outDir: string;
  /** A new model's settings, or `{ type: "checkpoint", path }`. */
  model: object;
  task: object;
  sft: { enabled: boolean; steps: number; batchSize: number };
  /** RL sizes; `lr` defaults to 2e-4, the KL weight `beta` (k3 in the loss, to the start) to 0. */
  rl: { steps: number; prompts: number; group: number; maxTokens: number; lr?: number; beta?: number };
}

/** The resolved config of one arm. */
export function visionRecipe(a: VisionArm) {
  return resolveConfig({
    name: a.name,
    seed: a.seed,
    outDir: a.outDir,
    preset: "grpo",
    model: a.model,
    task: a.task,
    sft: { ...a.sft, lr: 0.002 },
    train: {
      steps: a.rl.steps,
      promptsPerStep: a.rl.prompts,
      groupSize: a.rl.group,
      maxCompletionTokens: a.rl.maxTokens,
      lr: a.rl.lr ?? 0.0002,
    },
    sampler: { type: "builtin", temperature: 1 },
    algorithm: { kl: { beta: a.rl.beta ?? 0 } },
    eval: { every: 0, atStart: false, examples: 1 },
    checkpoint: { every: 0, keepLast: 1 },
    log: { progress: false },
  } as Recipe);
}
