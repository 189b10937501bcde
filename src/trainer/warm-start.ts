/**
 * SFT warm start (optional, `sft.enabled`): supervised training on the task's gold completions before RL, using
 * the models layer's SFT trainer (src/trainer/sft.ts). The run's RL start model is saved after it.
 */
import { Rng } from "../util/index.js";
import type { Example } from "../tasks/types.js";
import type { TrainConfig } from "./config.js";
import type { ModelAndTokenizer } from "./model-setup.js";

/** Fine-tunes `policy` in place on (prompt, gold completion) pairs of the train split. */
export async function sftWarmStart(
  policy: ModelAndTokenizer,
  trainSet: readonly Example[],
  config: TrainConfig,
): Promise<void> {
  const pairs = trainSet.map((e) => ({ prompt: e.prompt, completion: e.goldCompletion }));
  const { sft } = await import("./sft.js"); // loaded only when a warm start is configured
  await sft(policy.model, policy.tokenizer, pairs, {
    steps: config.sft.steps,
    batchSize: config.sft.batchSize,
    lr: config.sft.lr,
    rng: new Rng(config.seed).split("sft"),
  });
}
