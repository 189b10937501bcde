/** `rlvr sample <checkpoint>`: prints completions for a prompt, or for a task's held-out prompts with their rewards. */
import type { Command } from "commander";
import { withErrors } from "./train.js";
import { ConfigError, Rng } from "../../util/index.js";
import { readImage, type RgbImage } from "../../util/image.js";
import type { Transformer } from "../../models/transformer.js";
import { IMAGE_MARKER, VisionLanguageModel, countImageMarkers } from "../../models/vision-lm.js";
import type { Example } from "../../tasks/types.js";
import { noGrad } from "../../engine/index.js";
import { loadModel } from "../../models/checkpoint.js";
import { sample } from "../../sampling/sample.js";
import { getTask } from "../../tasks/index.js";
import { promptIds } from "../../rollout/groups.js";
import { resolveModelDir } from "./eval.js";

/** Registers `sample`. */
export function register(program: Command): void {
  program
    .command("sample")
    .description("sample completions from a checkpoint for --prompt, or for a task's held-out prompts (with rewards)")
    .argument("<path>", "run folder or checkpoint/model folder")
    .option("--prompt <text>", "prompt text")
    .option(
      "--image <file>",
      "a PNG or JPEG for --prompt, at its next <image> (prepended when the prompt has too few); repeatable; a vision-language checkpoint",
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    )
    .option("--task <name>", "sample for this task's held-out prompts and score them")
    .option("--count <n>", "task prompts", (v) => Number(v), 4)
    .option("-n <n>", "completions per prompt", (v) => Number(v), 1)
    .option("--temperature <t>", "sampling temperature (0 = greedy)", (v) => Number(v), 1)
    .option(
      "--max-new-tokens <n>",
      "completion budget (default: the run's, else the task's, else 64; capped by the model's context)",
      (v) => Number(v),
    )
    .option("--seed <n>", "sampling seed", (v) => Number(v), 0)
    .option("--allow-non-finite", "load a checkpoint even if it has NaN/Inf weights")
    .action(
      withErrors(
        async (
          path: string,
          o: {
            prompt?: string;
            image: string[];
            task?: string;
            count: number;
            n: number;
            temperature: number;
            maxNewTokens?: number;
            seed: number;
            allowNonFinite?: boolean;
          },
        ) => {
          const { dir, config } = resolveModelDir(path);
          const { model, tokenizer } = loadModel(dir, { allowNonFinite: o.allowNonFinite === true });
          const taskName = o.task ?? (o.prompt ? undefined : config?.task.name);
          const optionsOf = (name: string) => (config && name === config.task.name ? config.task.options : {});
          const task = taskName ? getTask(taskName, optionsOf(taskName)) : null;
          const stop = task?.stop ?? (config ? getTask(config.task.name, config.task.options).stop : undefined);
          const examples: Example[] = task
            ? task.generate("test", o.count, config?.task.seed ?? 0)
            : [{ id: "prompt", gold: null, goldCompletion: "", ...promptWithImages(o.prompt ?? "", o.image, model) }];
          const rows = examples.flatMap((e) => Array.from({ length: o.n }, () => promptIds(tokenizer, e.prompt)));
          const images = examples.some((e) => e.images)
            ? { images: examples.flatMap((e) => Array.from({ length: o.n }, () => e.images)) }
            : {};
          const room = model.config.maxSeqLen - Math.max(...rows.map((r) => r.length));
          const maxNewTokens = Math.min(
            o.maxNewTokens ?? config?.train.maxCompletionTokens ?? task?.maxNewTokens ?? 64,
            room,
          );
          const out = noGrad(() =>
            sample(model, tokenizer, rows, {
              maxNewTokens,
              temperature: o.temperature,
              ...(stop ? { stop } : {}),
              ...images,
              rng: new Rng(o.seed),
            }),
          );
          for (let q = 0; q < examples.length; q++) {
            const e = examples[q]!;
            console.log(`--- ${e.id}: ${JSON.stringify(e.prompt)}`);
            for (let i = 0; i < o.n; i++) {
              const s = out[q * o.n + i]!;
              const score = task
                ? await task
                    .score(e as never, s.text, s.tokens)
                    .catch((err: Error) => ({ score: null, terms: { error: err.message } }))
                : null;
              console.log(
                `${JSON.stringify(s.text)} [${s.finishReason}, ${s.tokens.length} tokens]${score ? ` reward ${score.score} ${JSON.stringify(score.terms)}` : ""}`,
              );
            }
          }
        },
      ),
    );
}

/** The --prompt text and its --image files: one `<image>` per file (prepended where the text has too few). */
function promptWithImages(
  prompt: string,
  files: string[],
  model: Transformer,
): { prompt: string; images?: RgbImage[] } {
  if (files.length === 0) return { prompt };
  if (!(model instanceof VisionLanguageModel))
    throw new ConfigError("--image: this checkpoint is a text-only model; sample images with a vision-language one");
  const missing = files.length - countImageMarkers(prompt);
  if (missing < 0)
    throw new ConfigError(`--prompt has ${countImageMarkers(prompt)} ${IMAGE_MARKER} but only ${files.length} --image`);
  return { prompt: `${IMAGE_MARKER}\n`.repeat(missing) + prompt, images: files.map(readImage) };
}
