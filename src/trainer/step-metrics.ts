/**
 * Per-step reward, group and length metrics (spec §9) computed from a step's scored groups, and the compact
 * records written to samples.jsonl (prompt, completions, rewards, terms, advantages).
 */
import type { Tokenizer } from "../models/tokenizer.js";
import type { RolloutGroup } from "../rollout/types.js";
import type { Task } from "../tasks/types.js";
import { lengthMetrics, rewardMetrics as groupRewardMetrics } from "../algorithms/index.js";

/**
 * `reward/*`, `groups/*`, `length/*`, `prompt/*` and `credit/*` metrics over every generated completion of the step:
 * the §9 definitions are `rewardMetrics` and `lengthMetrics` of src/algorithms; this adds what only rollout
 * records know (tool tokens, credit masking, prompt length).
 */
export function rewardMetrics(
  groups: readonly RolloutGroup[],
  task: Pick<Task, "terms" | "correctTerm">,
): Record<string, number> {
  const all = groups.flatMap((g) => g.rollouts);
  const scored = all.filter((r) => r.reward !== null);
  const termNames = new Set([...task.terms.map((t) => t.name), ...scored.flatMap((r) => Object.keys(r.terms))]);
  const byTerm = (name: string) =>
    groups.map((g) => g.rollouts.map((r) => (r.reward === null ? null : (r.terms[name] ?? 0))));
  const m: Record<string, number> = {
    ...groupRewardMetrics(
      groups.map((g) => g.rollouts.map((r) => r.reward)),
      {
        terms: Object.fromEntries([...termNames].map((name) => [name, byTerm(name)])),
        correct: byTerm(task.correctTerm),
      },
    ),
    ...lengthMetrics(
      all.map((r) => r.completionIds.length),
      all.map((r) => r.finishReason),
    ),
  };
  // Tool tokens: masked positions that neither credit masking nor a masked truncation took out.
  const toolTokens = (r: (typeof all)[number]) => {
    const maskedTruncation = r.finishReason === "length" && r.lossMask.every((x) => x === 0) ? r.lossMask.length : 0;
    return r.lossMask.length - r.lossMask.reduce((a, b) => a + b, 0) - (r.creditMasked ?? 0) - maskedTruncation;
  };
  m["length/toolTokensMean"] = mean(all.map(toolTokens));
  // Lengths of correct (correctness term 1) and wrong scored completions, over every completion of the step; a
  // step with none of one kind logs no value for it (not 0).
  const correct = scored.filter((r) => r.terms[task.correctTerm] === 1);
  const wrong = scored.filter((r) => r.terms[task.correctTerm] !== 1);
  if (correct.length) m["length/correctMean"] = mean(correct.map((r) => r.completionIds.length));
  if (wrong.length) m["length/wrongMean"] = mean(wrong.map((r) => r.completionIds.length));
  m["credit/firstErrorFrac"] = all.length ? all.filter((r) => r.firstErrorEnd !== undefined).length / all.length : 0;
  m["credit/maskedTokensMean"] = mean(all.map((r) => r.creditMasked ?? 0));
  m["prompt/lengthMean"] = mean(groups.map((g) => g.rollouts[0]?.promptIds.length ?? 0));
  // Multi-turn episodes (docs/multi-turn.md): turns, environment errors (bad input, timeouts) and budget cuts.
  const episodes = all.flatMap((r) => (r.episode?.env ? [r.episode] : []));
  if (episodes.length > 0) {
    m["episode/turnsMean"] = mean(episodes.map((e) => e.turns));
    m["episode/errors"] = episodes.reduce((s, e) => s + e.errors.length, 0);
    m["episode/truncatedFrac"] = episodes.filter((e) => e.truncated !== undefined).length / episodes.length;
  }
  // The Conductor (docs/conductor.md): steps and worker tokens of the executed chains.
  const chains = all.flatMap((r) =>
    r.rewardInfo?.chain ? [r.rewardInfo.chain as { steps: unknown[]; workerTokens: number }] : [],
  );
  if (chains.length > 0) {
    m["conductor/stepsMean"] = mean(chains.map((c) => c.steps.length));
    m["conductor/workerTokensMean"] = mean(chains.map((c) => c.workerTokens));
  }
  return m;
}

/** samples.jsonl records: each group's prompt and its completions with reward, terms and advantage. */
export function sampleRecords(groups: readonly RolloutGroup[], _tokenizer: Tokenizer): unknown[] {
  return groups.map((g) => ({
    group: g.id,
    example: g.exampleId,
    prompt: g.prompt,
    completions: g.rollouts.map((r) => ({
      text: r.text,
      finish: r.finishReason,
      tokens: r.completionIds.length,
      reward: r.reward,
      terms: r.terms,
      advantage: round(r.advantage),
      ...(r.rewardInfo?.error ? { error: r.rewardInfo.error } : {}),
      ...(r.episode?.env ? { turns: r.episode.turns, envErrors: r.episode.errors } : {}),
      ...(r.segments && r.segments.length > 1
        ? { segments: r.segments.map((s) => ({ kind: s.kind, text: s.text })) }
        : {}),
      ...(r.rewardInfo?.chain ? { chain: r.rewardInfo.chain } : {}), // the Conductor's executed chain (issue 13)
    })),
  }));
}

function mean(xs: readonly number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
}
const round = (x: number) => Math.round(x * 1e6) / 1e6;
