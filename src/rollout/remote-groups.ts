/**
 * Group sampling on a remote OpenAI-compatible server (src/sampling/remote): the remote counterpart of
 * `sampleGroups` (./groups.ts), returning the same token-in/token-out `Rollout` records, one model segment each, with
 * the server's log-probs as `samplerLogprobs`. The G completions of the Q prompts are one request (n = G), so rows
 * come back in the order, and with rlvr serve from the seeds, that the built-in sampler would give them.
 *
 * Single-turn tasks only: a multi-turn task's environment answers between model turns, which the episode loop does
 * with the built-in sampler (a ConfigError naming `sampler.type` otherwise). A completion whose re-tokenised ids do not
 * align with the server's log-probs gets NaN log-probs, which no loss may read: the trainer recomputes them (the
 * rollout is in `noLogprobs`).
 */
import { ConfigError, type Rng } from "../util/index.js";
import type { Tokenizer } from "../models/tokenizer.js";
import type { RemoteSampler } from "../sampling/remote/index.js";
import type { Example, Task } from "../tasks/types.js";
import { promptIds, type GroupSamplingOptions } from "./groups.js";
import type { Rollout, RolloutGroup } from "./types.js";

/** What a remote generation batch gives the trainer. */
export interface RemoteGroups {
  groups: RolloutGroup[];
  /** Rollouts without inference log-probs (re-tokenised and misaligned): their `samplerLogprobs` are NaN. */
  noLogprobs: Set<Rollout>;
  /** Completions whose ids were re-tokenised from text (the server returned no token ids). */
  retokenized: number;
}

/** The request seed of a generation batch: the seed of its stream, so the server draws what `sample` would. */
export function requestSeed(rng: Rng): number {
  return rng.seed;
}

/** Samples G completions of each example on the remote server; rewards are not yet filled in. */
export async function sampleGroupsRemote(
  sampler: RemoteSampler,
  tokenizer: Tokenizer,
  task: Pick<Task, "name" | "environment">,
  examples: readonly Example[],
  opts: GroupSamplingOptions,
): Promise<RemoteGroups> {
  if (task.environment) {
    throw new ConfigError(
      `sampler.type: task ${task.name} is multi-turn (environment ${task.environment.name}); the openai sampler ` +
        'samples single-turn tasks only: use sampler.type "builtin"',
    );
  }
  const G = opts.groupSize;
  const prompts = examples.map((e) => ({ ids: promptIds(tokenizer, e.prompt), text: e.prompt }));
  // one request per distinct stop list (an example's own `stop` replaces the task's), rows put back in example order
  const stopOf = (e: Example) => e.stop ?? opts.stop;
  const parts = new Map<string, number[]>();
  examples.forEach((e, q) => {
    const key = JSON.stringify(stopOf(e) ?? null);
    parts.set(key, [...(parts.get(key) ?? []), q]);
  });
  const rows: Awaited<ReturnType<RemoteSampler["sample"]>> = new Array(examples.length * G);
  let part = 0;
  for (const qs of parts.values()) {
    const stop = stopOf(examples[qs[0]!]!);
    const got = await sampler.sample(
      qs.map((q) => prompts[q]!),
      {
        n: G,
        maxNewTokens: opts.maxNewTokens,
        temperature: opts.temperature,
        ...(opts.topK !== undefined ? { topK: opts.topK } : {}),
        ...(opts.topP !== undefined ? { topP: opts.topP } : {}),
        ...(stop ? { stop } : {}),
        // a single request keeps the batch's seed (what the built-in sampler draws); more get split streams
        seed: requestSeed(parts.size === 1 ? opts.rng : opts.rng.split(`stop-${part++}`)),
      },
    );
    qs.forEach((q, k) => {
      for (let i = 0; i < G; i++) rows[q * G + i] = got[k * G + i]!;
    });
  }
  const noLogprobs = new Set<Rollout>();
  const groups = examples.map((ex, q) => {
    const groupId = `${opts.idPrefix}/${q}`;
    const rollouts = Array.from({ length: G }, (_, i): Rollout => {
      const s = rows[q * G + i]!;
      const r: Rollout = {
        id: `${groupId}/${i}`,
        task: task.name,
        exampleId: ex.id,
        groupId,
        promptIds: prompts[q]!.ids,
        completionIds: s.tokens,
        samplerLogprobs: s.logprobs ?? s.tokens.map(() => NaN),
        lossMask: s.tokens.map(() => 1),
        text: s.text,
        segments: [{ kind: "model", start: 0, end: s.tokens.length, text: s.text }],
        episode: { turns: 1, errors: [] },
        finishReason: s.finishReason,
        reward: null,
        terms: {},
        advantage: 0,
        policyVersion: opts.policyVersion,
      };
      if (!s.logprobs) noLogprobs.add(r);
      return r;
    });
    return { id: groupId, exampleId: ex.id, prompt: ex.prompt, rollouts };
  });
  return { groups, noLogprobs, retokenized: rows.filter((r) => r.retokenized).length };
}
