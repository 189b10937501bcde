/**
 * SFT warm start (optional, `sft.enabled`): supervised training on the task's gold completions before RL, using
 * the models layer's SFT trainer (src/trainer/sft.ts). The run's RL start model is saved after it.
 *
 * With `lora` set (RobotxR1's recipe: SFT then GRPO, both on LoRA adapters), SFT trains an adapter that is merged
 * into the start model when it ends, and RL puts a fresh adapter on that start (`addRlAdapters`), so the start is
 * the RL adapter's base and its KL reference, and every checkpoint's adapter/ folder names that base by hash.
 */
import { Rng } from "../util/index.js";
import { applyLoRA, mergeLoRA } from "../engine/index.js";
import type { Transformer } from "../models/transformer.js";
import { getTask } from "../tasks/index.js";
import type { Example } from "../tasks/types.js";
import type { TrainConfig } from "./config.js";
import type { ModelAndTokenizer } from "./model-setup.js";

/** Fine-tunes `policy` in place on (prompt, gold completion) pairs of the train split (on an adapter with `lora`). */
export async function sftWarmStart(
  policy: ModelAndTokenizer,
  trainSet: readonly Example[],
  config: TrainConfig,
): Promise<void> {
  const { sft, sftExampleOf } = await import("./sft.js"); // loaded only when a warm start is configured
  const pairs = trainSet.map(sftExampleOf); // a multi-turn gold keeps its segments: tool output is masked
  if (config.lora) applyLoRA(policy.model, loraOptions(config, "sft"));
  await sft(policy.model, policy.tokenizer, pairs, {
    steps: config.sft.steps,
    batchSize: config.sft.batchSize,
    lr: config.sft.lr,
    rng: new Rng(config.seed).split("sft"),
  });
  if (config.lora) unfreezeAfterMerge(policy.model);
}

/**
 * The SFT warm start's examples: the RL train set, or (with `sft.taskOptions`) the train split of the same task
 * built with those options over `task.options`, at the same count and seed.
 */
export function sftSetOf(config: TrainConfig, trainSet: readonly Example[]): readonly Example[] {
  const o = config.sft.taskOptions;
  if (!o) return trainSet;
  return getTask(config.task.name, { ...(config.task.options as object), ...o }).generate(
    "train",
    config.task.trainExamples,
    config.task.seed,
  );
}

/** Puts RL's fresh LoRA adapters on the start model (when `lora` is set); returns the wrapped paths. */
export function addRlAdapters(model: Transformer, config: TrainConfig): string[] {
  return config.lora ? applyLoRA(model, loraOptions(config, "rl")) : [];
}

/** The `applyLoRA` options of a stage; each stage draws A's init from its own stream of the run seed. */
export function loraOptions(config: TrainConfig, stage: "sft" | "rl") {
  const l = config.lora!;
  return {
    rank: l.rank,
    alpha: l.alpha ?? l.rank,
    dropout: l.dropout,
    targets: l.targets,
    rng: new Rng(config.seed).split(`lora-${stage}`),
  };
}

/** Merges the SFT adapter into the weights and makes every weight trainable again (as a plain start model is). */
function unfreezeAfterMerge(model: Transformer): void {
  mergeLoRA(model);
  model.unfreeze();
}
