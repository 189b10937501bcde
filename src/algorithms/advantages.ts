/**
 * Advantage estimators (algorithms spec §1): pure functions over number arrays in float64, computed once per
 * rollout batch before any split into mini- or micro-batches (§3.1).
 *
 * Input is the step's rewards as groups, `rewards[g][i]` (null = unscorable). Group estimators (zScore, meanOnly,
 * rloo) use each group's scored members; batch estimators (batchNorm, reinforcePlusPlusBaseline) whiten over every
 * scored completion of the batch, as volcengine/verl `masked_whiten` does.
 *
 * Departures, each chosen by the spec:
 * - A group with one scored member gets advantage 0 (verl sets mean 0, std 1 there, so A ≈ r) (§1.1).
 * - σ_g ≤ 1e-8 gives A = 0 exactly rather than (r − μ)/ε (§1.7).
 * - Null rewards are left out of every statistic and get advantage 0; `keep[g][i]` tells the trainer to remove them
 *   from the optimizer batch (§1.6). TRL's nan-aware statistics agree; nansum-based code turns them into 0.
 */
import type { AdvantageOptions, KlInReward } from "./advantage-options.js";
import { ADVANTAGE_DEFAULTS, resolveAdvantageOptions } from "./advantage-options.js";

export type { AdvantageOptions } from "./advantage-options.js";

/** Std below this counts as zero (§1.7). */
export const ZERO_STD = 1e-8;

/**
 * The one zero-variance test (§1.7): a group's scored rewards (nulls left out) have at least two members and a sample
 * standard deviation ≤ ZERO_STD. Every estimator, the group statistics and the keep/drop/resample selection
 * (`isInformative` in zero-std.ts) use it.
 */
export function isZeroStd(group: readonly (number | null)[]): boolean {
  const { n, ss } = moments(group.filter((r): r is number => r !== null));
  return n >= 2 && Math.sqrt(ss / (n - 1)) <= ZERO_STD;
}

/** What `computeAdvantages` returns; nested arrays mirror the input groups. */
export interface AdvantageResult {
  /** A_i per completion (0 for nulls, singletons, zero-std groups). For batch estimators with per-token returns, the mean over its tokens. */
  advantages: number[][];
  /** A(i,t) per model token, only when KL is in the reward with a batch estimator (returns vary along the sequence). */
  tokenAdvantages?: number[][][];
  /** Rewards actually used (after subtracting the KL-in-reward penalty for group estimators); null stays null. */
  rewards: (number | null)[][];
  /** Whether each completion stays in the optimizer batch (false: null reward, or a dropped zero-std group). */
  keep: boolean[][];
  /** Whether each group is zero-std (n_g ≥ 2 and σ_g ≤ 1e-8). */
  zeroStdGroups: boolean[];
  /** Metrics of §9: reward/nullFrac, groups/zeroStdFrac, groups/singletonFrac. */
  metrics: Record<string, number>;
}

/** Mean and sum of squared deviations of the scored values. */
function moments(xs: readonly number[]): { n: number; mean: number; ss: number } {
  const n = xs.length;
  let s = 0;
  for (const x of xs) s += x;
  const mean = n > 0 ? s / n : 0;
  let ss = 0;
  for (const x of xs) ss += (x - mean) * (x - mean);
  return { n, mean, ss };
}

/** Group z-score: (r − μ_g)/(σ_g + ε), σ sample (Bessel) or population (§1.1). */
export function zScore(
  group: readonly (number | null)[],
  opts: { std?: "sample" | "population"; eps?: number } = {},
): number[] {
  const std = opts.std ?? ADVANTAGE_DEFAULTS.std;
  const eps = opts.eps ?? ADVANTAGE_DEFAULTS.eps;
  const scored = group.filter((r): r is number => r !== null);
  const { n, mean, ss } = moments(scored);
  if (n <= 1) return group.map(() => 0);
  const sigma = Math.sqrt(ss / (std === "sample" ? n - 1 : n));
  if (sigma <= ZERO_STD) return group.map(() => 0);
  return group.map((r) => (r === null ? 0 : (r - mean) / (sigma + eps)));
}

/**
 * Group mean subtracted, the whole batch's σ divided out (TRL `scale_rewards="batch"`, after PPO-Lite; §1.1):
 * A_i = (r_i − μ_g)/(σ_B + ε), σ_B over every scored reward of the batch. Not REINFORCE++'s whitening, which
 * subtracts the batch mean. Singleton and zero-std groups get 0, as in `zScore`; σ_B ≤ 1e-8 gives 0 everywhere.
 */
export function zScoreBatchStd(
  groups: readonly (readonly (number | null)[])[],
  opts: { std?: "sample" | "population"; eps?: number } = {},
): number[][] {
  const std = opts.std ?? ADVANTAGE_DEFAULTS.std;
  const eps = opts.eps ?? ADVANTAGE_DEFAULTS.eps;
  const { n, ss } = moments(groups.flat().filter((r): r is number => r !== null));
  const sigma = n > 1 ? Math.sqrt(ss / (std === "sample" ? n - 1 : n)) : 0;
  return groups.map((g) => {
    if (sigma <= ZERO_STD || isZeroStd(g)) return g.map(() => 0);
    return meanOnly(g).map((a) => a / (sigma + eps));
  });
}

/** Mean-only baseline A = r − μ_g (Dr. GRPO, wd1, ExGRPO; §1.2). */
export function meanOnly(group: readonly (number | null)[]): number[] {
  const { n, mean, ss } = moments(group.filter((r): r is number => r !== null));
  if (n <= 1 || Math.sqrt(ss / (n - 1)) <= ZERO_STD) return group.map(() => 0); // exact zeros, not rounding residue
  return group.map((r) => (r === null ? 0 : r - mean));
}

/** Leave-one-out baseline A = n/(n−1)·(r − μ_g) (§1.4). */
export function rloo(group: readonly (number | null)[]): number[] {
  const { n, mean, ss } = moments(group.filter((r): r is number => r !== null));
  if (n <= 1 || Math.sqrt(ss / (n - 1)) <= ZERO_STD) return group.map(() => 0);
  return group.map((r) => (r === null ? 0 : (n / (n - 1)) * (r - mean)));
}

/**
 * Weighted whitening over a batch (verl `masked_whiten`): μ = Σ w R / Σ w, σ² = (Σ w (R − μ)² / Σ w) · N/(N − 1),
 * A = (R − μ)/sqrt(σ² + 1e-8). `units` counts N. Returns zeros when N < 2 (§1.3).
 */
export function whiten(
  values: readonly number[],
  weights: readonly number[],
  units: number,
): { out: number[]; mean: number; variance: number } {
  let sw = 0;
  let swr = 0;
  for (let k = 0; k < values.length; k++) {
    sw += weights[k]!;
    swr += weights[k]! * values[k]!;
  }
  if (units < 2 || sw <= 0) return { out: values.map(() => 0), mean: 0, variance: 0 };
  const mean = swr / sw;
  let sdev = 0;
  for (let k = 0; k < values.length; k++) sdev += weights[k]! * (values[k]! - mean) ** 2;
  const variance = (sdev / sw) * (units / (units - 1));
  const inv = 1 / Math.sqrt(variance + 1e-8);
  return { out: values.map((v) => (v - mean) * inv), mean, variance };
}

/** Per-token returns R(i,t) = Σ_{k≥t} γ^{k−t} u(i,k), u = −β·k1 (+ r_i at the last token) (§1.3). */
export function tokenReturns(
  finalReward: number,
  klPerToken: readonly number[] | undefined,
  beta: number,
  gamma: number,
  length: number,
): number[] {
  const R = new Array<number>(length).fill(0);
  let acc = 0;
  for (let t = length - 1; t >= 0; t--) {
    const u = -beta * (klPerToken?.[t] ?? 0) + (t === length - 1 ? finalReward : 0);
    acc = u + gamma * acc;
    R[t] = acc;
  }
  return R;
}

/** Validates the nested shapes and the null policy; throws naming the problem. */
function checkInput(
  rewards: readonly (readonly (number | null)[])[],
  o: ReturnType<typeof resolveAdvantageOptions>,
): void {
  if (!Array.isArray(rewards as unknown) || rewards.some((g) => !Array.isArray(g as unknown)))
    throw new TypeError("computeAdvantages: rewards must be an array of groups (arrays)");
  rewards.forEach((g, gi) =>
    g.forEach((r, i) => {
      if (r !== null && (typeof r !== "number" || !Number.isFinite(r))) {
        throw new TypeError(
          `computeAdvantages: reward at group ${gi}, completion ${i} is ${String(r)}; use null for unscorable`,
        );
      }
    }),
  );
  checkNullRewards(rewards, o);
  if (o.lengths && (o.lengths.length !== rewards.length || o.lengths.some((l, g) => l.length !== rewards[g]!.length))) {
    throw new TypeError("computeAdvantages: lengths must have the same nested shape as rewards");
  }
}

/**
 * The null-reward policy (§1.6), the one implementation the trainer and `computeAdvantages` share: with
 * `onNull: "error"` any null throws; otherwise more than `maxNullFrac` of the step's completions being null throws
 * (a broken checker, not a hard batch). `context` is added to the message (e.g. the task and the first failure).
 */
export function checkNullRewards(
  rewards: readonly (readonly (number | null)[])[],
  o: { onNull: "exclude" | "error"; maxNullFrac: number; context?: string | undefined },
): void {
  const where = o.context ? ` (${o.context})` : "";
  let total = 0;
  let nulls = 0;
  rewards.forEach((g, gi) =>
    g.forEach((r, i) => {
      total++;
      if (r !== null) return;
      nulls++;
      if (o.onNull === "error") {
        throw new NullRewardError(`unscorable reward at group ${gi}, completion ${i}${where} and onNull is "error"`);
      }
    }),
  );
  if (total > 0 && nulls / total > o.maxNullFrac) {
    const share = `${nulls} of ${total} completions are unscorable`;
    const pct = ((100 * nulls) / total).toFixed(1);
    throw new NullRewardError(
      `${share} (${pct}% > maxNullFrac ${o.maxNullFrac})${where}: the checker is probably broken`,
    );
  }
}

/** Too many (or, with onNull "error", any) unscorable rewards in a step (§1.6). */
export class NullRewardError extends Error {
  override name = "NullRewardError";
}

/** Subtracts β Σ_t k1 from each scored reward (KL in the reward, group estimators; §2.4). */
function penalised(rewards: readonly (readonly (number | null)[])[], kl: KlInReward | undefined): (number | null)[][] {
  if (!kl || kl.beta === 0) return rewards.map((g) => [...g]);
  return rewards.map((g, gi) =>
    g.map((r, i) => (r === null ? null : r - kl.beta * (kl.k1[gi]?.[i] ?? []).reduce((a, b) => a + b, 0))),
  );
}

/**
 * Advantages for one rollout batch. `rewards[g][i]` is completion i of group g (null = unscorable). Options pick
 * the estimator and its knobs (defaults: zScore, sample std, ε 1e-4, zeroStd keep, onNull exclude, maxNullFrac 0.5).
 * Batch estimators with token weighting need `lengths[g][i]` (model tokens with m = 1).
 */
export function computeAdvantages(
  rewards: readonly (readonly (number | null)[])[],
  options: Partial<AdvantageOptions> = {},
): AdvantageResult {
  const o = resolveAdvantageOptions(options);
  checkInput(rewards, o);
  const used =
    o.type === "zScore" || o.type === "meanOnly" || o.type === "rloo"
      ? penalised(rewards, o.klInReward)
      : rewards.map((g) => [...g]);

  // Group statistics (all estimators log them, §1.7).
  const zeroStdGroups: boolean[] = [];
  let multi = 0;
  let singletons = 0;
  for (const g of rewards) {
    if (g.filter((r) => r !== null).length <= 1) singletons++;
    else multi++;
    zeroStdGroups.push(isZeroStd(g));
  }

  let advantages: number[][];
  let tokenAdvantages: number[][][] | undefined;
  switch (o.type) {
    case "zScore":
      advantages =
        o.stdScope === "batch"
          ? zScoreBatchStd(used, { std: o.std, eps: o.eps })
          : used.map((g) => zScore(g, { std: o.std, eps: o.eps }));
      break;
    case "meanOnly":
      advantages = used.map((g) => meanOnly(g));
      break;
    case "rloo":
      advantages = used.map((g) => rloo(g));
      break;
    case "batchNorm":
    case "reinforcePlusPlusBaseline":
      ({ advantages, tokenAdvantages } = batchAdvantages(used, o));
      break;
  }

  const dropZeroStd = o.zeroStd !== "keep" && o.type !== "batchNorm" && o.type !== "reinforcePlusPlusBaseline";
  const keep = rewards.map((g, gi) => g.map((r) => r !== null && !(dropZeroStd && zeroStdGroups[gi])));
  const total = rewards.reduce((a, g) => a + g.length, 0);
  const nulls = rewards.reduce((a, g) => a + g.filter((r) => r === null).length, 0);
  const metrics: Record<string, number> = {
    "reward/nullFrac": total > 0 ? nulls / total : 0,
    "groups/zeroStdFrac": multi > 0 ? zeroStdGroups.filter(Boolean).length / multi : 0,
    "groups/singletonFrac": rewards.length > 0 ? singletons / rewards.length : 0,
  };
  return { advantages, ...(tokenAdvantages ? { tokenAdvantages } : {}), rewards: used, keep, zeroStdGroups, metrics };
}

/** batchNorm (§1.3) and reinforcePlusPlusBaseline (§1.5): returns, then whitening over the whole batch. */
function batchAdvantages(
  rewards: (number | null)[][],
  o: ReturnType<typeof resolveAdvantageOptions>,
): { advantages: number[][]; tokenAdvantages?: number[][][] } {
  const baseline = rewards.map((g) =>
    o.type === "reinforcePlusPlusBaseline" ? moments(g.filter((r): r is number => r !== null)).mean : 0,
  );
  const kl = o.klInReward;
  const perToken = !!kl && kl.beta !== 0;
  const values: number[] = [];
  const weights: number[] = [];
  const where: [number, number, number][] = [];
  let units = 0;

  if (!perToken) {
    // Outcome-only rewards with γ = 1: R(i,t) = r_i on every token, so one unit per completion weighted by L_i
    // (token weighting) or 1 (sequence weighting) gives the same statistics as the per-token form.
    if (o.weighting === "token" && !o.lengths)
      throw new TypeError(`computeAdvantages: ${o.type} with token weighting needs lengths[g][i]`);
    rewards.forEach((g, gi) =>
      g.forEach((r, i) => {
        if (r === null) return;
        const w = o.weighting === "token" ? o.lengths![gi]![i]! : 1;
        values.push(r - baseline[gi]!);
        weights.push(w);
        where.push([gi, i, -1]);
        units += w;
      }),
    );
    const { out } = whiten(values, weights, units);
    const advantages = rewards.map((g) => g.map(() => 0));
    out.forEach((a, k) => (advantages[where[k]![0]]![where[k]![1]] = a));
    return { advantages };
  }

  // KL in the reward: per-token returns over every completion position, weights m(i,t) (or m/L_i per sequence).
  const maskAt = (gi: number, i: number, t: number): number => o.tokenMasks?.[gi]?.[i]?.[t] ?? 1;
  rewards.forEach((g, gi) =>
    g.forEach((r, i) => {
      if (r === null) return;
      const k1 = kl!.k1[gi]?.[i] ?? [];
      const R = tokenReturns(r - baseline[gi]!, k1, kl!.beta, o.gamma, k1.length);
      const Li = R.reduce((a, _, t) => a + maskAt(gi, i, t), 0);
      R.forEach((v, t) => {
        values.push(v);
        weights.push(o.weighting === "token" ? maskAt(gi, i, t) : Li > 0 ? maskAt(gi, i, t) / Li : 0);
        where.push([gi, i, t]);
      });
      units += o.weighting === "token" ? Li : Li > 0 ? 1 : 0;
    }),
  );
  const { out } = whiten(values, weights, units);
  const tokenAdvantages = rewards.map((g, gi) =>
    g.map((r, i) => new Array<number>(r === null ? 0 : (kl!.k1[gi]?.[i]?.length ?? 0)).fill(0)),
  );
  out.forEach((a, k) => {
    const [gi, i, t] = where[k]!;
    tokenAdvantages[gi]![i]![t] = a;
  });
  // Per-completion summary: the masked mean of its token advantages.
  const advantages = tokenAdvantages.map((g, gi) =>
    g.map((ts, i) => {
      let s = 0;
      let n = 0;
      ts.forEach((a, t) => ((s += maskAt(gi, i, t) * a), (n += maskAt(gi, i, t))));
      return n > 0 ? s / n : 0;
    }),
  );
  return { advantages, tokenAdvantages };
}
