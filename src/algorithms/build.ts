/**
 * `buildAlgorithm(config.algorithm, context)`: the algorithm built once from its recipe section (after prime-rl's
 * `build_algorithm`), returning what the training loop calls: reward shaping, advantages (with the reward-term
 * aggregation and KL in the reward), which groups enter the optimizer batch, the policy loss, and how β updates.
 * Where KL goes (loss, reward, or only logged) is decided here, in `klPlan`, and nowhere else; the loop does not
 * branch on the estimator, the KL placement or the controller. Every function it returns is a pure function over
 * numbers, exported from this layer and tested on its own, so the numbers a user checks (for example `policyLoss`
 * against TRL) are the ones that train.
 *
 * Departures: the adaptive controller (verl `AdaptiveKLController`, OpenRLHF) reads the KL of the step's rollouts,
 * the token mean at lp_old against lp_ref of what β multiplies (k1 with KL in the reward, exactly what was
 * subtracted; the loss's estimator otherwise), in both placements; verl offers it only with KL in the reward.
 */
import { computeAdvantages, type AdvantageResult } from "./advantages.js";
import type { AdvantageOptions } from "./advantage-options.js";
import type { LossOptions } from "./loss-options.js";
import { normalizeThenSum } from "./multi-term.js";
import { klTerm } from "./pieces.js";
import type { PolicyLossResult } from "./policy-loss.js";
import { replayAwareLoss, type ReplayLossInput } from "./exgrpo-loss.js";
import { shapeReward, type ShapeInput, type Shaped } from "./reward-shaping.js";
import type { AlgorithmConfig } from "./schema.js";
import { isInformative, resampleDecision, selectGroups, type ResampleDecision } from "./zero-std.js";

/** What the algorithm needs to know of the run besides its own section. */
export interface AlgorithmContext {
  /** L_max: the completion budget (constantNorm, overlong). */
  maxCompletionTokens: number;
  /** The task's weight per reward term name; `normalizeThenSum` z-scores each of these terms. */
  termWeights?: Readonly<Record<string, number>>;
}

/** Where KL goes (§2.4), decided once. */
export interface KlPlan {
  /** A frozen reference model is built and its log-probs computed (β > 0 or `monitorOnly`). */
  reference: boolean;
  /** β·s·k enters the loss. */
  inLoss: boolean;
  /** −β·s·k1 enters the reward (returns, for batch estimators). */
  inReward: boolean;
  /** Tags of partial KL (SIRL), or null for KL on every token. */
  sections: readonly string[] | null;
}

/** One completion as the estimator and the KL controller see it; per-token rows are aligned with its tokens. */
export interface CompletionNumbers {
  reward: number | null;
  /** Unweighted terms by name (for `normalizeThenSum`). */
  terms: Readonly<Record<string, number>>;
  /** m(t): 1 on trained tokens. */
  mask: readonly number[];
  /** lp_old(t): the sampler's log-probs. */
  oldLogp: readonly number[];
  /** lp_ref(t), when the plan has a reference. */
  refLogp?: readonly number[];
  /** s(t), partial KL; default 1. */
  klMask?: readonly number[];
}

/** The loop's view of the algorithm. */
export interface Algorithm {
  readonly config: AlgorithmConfig;
  readonly kl: KlPlan;
  /** Overlong term and truncation policy for one completion. */
  shapeReward(c: ShapeInput): Shaped;
  /** Advantages over the whole rollout batch (groups of completions), with this step's β for KL in the reward. */
  advantages(groups: readonly (readonly CompletionNumbers[])[], beta: number): AdvantageResult;
  /** Indices of the groups that enter the optimizer batch (zero-std policy; `resample` keeps the first `want`). */
  selectGroups(rewards: readonly (readonly (number | null)[])[], want: number): number[];
  /** After `batches` generation batches: train now, or generate more (`resample` only; otherwise "train"). */
  nextGeneration(rewards: readonly (readonly (number | null)[])[], want: number, batches: number): ResampleDecision;
  /** The loss options the loop's update uses at this β (KL in the loss only when the plan says so). */
  lossOptions(beta: number): LossOptions;
  /** The policy loss and d loss / d lp_θ of one micro-batch (replayed rows shaped, §6.8), batch normaliser (§3.1). */
  loss(input: ReplayLossInput, beta: number, normalizer: { sequences: number; tokens: number }): PolicyLossResult;
  /** The KL the controller reads: token mean at lp_old vs lp_ref of what β multiplies (undefined: no reference). */
  observedKl(completions: readonly CompletionNumbers[]): number | undefined;
  /** β for the next step from this step's β, its observed KL and its number of sequences. */
  nextBeta(beta: number, observedKl: number | undefined, sequences: number): number;
}

/** The KL fields of an algorithm section or preset (presets leave out the ones at their defaults). */
type KlFields = Pick<AlgorithmConfig["kl"], "beta" | "estimator" | "placement"> &
  Partial<Pick<AlgorithmConfig["kl"], "monitorOnly" | "importanceWeight" | "sections">>;

/** Where KL goes for an algorithm section (§2.4): the single decision the loop and the losses follow. */
export function klPlan(a: { kl: KlFields }): KlPlan {
  const monitorOnly = a.kl.monitorOnly ?? false;
  const acts = a.kl.beta > 0 && !monitorOnly;
  return {
    reference: a.kl.beta > 0 || monitorOnly,
    inLoss: acts && a.kl.placement === "loss",
    inReward: acts && a.kl.placement === "reward",
    sections: a.kl.sections ?? null,
  };
}

/** Options of `computeAdvantages` from the algorithm section. */
export function advantageOptionsOf(a: {
  advantage: Partial<AdvantageOptions>;
  zeroStd?: Pick<AlgorithmConfig["zeroStd"], "policy">;
  nulls?: AlgorithmConfig["nulls"];
}): Partial<AdvantageOptions> {
  return {
    ...a.advantage,
    ...(a.zeroStd ? { zeroStd: a.zeroStd.policy } : {}),
    ...(a.nulls ? { onNull: a.nulls.onNull, maxNullFrac: a.nulls.maxNullFrac } : {}),
  };
}

/** The fields of an algorithm section (or preset) that the loss reads. */
type LossFields = {
  policy: Pick<AlgorithmConfig["policy"], "ratio" | "clip">;
  kl: KlFields;
  loss: Pick<AlgorithmConfig["loss"], "aggregation" | "entropyCoef">;
};

/** Options of `policyLoss` from the algorithm section, at β (0 unless KL is in the loss). */
export function lossOptionsOf(a: LossFields, maxCompletionTokens?: number, beta = a.kl.beta): LossOptions {
  const { inLoss } = klPlan(a);
  return {
    ratio: a.policy.ratio,
    clip: a.policy.clip,
    beta: inLoss ? beta : 0,
    estimator: a.kl.estimator,
    aggregation: a.loss.aggregation,
    entropyCoef: a.loss.entropyCoef,
    klImportanceWeight: a.kl.importanceWeight ?? false,
    ...(maxCompletionTokens !== undefined ? { maxCompletionTokens } : {}),
  };
}

/** Adaptive KL controller (verl, OpenRLHF): β ← β(1 + clip(KL/target − 1, ±0.2)·n/H); fixed returns β. */
export function adaptiveBeta(beta: number, kl: number, sequences: number, target: number, horizon: number): number {
  const err = Math.max(-0.2, Math.min(0.2, kl / target - 1));
  return beta * (1 + (err * sequences) / horizon);
}

/** Builds the algorithm from the recipe's `algorithm` section (see the file comment). */
export function buildAlgorithm(config: AlgorithmConfig, ctx: AlgorithmContext): Algorithm {
  const kl = klPlan(config);
  const weights = { ...(ctx.termWeights ?? {}), ...(config.overlong.enabled ? { overlong: 1 } : {}) };
  if (config.rewardAggregate === "normalizeThenSum" && !ctx.termWeights) {
    throw new TypeError("buildAlgorithm: rewardAggregate normalizeThenSum needs the task's termWeights");
  }
  const policy = config.zeroStd.policy;
  const { overlong, truncated } = config;
  const shaping = { overlong, truncated, maxCompletionTokens: ctx.maxCompletionTokens };
  const maskOf = (c: CompletionNumbers) => c.mask;
  // The controller reads what β multiplies: k1 when KL is in the reward (§2.4), else the loss's estimator.
  const controllerEstimator = kl.inReward ? "k1" : config.kl.estimator;
  const shapeOffset = config.replay?.type === "exgrpo" ? config.replay.shapeOffset : undefined;

  const k1Rows = (c: CompletionNumbers): number[] =>
    c.mask.map((m, t) => (c.refLogp ? m * (c.klMask?.[t] ?? 1) * klTerm(c.oldLogp[t]!, c.refLogp[t]!, "k1").value : 0));

  return {
    config,
    kl,
    shapeReward: (c) => shapeReward(c, shaping),

    advantages(groups, beta) {
      const rewards = groups.map((g) => g.map((c) => c.reward));
      const res = computeAdvantages(rewards, {
        ...advantageOptionsOf(config),
        lengths: groups.map((g) => g.map((c) => c.mask.reduce((a, b) => a + b, 0))),
        ...(kl.inReward && beta > 0
          ? { klInReward: { beta, k1: groups.map((g) => g.map(k1Rows)) }, tokenMasks: groups.map((g) => g.map(maskOf)) }
          : {}),
      });
      if (config.rewardAggregate === "sumThenNormalize") return res;
      // GDPO (§8.1): z-score each weighted term within its group, sum with the weights, standardise over the batch.
      const terms = Object.entries(weights).map(([name, weight]) => ({
        weight,
        values: groups.map((g) => g.map((c) => (c.reward === null ? null : (c.terms[name] ?? 0)))),
      }));
      const eps = config.advantage.type === "zScore" ? config.advantage.eps : undefined;
      return { ...res, advantages: normalizeThenSum(terms, eps === undefined ? {} : { eps }) };
    },

    selectGroups: (rewards, want) => selectGroups(rewards, policy, want),

    nextGeneration(rewards, want, batches) {
      if (policy !== "resample") return "train";
      return resampleDecision(rewards.filter(isInformative).length, want, batches, config.zeroStd.maxGenBatches);
    },

    lossOptions: (beta) => lossOptionsOf(config, ctx.maxCompletionTokens, beta),
    loss: (input, beta, normalizer) =>
      replayAwareLoss(input, { ...lossOptionsOf(config, ctx.maxCompletionTokens, beta), normalizer }, shapeOffset),

    observedKl(completions) {
      if (!kl.reference) return undefined;
      let s = 0;
      let n = 0;
      for (const c of completions) {
        if (!c.refLogp) continue;
        c.mask.forEach((m, t) => {
          const w = m * (c.klMask?.[t] ?? 1);
          if (w === 0) return;
          s += w * klTerm(c.oldLogp[t]!, c.refLogp![t]!, controllerEstimator).value;
          n += w;
        });
      }
      return n > 0 ? s / n : undefined;
    },

    nextBeta(beta, observedKl, sequences) {
      if (config.kl.controller === "fixed" || observedKl === undefined) return beta;
      return adaptiveBeta(beta, observedKl, sequences, config.kl.target, config.kl.horizon);
    },
  };
}
