/**
 * Per-step reward, group and length metrics (spec §9) computed from a step's scored groups, and the compact
 * records written to samples.jsonl (prompt, completions, rewards, terms, advantages).
 */
import type { Tokenizer } from "../models/tokenizer.js";
import type { RolloutGroup } from "../rollout/types.js";
import type { Task } from "../tasks/types.js";

/** `reward/*`, `length/*`, `prompt/*` metrics over every generated completion of the step. */
export function rewardMetrics(groups: readonly RolloutGroup[], task: Pick<Task, "terms">): Record<string, number> {
  const all = groups.flatMap((g) => g.rollouts);
  const scored = all.filter((r) => r.reward !== null);
  const rs = scored.map((r) => r.reward!);
  const m: Record<string, number> = {
    "reward/mean": mean(rs),
    "reward/std": popStd(rs),
    "reward/groupStdMean": mean(groups.map((g) => sampleStd(g.rollouts.filter((r) => r.reward !== null).map((r) => r.reward!)))),
    "reward/nullFrac": all.length ? (all.length - scored.length) / all.length : 0,
  };
  const termNames = new Set([...task.terms.map((t) => t.name), ...scored.flatMap((r) => Object.keys(r.terms))]);
  for (const name of termNames) {
    const v = scored.map((r) => r.terms[name] ?? 0);
    m[`reward/${name}/mean`] = mean(v);
    m[`reward/${name}/std`] = popStd(v);
  }
  const lens = all.map((r) => r.completionIds.length);
  const stopped = all.filter((r) => r.finishReason === "stop").map((r) => r.completionIds.length);
  m["length/mean"] = mean(lens);
  m["length/min"] = lens.length ? Math.min(...lens) : 0;
  m["length/max"] = lens.length ? Math.max(...lens) : 0;
  m["length/terminatedMean"] = mean(stopped);
  m["length/truncatedFrac"] = all.length ? all.filter((r) => r.finishReason === "length").length / all.length : 0;
  m["length/errorFrac"] = all.length ? all.filter((r) => r.finishReason === "error").length / all.length : 0;
  m["length/toolTokensMean"] = mean(all.map((r) => r.lossMask.length - r.lossMask.reduce((a, b) => a + b, 0) - (r.creditMasked ?? 0) - (r.finishReason === "length" && r.lossMask.every((x) => x === 0) ? r.lossMask.length : 0)));
  m["credit/firstErrorFrac"] = all.length ? all.filter((r) => r.firstErrorEnd !== undefined).length / all.length : 0;
  m["credit/maskedTokensMean"] = mean(all.map((r) => r.creditMasked ?? 0));
  m["prompt/lengthMean"] = mean(groups.map((g) => g.rollouts[0]?.promptIds.length ?? 0));
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
    })),
  }));
}

function mean(xs: readonly number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
}
function popStd(xs: readonly number[]): number {
  if (xs.length === 0) return 0;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / xs.length);
}
function sampleStd(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1));
}
const round = (x: number) => Math.round(x * 1e6) / 1e6;
