/**
 * Group sampling and scoring. For a batch of examples, every prompt is repeated G times and all Q·G rows are
 * sampled in one batched call (KV cache, recorded log-probs); each row becomes a token-in/token-out `Rollout`.
 * Scoring runs the task's `score()`. A reward that throws makes that completion unscorable (`reward: null`, the
 * error kept in `rewardInfo`) and is counted; it never stops the run (the trainer's `maxNullFrac` decides that).
 */
import type { Rng } from "../util/index.js";
import type { Transformer } from "../models/transformer.js";
import type { Tokenizer } from "../models/tokenizer.js";
import { sample, type SampledSequence } from "../sampling/sample.js";
import type { Example, Task } from "../tasks/types.js";
import type { Rollout, RolloutGroup } from "./types.js";

/** How to sample a step's groups. */
export interface GroupSamplingOptions {
  /** Completions per prompt (G). */
  groupSize: number;
  /** Token budget per completion (L_max). */
  maxNewTokens: number;
  /** Sampling temperature T (0 = greedy, evaluation only). */
  temperature: number;
  topK?: number;
  topP?: number;
  /** Stop strings (the task's). */
  stop?: string[];
  /** Seeded stream for this batch. */
  rng: Rng;
  /** Policy version (trainer step) recorded on each rollout. */
  policyVersion: number;
  /** Prefix of group ids, e.g. "12" for step 12 or "12.1" for its second generation batch. */
  idPrefix: string;
  /** Largest number of rows per sampler call (memory bound); default all rows at once. */
  maxRows?: number;
}

/** Prompt ids as the model sees them: bos (if any) then the encoded prompt. */
export function promptIds(tokenizer: Tokenizer, prompt: string): number[] {
  const ids = tokenizer.encode(prompt);
  return tokenizer.bosId !== null ? [tokenizer.bosId, ...ids] : ids;
}

/** Samples G completions for each example, in batched sampler calls; rewards are not yet filled in. */
export function sampleGroups(
  model: Transformer,
  tokenizer: Tokenizer,
  task: Pick<Task, "name">,
  examples: readonly Example[],
  opts: GroupSamplingOptions,
): RolloutGroup[] {
  const G = opts.groupSize;
  const prompts = examples.map((e) => promptIds(tokenizer, e.prompt));
  const rows: number[][] = [];
  for (const p of prompts) for (let i = 0; i < G; i++) rows.push(p);
  const maxRows = opts.maxRows ?? rows.length;
  const sampled: SampledSequence[] = [];
  for (let at = 0; at < rows.length; at += maxRows) {
    sampled.push(
      ...sample(model, tokenizer, rows.slice(at, at + maxRows), {
        maxNewTokens: opts.maxNewTokens,
        temperature: opts.temperature,
        ...(opts.topK !== undefined ? { topK: opts.topK } : {}),
        ...(opts.topP !== undefined ? { topP: opts.topP } : {}),
        ...(opts.stop ? { stop: opts.stop } : {}),
        rng: opts.rng,
      }),
    );
  }
  return examples.map((ex, q) => {
    const groupId = `${opts.idPrefix}/${q}`;
    const rollouts: Rollout[] = [];
    for (let i = 0; i < G; i++) {
      const s = sampled[q * G + i]!;
      rollouts.push({
        id: `${groupId}/${i}`,
        task: task.name,
        exampleId: ex.id,
        groupId,
        promptIds: prompts[q]!,
        completionIds: s.tokens,
        samplerLogprobs: s.logprobs,
        lossMask: s.tokens.map(() => 1),
        text: s.text,
        finishReason: s.finishReason,
        reward: null,
        terms: {},
        advantage: 0,
        policyVersion: opts.policyVersion,
      });
    }
    return { id: groupId, exampleId: ex.id, prompt: ex.prompt, rollouts };
  });
}

/** Counts from scoring a batch. */
export interface ScoreStats {
  /** Completions whose reward is null (checker threw or returned null). */
  nulls: number;
  /** Completions whose checker threw. */
  errors: number;
  /** The first error message, to name the failing checker in logs. */
  firstError: string | null;
}

/** Fills `reward`, `terms` and `rewardInfo` of every rollout with the task's score; never throws for a checker. */
export async function scoreGroups(
  task: Task,
  examplesById: ReadonlyMap<string, Example>,
  groups: readonly RolloutGroup[],
): Promise<ScoreStats> {
  const stats: ScoreStats = { nulls: 0, errors: 0, firstError: null };
  const all = groups.flatMap((g) => g.rollouts);
  await Promise.all(
    all.map(async (r) => {
      const example = examplesById.get(r.exampleId);
      if (!example) throw new Error(`scoreGroups: no example "${r.exampleId}"`);
      try {
        const res = await task.score(example, r.text, r.completionIds);
        r.reward = res.score === null || !Number.isFinite(res.score) ? null : res.score;
        r.terms = { ...res.terms };
        if (res.info) r.rewardInfo = res.info;
        if (res.firstErrorEnd !== undefined) r.firstErrorEnd = res.firstErrorEnd;
        if (res.score !== null && !Number.isFinite(res.score))
          r.rewardInfo = { ...res.info, error: `non-finite score ${res.score}` };
      } catch (err) {
        r.reward = null;
        r.terms = {};
        r.rewardInfo = { error: err instanceof Error ? err.message : String(err) };
        stats.errors++;
        stats.firstError ??= `${task.name}: ${r.rewardInfo.error as string}`;
      }
      if (r.reward === null) stats.nulls++;
    }),
  );
  return stats;
}
