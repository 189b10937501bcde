/**
 * Group sampling and scoring. For a batch of examples, every prompt is repeated G times and all Q·G rows run through
 * the episode loop in one batch (KV cache, recorded log-probs); each row becomes a token-in/token-out `Rollout`
 * whose segments are its model turns and inserted tool/environment tokens (one model segment for a single turn).
 * Scoring runs the task's `score()`. A reward that throws makes that completion unscorable (`reward: null`, the
 * error kept in `rewardInfo`) and is counted; it never stops the run (the trainer's `maxNullFrac` decides that).
 */
import type { Rng } from "../util/index.js";
import type { Transformer } from "../models/transformer.js";
import type { Tokenizer } from "../models/tokenizer.js";
import { getEnvironment, type EnvEpisode, type Environment } from "../envs/index.js";
import { runEpisodes, type EpisodeResult } from "./episode.js";
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
  /** Stop strings (the task's); an example's own `stop` replaces them for its rows. */
  stop?: string[];
  /** Seeded stream for this batch. */
  rng: Rng;
  /** Policy version (trainer step) recorded on each rollout. */
  policyVersion: number;
  /** Prefix of group ids, e.g. "12" for step 12 or "12.1" for its second generation batch. */
  idPrefix: string;
  /** Largest number of rows per sampler call (memory bound); default all rows at once. */
  maxRows?: number;
  /** A masked-diffusion policy's sampler knobs (src/sampling/diffusion.ts); a decoder ignores them. */
  diffusion?: { steps?: number; blockLength?: number; remasking?: "lowConfidence" | "random" };
}

/** Prompt ids as the model sees them: bos (if any) then the encoded prompt. */
export function promptIds(tokenizer: Tokenizer, prompt: string): number[] {
  const ids = tokenizer.encode(prompt);
  return tokenizer.bosId !== null ? [tokenizer.bosId, ...ids] : ids;
}

/**
 * Samples G completions for each example, in batched episode-loop calls (src/rollout/episode.ts; a task without an
 * environment is the single-turn case); rewards are not yet filled in.
 */
export async function sampleGroups(
  model: Transformer,
  tokenizer: Tokenizer,
  task: Pick<Task, "name" | "environment">,
  examples: readonly Example[],
  opts: GroupSamplingOptions,
): Promise<RolloutGroup[]> {
  const G = opts.groupSize;
  const env = task.environment ? getEnvironment(task.environment.name, task.environment.options) : null;
  const prompts = examples.map((e) => promptIds(tokenizer, e.prompt));
  const rows: { prompt: number[]; example: Example }[] = [];
  examples.forEach((e, q) => {
    for (let i = 0; i < G; i++) rows.push({ prompt: prompts[q]!, example: e });
  });
  const maxRows = opts.maxRows ?? rows.length;
  const sampled: EpisodeResult[] = [];
  for (let at = 0; at < rows.length; at += maxRows) {
    const chunk = rows.slice(at, at + maxRows);
    sampled.push(
      ...(await runEpisodes(
        model,
        tokenizer,
        chunk.map((r) => r.prompt),
        env,
        chunk.map((r) => (env ? startEpisode(env, r.example) : null)),
        {
          maxNewTokens: opts.maxNewTokens,
          temperature: opts.temperature,
          ...(opts.topK !== undefined ? { topK: opts.topK } : {}),
          ...(opts.topP !== undefined ? { topP: opts.topP } : {}),
          ...(opts.stop ? { stop: opts.stop } : {}),
          ...(chunk.some((r) => r.example.stop) ? { rowStop: chunk.map((r) => r.example.stop) } : {}),
          ...(chunk.some((r) => r.example.images) ? { images: chunk.map((r) => r.example.images) } : {}),
          rng: opts.rng,
        },
      )),
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
        completionIds: s.completionIds,
        samplerLogprobs: s.samplerLogprobs,
        lossMask: s.lossMask,
        text: s.text,
        segments: s.segments,
        episode: s.episode,
        finishReason: s.finishReason,
        reward: null,
        terms: {},
        advantage: 0,
        policyVersion: opts.policyVersion,
        ...(ex.images ? { images: ex.images } : {}),
      });
    }
    return { id: groupId, exampleId: ex.id, prompt: ex.prompt, rollouts };
  });
}

/** `env.start(example)`; a start that throws becomes an episode whose every call fails (the loop's `onError`). */
function startEpisode(env: Environment, example: Example): EnvEpisode {
  try {
    return env.start(example);
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    return {
      step: () => {
        throw new Error(`start failed: ${msg}`);
      },
    };
  }
}

/** The model turns' texts of a multi-turn rollout (what a multi-turn reward reads); undefined for single turn. */
export function modelTurns(r: Rollout): string[] | undefined {
  if (!r.episode?.env || !r.segments) return undefined;
  return r.segments.filter((s) => s.kind === "model").map((s) => s.text);
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
        if (r.episode?.envReward !== undefined) {
          // The environment ended the episode with its own reward (bad input, a loop of calls, a verifier).
          r.reward = r.episode.envReward;
          r.terms = {};
          r.rewardInfo = { envErrors: r.episode.errors };
          return;
        }
        const res = await task.score(example, r.text, r.completionIds, modelTurns(r));
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
