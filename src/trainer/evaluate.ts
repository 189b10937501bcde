/**
 * Held-out evaluation (spec §9 "Evaluation"): n samples per question (greedy when the temperature is 0, then n = 1),
 * scored by the task; reports `eval/<task>/pass@k` with the unbiased estimator 1 − C(n−c, k)/C(n, k),
 * `eval/<task>/mean@n` (mean correctness), the mean reward and the mean of every reward term, and the null share.
 * A completion passes when the task's correctness term is exactly 1.
 */
import { Rng } from "../util/index.js";
import type { Transformer } from "../models/transformer.js";
import type { Tokenizer } from "../models/tokenizer.js";
import "./builtins.js";
import { scoreGroups, type GroupSamplingOptions } from "../rollout/groups.js";
import { sampleGroupsFor } from "./diffusion-step.js";
import type { RolloutGroup } from "../rollout/types.js";
import type { Example, Task } from "../tasks/types.js";
import { passAtK } from "../algorithms/index.js";

/** Evaluation settings (the recipe's `eval` section plus the token budget). */
export interface EvalOptions {
  temperature: number;
  k: readonly number[];
  maxNewTokens: number;
  seed: number;
  /** Rows per sampler call. */
  maxRows?: number;
  /** A masked-diffusion policy's sampler knobs (the recipe's `sampler.diffusion`). */
  diffusion?: GroupSamplingOptions["diffusion"];
}

/** Evaluation metrics plus the scored groups (for inspection). */
export interface EvalResult {
  metrics: Record<string, number>;
  groups: RolloutGroup[];
}

/** pass@k is the algorithms layer's (§9), re-exported for the trainer's callers. */
export { passAtK };

/** Samples and scores the held-out examples and aggregates the metrics. */
export async function evaluate(
  model: Transformer,
  tokenizer: Tokenizer,
  task: Task,
  examples: readonly Example[],
  opts: EvalOptions,
): Promise<EvalResult> {
  const greedy = opts.temperature <= 0;
  const n = greedy ? 1 : Math.max(...opts.k);
  const groups = await sampleGroupsFor(model, tokenizer, task, examples, {
    groupSize: n,
    maxNewTokens: opts.maxNewTokens,
    temperature: opts.temperature,
    ...(task.stop ? { stop: task.stop } : {}),
    rng: new Rng(opts.seed).split("eval"),
    policyVersion: -1,
    idPrefix: "eval",
    ...(opts.maxRows ? { maxRows: opts.maxRows } : {}),
    ...(opts.diffusion ? { diffusion: opts.diffusion } : {}),
  });
  const byId = new Map(examples.map((e) => [e.id, e]));
  const stats = await scoreGroups(task, byId, groups);
  const p = `eval/${task.name}`;
  const metrics: Record<string, number> = {};
  const ks = greedy ? [1] : [...opts.k];
  const correct = groups.map((g) => g.rollouts.filter((r) => r.terms[task.correctTerm] === 1).length);
  for (const k of ks) metrics[`${p}/pass@${k}`] = mean(correct.map((c) => passAtK(n, c, k)));
  metrics[`${p}/mean@${n}`] = mean(correct.map((c) => c / n));
  const all = groups.flatMap((g) => g.rollouts);
  const scored = all.filter((r) => r.reward !== null);
  metrics[`${p}/reward`] = mean(scored.map((r) => r.reward!));
  for (const term of task.terms) metrics[`${p}/reward/${term.name}`] = mean(scored.map((r) => r.terms[term.name] ?? 0));
  metrics[`${p}/nullFrac`] = stats.nulls / all.length;
  metrics[`${p}/length`] = mean(all.map((r) => r.completionIds.length));
  return { metrics, groups };
}

function mean(xs: number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
}
