/**
 * From scored groups to the optimizer batch: reward shaping (DAPO overlong term §8.4, truncation policy §4, KL in
 * the reward §2.4), the null-reward rules (§1.6), advantages from `src/algorithms` over the whole rollout batch,
 * and the zero-variance group policy (§1.7). The advantage maths itself lives in `computeAdvantages`; this file
 * only decides which completions enter it and which enter the loss.
 */
import { ConfigError } from "../util/index.js";
import { computeAdvantages } from "../algorithms/index.js";
import type { Rollout, RolloutGroup } from "../rollout/types.js";
import type { Task } from "../tasks/types.js";
import type { AlgorithmConfig } from "./config.js";

/** Adds the overlong term and applies the truncation policy, in place. */
export function shapeRewards(groups: readonly RolloutGroup[], alg: AlgorithmConfig, maxTokens: number): void {
  for (const r of groups.flatMap((g) => g.rollouts)) {
    if (alg.overlong.enabled) {
      const lc = alg.overlong.bufferFrac * maxTokens;
      const L = r.completionIds.length;
      // r_len = 0 up to L_max − L_c, then (L_max − L_c − L)/L_c down to −1 at L_max (§8.4)
      const pen = L <= maxTokens - lc ? 0 : L > maxTokens ? -1 : (maxTokens - lc - L) / lc;
      r.terms.overlong = pen;
      if (r.reward !== null) r.reward += pen;
    }
    if (r.finishReason === "length") {
      if (alg.truncated === "mask") r.lossMask = r.lossMask.map(() => 0);
      if (alg.truncated === "zeroReward" && r.reward !== null) {
        r.reward = 0;
        for (const k of Object.keys(r.terms)) r.terms[k] = 0;
      }
    }
  }
}

/** Enforces `nulls.onNull` and `nulls.maxNullFrac` (§1.6); the error names the task and the checker's message. */
export function checkNulls(groups: readonly RolloutGroup[], nulls: AlgorithmConfig["nulls"], task: Pick<Task, "name" | "terms">): void {
  const all = groups.flatMap((g) => g.rollouts);
  const bad = all.filter((r) => r.reward === null);
  if (bad.length === 0) return;
  const why = (r: Rollout) => `example ${r.exampleId}: ${String(r.rewardInfo?.error ?? "checker returned null")}`;
  const checkers = task.terms.map((t) => t.reward).join(", ");
  if (nulls.onNull === "error") throw new ConfigError(`unscorable completion (nulls.onNull = "error") in task ${task.name} (checkers ${checkers}): ${why(bad[0]!)}`);
  if (bad.length / all.length > nulls.maxNullFrac) {
    throw new ConfigError(`${bad.length} of ${all.length} completions are unscorable (> nulls.maxNullFrac = ${nulls.maxNullFrac}) in task ${task.name} (checkers ${checkers}); first: ${why(bad[0]!)}`);
  }
}

/** The optimizer batch and the advantage/group metrics of a step. */
export interface AdvantageResult {
  /** Rollouts that enter the loss (nulls and dropped groups removed), with `advantage` set. */
  rollouts: Rollout[];
  /** Groups with n_g ≥ 2 and non-zero spread. */
  informativeGroups: number;
  /** `groups/*` and `adv/*` metrics (§9). */
  metrics: Record<string, number>;
}

/**
 * Sets `advantage` on every rollout (0 for nulls) and returns the ones that enter the loss. With `resample`, at
 * most `wantGroups` informative groups are kept, in generation order (§1.7).
 */
export function assignAdvantages(groups: readonly RolloutGroup[], alg: AlgorithmConfig, beta: number, wantGroups: number, correctTerm = "correct"): AdvantageResult {
  const rewards = groups.map((g) => g.rollouts.map((r) => r.reward));
  const lengths = groups.map((g) => g.rollouts.map((r) => r.lossMask.reduce((a, b) => a + b, 0)));
  const klInReward = alg.kl.placement === "reward" && beta > 0 ? { beta, k1: groups.map((g) => g.rollouts.map(k1PerToken)) } : undefined;
  const res = computeAdvantages(rewards, {
    ...alg.advantage,
    zeroStd: alg.zeroStd.policy,
    onNull: alg.nulls.onNull,
    maxNullFrac: alg.nulls.maxNullFrac,
    lengths,
    ...(klInReward ? { klInReward } : {}),
  });
  groups.forEach((g, i) =>
    g.rollouts.forEach((r, j) => {
      r.advantage = r.reward === null ? 0 : res.advantages[i]![j]!;
      const ta = res.tokenAdvantages?.[i]?.[j];
      if (ta && ta.length) r.tokenAdvantages = ta;
    }),
  );

  // Informative groups (n_g ≥ 2, spread > 0); with resample keep the first `wantGroups` in generation order (§1.7)
  const informative = groups.map((_, i) => rewards[i]!.filter((x) => x !== null).length >= 2 && !res.zeroStdGroups[i]);
  let n = 0;
  const keepGroup = groups.map((_, i) => alg.zeroStd.policy !== "resample" || (informative[i]! && n++ < wantGroups));
  const rollouts = groups.flatMap((g, i) => (keepGroup[i] ? g.rollouts.filter((_, j) => res.keep[i]![j]) : []));
  const binary = (v: number | undefined) => v === 0 || v === 1;
  const allBinary = groups.every((g) => g.rollouts.every((r) => r.reward === null || binary(r.terms[correctTerm])));
  const a = rollouts.map((r) => r.advantage);
  const meanA = a.length ? a.reduce((s, x) => s + x, 0) / a.length : 0;
  const metrics: Record<string, number> = {
    ...res.metrics,
    "adv/mean": meanA,
    "adv/std": a.length ? Math.sqrt(a.reduce((s, x) => s + (x - meanA) ** 2, 0) / a.length) : 0,
    "adv/absMean": a.length ? a.reduce((s, x) => s + Math.abs(x), 0) / a.length : 0,
    "adv/min": a.length ? Math.min(...a) : 0,
    "adv/max": a.length ? Math.max(...a) : 0,
  };
  if (allBinary && groups.length > 0) {
    const scored = groups.map((g) => g.rollouts.filter((r) => r.reward !== null));
    metrics["groups/allCorrectFrac"] = scored.filter((g) => g.length > 0 && g.every((r) => r.terms[correctTerm] === 1)).length / groups.length;
    metrics["groups/allWrongFrac"] = scored.filter((g) => g.length > 0 && g.every((r) => r.terms[correctTerm] === 0)).length / groups.length;
  }
  return { rollouts, informativeGroups: informative.filter(Boolean).length, metrics };
}

/** k1(t) = lp_old − lp_ref per completion token, times the loss mask (KL in the reward, §2.4). */
function k1PerToken(r: Rollout): number[] {
  const ref = r.refLogprobs;
  if (!ref) return r.completionIds.map(() => 0);
  return r.completionIds.map((_, t) => r.lossMask[t]! * (r.samplerLogprobs[t]! - ref[t]!));
}
