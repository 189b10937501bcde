/**
 * From scored groups to the optimizer batch: the trainer's adapter between rollout records and the algorithm that
 * `buildAlgorithm` returned. Reward shaping, advantages (KL in the reward, reward-term aggregation) and the
 * zero-variance group policy are the algorithm's; this file reads rollouts into numbers, writes the results back
 * (`reward`, `terms`, `lossMask`, `advantage`, `tokenAdvantages`), and enforces the null-reward rules with errors
 * that name the task and the checker (§1.6).
 */
import { ConfigError } from "../util/index.js";
import {
  advantageMetrics,
  checkNullRewards,
  isInformative,
  NullRewardError,
  type Algorithm,
  type CompletionNumbers,
} from "../algorithms/index.js";
import type { Rollout, RolloutGroup } from "../rollout/types.js";
import type { Task } from "../tasks/types.js";
import type { AlgorithmConfig } from "./config.js";

/** Applies the algorithm's reward shaping (overlong term, truncation policy) to every rollout, in place. */
export function shapeRewards(groups: readonly RolloutGroup[], algorithm: Algorithm): void {
  for (const r of groups.flatMap((g) => g.rollouts)) {
    const truncated = r.finishReason === "length";
    const s = algorithm.shapeReward({ reward: r.reward, terms: r.terms, length: r.completionIds.length, truncated });
    r.reward = s.reward;
    r.terms = s.terms;
    if (s.maskAll) r.lossMask = r.lossMask.map(() => 0);
  }
}

/**
 * Enforces `nulls.onNull` and `nulls.maxNullFrac` (§1.6) with the algorithm's one rule (`checkNullRewards`); the
 * error is a ConfigError naming the task, its checkers and the first unscorable completion's message.
 */
export function checkNulls(
  groups: readonly RolloutGroup[],
  nulls: AlgorithmConfig["nulls"],
  task: Pick<Task, "name" | "terms">,
): void {
  const bad = groups.flatMap((g) => g.rollouts).find((r) => r.reward === null);
  if (!bad) return;
  const why = `example ${bad.exampleId}: ${String(bad.rewardInfo?.error ?? "checker returned null")}`;
  const context = `task ${task.name}, checkers ${task.terms.map((t) => t.reward).join(", ")}; first: ${why}`;
  try {
    checkNullRewards(
      groups.map((g) => g.rollouts.map((r) => r.reward)),
      { ...nulls, context },
    );
  } catch (err) {
    if (err instanceof NullRewardError) throw new ConfigError(err.message);
    throw err;
  }
}

/** KL section masks s(t) by rollout (partial KL), when the algorithm has sections. */
export type KlMasks = ReadonlyMap<Rollout, readonly number[]>;

/** A rollout as the algorithm's pure functions read it. */
export function numbersOf(r: Rollout, klMasks?: KlMasks): CompletionNumbers {
  const s = klMasks?.get(r);
  return {
    reward: r.reward,
    terms: r.terms,
    mask: r.lossMask,
    oldLogp: r.samplerLogprobs,
    ...(r.refLogprobs ? { refLogp: r.refLogprobs } : {}),
    ...(s ? { klMask: s } : {}),
  };
}

/** The optimizer batch and the advantage/group metrics of a step. */
export interface StepAdvantages {
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
export function assignAdvantages(
  groups: readonly RolloutGroup[],
  algorithm: Algorithm,
  beta: number,
  wantGroups: number,
  klMasks?: KlMasks,
): StepAdvantages {
  const res = algorithm.advantages(
    groups.map((g) => g.rollouts.map((r) => numbersOf(r, klMasks))),
    beta,
  );
  groups.forEach((g, i) =>
    g.rollouts.forEach((r, j) => {
      r.advantage = r.reward === null ? 0 : res.advantages[i]![j]!;
      const ta = res.tokenAdvantages?.[i]?.[j];
      if (ta && ta.length) r.tokenAdvantages = ta;
    }),
  );
  const rewards = groups.map((g) => g.rollouts.map((r) => r.reward));
  const selected = algorithm.selectGroups(rewards, wantGroups);
  const rollouts = selected.flatMap((i) => groups[i]!.rollouts.filter((_, j) => res.keep[i]![j]));
  return {
    rollouts,
    informativeGroups: rewards.filter(isInformative).length,
    metrics: { ...res.metrics, ...advantageMetrics(rollouts.map((r) => r.advantage)) },
  };
}
