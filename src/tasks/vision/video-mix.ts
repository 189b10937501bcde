/**
 * "video-mix": VideoChat-R1's joint training mix (arXiv 2504.06958 §3.3) as one task. Examples come from the named
 * video tasks in turn (temporal grounding, tracking and grounded QA by default), each scored by its own task's terms:
 * the mix reports one term per sub-task (its weighted reward, 0 on the other tasks' examples) and their shared
 * "correct" term, which decides pass@k. Each example carries its own task's stop strings (`Example.stop`): the task's
 * `stop`, the union, would end a grounded-QA answer at its `</answer>`, before the `<glue>` spans it is scored on
 * (the joint arm of bench:vision trained that way until 2026-12-07). Departures: the mix is round-robin, not the paper's data proportions; each
 * sub-task keeps its own split rule, so the mix's train and test splits are disjoint as theirs are.
 */
import { z } from "zod";
import { ConfigError } from "../../util/errors.js";
import type { TaskDefinition } from "../registry.js";
import type { Example, RewardTerm, Task } from "../types.js";
import { VIDEO_TASK_FACTORIES, videoOptions, type VideoGold } from "./video-tasks.js";

const NAMES = Object.keys(VIDEO_TASK_FACTORIES) as (keyof typeof VIDEO_TASK_FACTORIES)[];

const mixOptions = videoOptions.extend({
  tasks: z
    .array(z.enum(NAMES as [string, ...string[]]))
    .min(1)
    .default(["video-temporal", "video-tracking", "video-grounded-qa"])
    .describe("the video tasks mixed, in turn"),
});
type MixOptions = z.output<typeof mixOptions>;

/** Builds the mix for parsed options. */
function createMix(input: Partial<MixOptions> = {}): Task<VideoGold> {
  const o = mixOptions.parse(input);
  const { tasks: names, ...common } = o;
  const subs = new Map(
    names.map((n) => [n, VIDEO_TASK_FACTORIES[n as keyof typeof VIDEO_TASK_FACTORIES].create(common)]),
  );
  const terms: RewardTerm[] = names.map((n) => ({
    name: n.replace(/^video-/, ""),
    reward: subs.get(n)!.terms[0]!.reward,
    weight: 1,
  }));
  terms.push({ name: "correct", reward: "vision-correct", weight: 0 });
  return {
    name: "video-mix",
    description: `VideoChat-R1's joint mix of ${names.join(", ")}, in turn`,
    terms,
    correctTerm: "correct",
    stop: [...new Set([...subs.values()].flatMap((t) => t.stop ?? []))],
    maxNewTokens: Math.max(...[...subs.values()].map((t) => t.maxNewTokens ?? 64)),
    generate(split, count, seed) {
      const per = names.map((n, k) => subs.get(n)!.generate(split, Math.ceil((count - k) / names.length), seed));
      return Array.from({ length: count }, (_, i) => {
        const k = i % names.length;
        const e = per[k]![Math.floor(i / names.length)]!;
        // each example stops where its own task's answers end (grounded QA writes </answer> before its <glue>)
        const stop = subs.get(names[k]!)!.stop;
        return { ...e, id: `video-mix/${split}/${i}`, gold: { ...e.gold, task: names[k]! }, ...(stop ? { stop } : {}) };
      });
    },
    async score(example: Example<VideoGold>, completion, tokens, turns) {
      const name = example.gold.task;
      const sub = name ? subs.get(name) : undefined;
      if (!sub) throw new ConfigError(`video-mix: example ${example.id} names no mixed task (${String(name)})`);
      const r = await sub.score(example, completion, tokens, turns);
      const out: Record<string, number> = Object.fromEntries(terms.map((t) => [t.name, 0]));
      out[name!.replace(/^video-/, "")] = r.terms.reward ?? 0;
      out.correct = r.terms.correct ?? 0;
      return { ...r, terms: out };
    },
  };
}

/** Registry definition of the mix. */
export const videoMixTask: TaskDefinition<Partial<MixOptions>> = {
  name: "video-mix",
  description: "VideoChat-R1's joint video task mix (temporal grounding, tracking, grounded QA by default)",
  options: mixOptions as unknown as z.ZodType<Partial<MixOptions>>,
  create: (opts) => createMix(opts) as unknown as Task,
};
