/**
 * `rlvr sample <checkpoint>`: prints completions for a prompt, or for a task's held-out prompts with their rewards.
 * Sampling and scoring are training's own (`sampleGroupsFor`, `scoreGroups`): a task with an environment (SAKE's
 * kg-tools) runs the episode loop, its tool calls executed and their output inserted, and each completion is printed
 * as its segments (model turns and inserted text) with the episode's turns, truncation and errors. `--prompt` text
 * is one model turn (an environment starts from a task's example).
 */
import type { Command } from "commander";
import { withErrors } from "./train.js";
import { ConfigError, Rng } from "../../util/index.js";
import { readImage, type RgbImage } from "../../util/image.js";
import type { Transformer } from "../../models/transformer.js";
import { IMAGE_MARKER, VisionLanguageModel, countImageMarkers } from "../../models/vision-lm.js";
import type { Example } from "../../tasks/types.js";
import { loadModel } from "../../models/checkpoint.js";
import { getTask } from "../../tasks/index.js";
import { promptIds, scoreGroups } from "../../rollout/groups.js";
import type { Rollout } from "../../rollout/types.js";
import { sampleGroupsFor } from "../../trainer/diffusion-step.js";
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
    .option("--task <name>", "sample for this task's held-out prompts and score them (tools run, as in training)")
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
          const room = model.config.maxSeqLen - Math.max(...examples.map((e) => promptIds(tokenizer, e.prompt).length));
          const maxNewTokens = Math.min(
            o.maxNewTokens ?? config?.train.maxCompletionTokens ?? task?.maxNewTokens ?? 64,
            room,
          );
          // The episode loop of training: a task's environment answers its tool calls; --prompt is one turn.
          const groups = await sampleGroupsFor(model, tokenizer, task ?? { name: "prompt" }, examples, {
            groupSize: o.n,
            maxNewTokens,
            temperature: o.temperature,
            ...(stop ? { stop } : {}),
            rng: new Rng(o.seed),
            policyVersion: -1,
            idPrefix: "sample",
          });
          if (task) await scoreGroups(task, new Map(examples.map((e) => [e.id, e])), groups);
          groups.forEach((g, q) => {
            console.log(`--- ${examples[q]!.id}: ${JSON.stringify(g.prompt)}`);
            for (const r of g.rollouts) printRollout(r, task !== null);
          });
        },
      ),
    );
}

/** One completion: text (single turn) or segments (an episode), finish, length, turns, errors and reward. */
function printRollout(r: Rollout, scored: boolean): void {
  const ep = r.episode;
  const multi = ep?.env !== undefined;
  const facts = [r.finishReason, `${r.completionIds.length} tokens`];
  if (multi)
    facts.push(
      `${ep!.turns} turn${ep!.turns === 1 ? "" : "s"}`,
      ...(ep!.truncated ? [`truncated: ${ep!.truncated}`] : []),
    );
  if (multi && ep!.errors.length) facts.push(`errors: ${JSON.stringify(ep!.errors)}`);
  const error = r.rewardInfo?.error;
  const terms = error !== undefined ? { ...r.terms, error } : r.terms;
  const reward = scored ? ` reward ${r.reward} ${JSON.stringify(terms)}` : "";
  console.log(`${multi ? "" : `${JSON.stringify(r.text)} `}[${facts.join(", ")}]${reward}`);
  if (!multi) return;
  for (const s of r.segments ?? [])
    console.log(`  ${s.kind === "model" ? "model   " : "inserted"} ${JSON.stringify(s.text)}`);
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
