/**
 * Step metrics of algorithms spec §9 that are computable from plain arrays: rewards (overall, per group, per
 * term), group shapes, advantages, lengths and the unbiased pass@k of evaluation. Absent inputs give absent keys
 * (never 0), as §9 asks.
 */
import { ZERO_STD } from "./advantages.js";

type Groups<T> = readonly (readonly T[])[];

function meanStd(xs: readonly number[]): { mean: number; std: number } {
  const n = xs.length;
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  const v = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / n;
  return { mean, std: Math.sqrt(v) };
}

/** Sample std (Bessel), 0 for fewer than two values. */
function sampleStd(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  return Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1));
}

/**
 * reward/mean, reward/std (population), reward/groupStdMean (mean over groups of the within-group sample std, TRL
 * reward_std), reward/nullFrac, groups/zeroStdFrac, groups/singletonFrac, and with `correct` (the correctness term
 * per completion, 1 = correct) groups/allCorrectFrac and groups/allWrongFrac; with `terms` (unweighted values by
 * name) reward/<term>/mean and /std.
 */
export function rewardMetrics(
  rewards: Groups<number | null>,
  opts: { terms?: Record<string, Groups<number | null>>; correct?: Groups<number | null> } = {},
): Record<string, number> {
  const out: Record<string, number> = {};
  const all = rewards.flat();
  const scored = all.filter((r): r is number => r !== null);
  if (all.length) out["reward/nullFrac"] = (all.length - scored.length) / all.length;
  if (scored.length) {
    const { mean, std } = meanStd(scored);
    out["reward/mean"] = mean;
    out["reward/std"] = std;
  }
  const groups = rewards.map((g) => g.filter((r): r is number => r !== null));
  const multi = groups.filter((g) => g.length >= 2);
  if (multi.length) {
    out["reward/groupStdMean"] = multi.reduce((a, g) => a + sampleStd(g), 0) / multi.length;
    out["groups/zeroStdFrac"] = multi.filter((g) => sampleStd(g) <= ZERO_STD).length / multi.length;
  }
  if (groups.length) out["groups/singletonFrac"] = groups.filter((g) => g.length <= 1).length / groups.length;
  if (opts.correct) {
    const cs = opts.correct.map((g) => g.filter((c): c is number => c !== null)).filter((g) => g.length > 0);
    if (cs.length) {
      out["groups/allCorrectFrac"] = cs.filter((g) => g.every((c) => c === 1)).length / cs.length;
      out["groups/allWrongFrac"] = cs.filter((g) => g.every((c) => c !== 1)).length / cs.length;
    }
  }
  for (const [name, values] of Object.entries(opts.terms ?? {})) {
    const xs = values.flat().filter((v): v is number => v !== null);
    if (!xs.length) continue;
    const { mean, std } = meanStd(xs);
    out[`reward/${name}/mean`] = mean;
    out[`reward/${name}/std`] = std;
  }
  return out;
}

/** adv/mean, adv/std (population), adv/absMean, adv/min, adv/max over the completions in the loss. */
export function advantageMetrics(advantages: readonly number[]): Record<string, number> {
  if (!advantages.length) return {};
  const { mean, std } = meanStd(advantages);
  return {
    "adv/mean": mean,
    "adv/std": std,
    "adv/absMean": advantages.reduce((a, b) => a + Math.abs(b), 0) / advantages.length,
    "adv/min": Math.min(...advantages),
    "adv/max": Math.max(...advantages),
  };
}

/** length/mean, /min, /max (tokens per completion); with finish reasons terminatedMean, truncatedFrac, errorFrac. */
export function lengthMetrics(
  lengths: readonly number[],
  finish?: readonly ("stop" | "length" | "error")[],
): Record<string, number> {
  if (!lengths.length) return {};
  const out: Record<string, number> = {
    "length/mean": lengths.reduce((a, b) => a + b, 0) / lengths.length,
    "length/min": Math.min(...lengths),
    "length/max": Math.max(...lengths),
  };
  if (finish) {
    const stopped = lengths.filter((_, i) => finish[i] === "stop");
    if (stopped.length) out["length/terminatedMean"] = stopped.reduce((a, b) => a + b, 0) / stopped.length;
    out["length/truncatedFrac"] = finish.filter((f) => f === "length").length / finish.length;
    out["length/errorFrac"] = finish.filter((f) => f === "error").length / finish.length;
  }
  return out;
}

/** Unbiased pass@k from n samples with c correct: 1 − C(n − c, k)/C(n, k); 1 when n − c < k (§9). */
export function passAtK(n: number, c: number, k: number): number {
  if (!(k >= 1 && k <= n && c >= 0 && c <= n)) {
    throw new RangeError(`passAtK: need 1 <= k <= n and 0 <= c <= n, got n=${n} c=${c} k=${k}`);
  }
  if (n - c < k) return 1;
  // Product form avoids huge binomials: C(n−c, k)/C(n, k) = Π_{i=n−c+1}^{n} (1 − k/i).
  let p = 1;
  for (let i = n - c + 1; i <= n; i++) p *= 1 - k / i;
  return 1 - p;
}
