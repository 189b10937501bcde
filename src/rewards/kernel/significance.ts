/**
 * When is a measured speed-up real? The pay rule of the kernel speed reward (docs/solver-and-kernel.md, "Paying only
 * for a real speed-up").
 *
 * Every timed iteration calls four kernels on identical inputs, in a shuffled order: the baseline and a second copy
 * of it (the control), and the candidate in two isolates of its own. Two noise sources make equal kernels look
 * different: per-call jitter (scheduler stalls, cache state), which a confidence interval captures, and a
 * per-isolate bias (JIT tier, code placement, a collector pause that lands in one isolate), which no number of
 * iterations removes. One isolate per side cannot tell a biased isolate from a real difference, on either side, so
 * each side has two. The rule:
 *
 * 1. Ratios r_ij = b_i / c_j per iteration for every baseline isolate i and candidate isolate j. The statistic for
 *    "faster" is the smallest median(r_ij): every candidate isolate must beat every baseline isolate. Medians, not
 *    means: robust to stalls, free of the mean-of-ratios bias (E[b/c] > 1 for equal noisy times), and symmetric
 *    under swapping the kernels (median(1/r) = 1/median(r) for odd n).
 * 2. A seeded percentile bootstrap over iterations (each round's calls resampled together) gives a one-sided lower
 *    bound of that statistic at `confidence`, and the mirror upper bound of the largest median.
 * 3. The dead band: B = max(1 + deadBand, exp |ln median(b1 / b2)|, exp |ln median(c1 / c2)|): the isolate-against-
 *    isolate differences measured in this evaluation, on this machine, under this load, on each side.
 * 4. Verdict: "faster" when lower > B, "slower" when upper < 1 / B, otherwise "noise" (paid 0).
 *
 * For an equal kernel to be paid (or penalised), both of its isolates must beat (or lose to) both baseline isolates
 * by more than the band, and by more than either side's isolates differ from each other, with the interval's whole
 * tail beyond it. Found in CI: with one candidate isolate, a disguised copy of the baseline was called "slower"
 * (median 0.79) on a loaded 2-core machine, once in 24 evaluations.
 */
import { Rng } from "../../util/rng.js";

/** Parameters of the pay rule (named in the reward options). */
export interface SignificanceOptions {
  /** One-sided confidence of the bootstrap bound, e.g. 0.99. */
  confidence: number;
  /** Smallest relative speed-up ever paid: speed-ups inside [1/(1+band), 1+band] are noise. */
  deadBand: number;
  /** Bootstrap resamples. */
  resamples: number;
}

/** Defaults of the pay rule. */
export const DEFAULT_SIGNIFICANCE: SignificanceOptions = { confidence: 0.95, deadBand: 0.1, resamples: 2000 };

/** The outcome of the pay rule. */
export interface Significance {
  verdict: "faster" | "slower" | "noise";
  /** Lower bound of the smallest median b_i / c_j over every pair of isolates, at `confidence`. */
  lower: number;
  /** Upper bound of the largest median b_i / c_j, at `confidence`. */
  upper: number;
  /** Median speed-up over each baseline isolate (the smaller over the candidate isolates). */
  medianVsBaseline: number;
  medianVsControl: number;
  /** Baseline against control: median b1 / b2 (1 for a perfectly quiet machine). */
  control: number;
  /** Candidate isolate against candidate isolate: median c1 / c2 (1 with one candidate isolate). */
  candidateGap: number;
  /** The band B applied (a ratio ≥ 1 + deadBand). */
  band: number;
  confidence: number;
  resamples: number;
  iterations: number;
}

/** The median of the first `len` entries of `xs`, reordering them (quickselect, O(len) expected). */
export function medianInPlace(xs: Float64Array, len: number): number {
  if (len < 1) return Number.NaN;
  const h = len >> 1;
  const hi = select(xs, 0, len - 1, h);
  if (len % 2) return hi;
  let lo = -Infinity;
  for (let i = 0; i < h; i++) if (xs[i]! > lo) lo = xs[i]!; // after select, xs[0..h) holds the h smallest
  return (lo + hi) / 2;
}

/** Hoare-style selection: places the k-th smallest of xs[l..r] at index k and returns it. */
function select(xs: Float64Array, l: number, r: number, k: number): number {
  while (r > l) {
    const pivot = xs[(l + r) >> 1]!;
    let i = l;
    let j = r;
    while (i <= j) {
      while (xs[i]! < pivot) i++;
      while (xs[j]! > pivot) j--;
      if (i <= j) {
        const t = xs[i]!;
        xs[i] = xs[j]!;
        xs[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) r = j;
    else if (k >= i) l = i;
    else break;
  }
  return xs[k]!;
}

/** Median of an array (not modified). */
export function median(xs: readonly number[]): number {
  return medianInPlace(Float64Array.from(xs), xs.length);
}

/**
 * Applies the pay rule to paired times (ns): `baselines` holds the two baseline isolates (the baseline and the
 * control), `candidates` the candidate's isolates (two in the harness; one is accepted, and then no candidate gap
 * enters the band). Iteration i of every list was measured in the same shuffled round. `seed` seeds the bootstrap,
 * so the same times always give the same verdict.
 */
export function decideSpeedup(
  baselines: readonly [readonly number[], readonly number[]],
  candidates: readonly (readonly number[])[],
  o: SignificanceOptions,
  seed: number,
): Significance {
  const [b1, b2] = baselines;
  const n = candidates[0]?.length ?? 0;
  if (n < 2 || b1.length !== n || b2.length !== n || candidates.some((c) => c.length !== n)) {
    throw new RangeError(`decideSpeedup: need ≥ 2 paired times in every list, got ${n}`);
  }
  if (!(o.confidence > 0.5 && o.confidence < 1)) {
    throw new RangeError(`confidence must be in (0.5, 1), got ${o.confidence}`);
  }
  if (!(o.deadBand >= 0)) throw new RangeError(`deadBand must be ≥ 0, got ${o.deadBand}`);
  const pos = (x: number) => Math.max(x, 1); // a time at or under the call overhead counts as 1 ns (flagged elsewhere)
  const ratio = (num: readonly number[], den: readonly number[]) =>
    Float64Array.from(den, (d, i) => pos(num[i]!) / pos(d));
  // One ratio series per (baseline isolate, candidate isolate) pair: baseline-major, so pairs[j] is b1 / c_j.
  const pairs = [b1, b2].flatMap((b) => candidates.map((c) => ratio(b, c)));
  const medians = pairs.map((r) => medianInPlace(r.slice(), n));
  const k = candidates.length;
  const medianVsBaseline = Math.min(...medians.slice(0, k));
  const medianVsControl = Math.min(...medians.slice(k));
  const control = medianInPlace(ratio(b1, b2), n);
  const candidateGap = k > 1 ? medianInPlace(ratio(candidates[0]!, candidates[1]!), n) : 1;

  const rng = new Rng(seed);
  const resamples = Math.max(100, Math.floor(o.resamples));
  const lows = new Float64Array(resamples);
  const highs = new Float64Array(resamples);
  const picked = pairs.map(() => new Float64Array(n));
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < n; i++) {
      const j = rng.int(n); // iterations are resampled whole, keeping each round's calls together
      for (let q = 0; q < pairs.length; q++) picked[q]![i] = pairs[q]![j]!;
    }
    let lo = Infinity;
    let hi = -Infinity;
    for (const s of picked) {
      const m = medianInPlace(s, n);
      if (m < lo) lo = m;
      if (m > hi) hi = m;
    }
    lows[r] = lo;
    highs[r] = hi;
  }
  lows.sort();
  highs.sort();
  const tail = Math.floor((1 - o.confidence) * resamples);
  const lower = lows[tail]!;
  const upper = highs[resamples - 1 - tail]!;
  const gap = (x: number) => Math.exp(Math.abs(Math.log(x)));
  const band = Math.max(1 + o.deadBand, gap(control), gap(candidateGap));
  const verdict = lower > band ? "faster" : upper < 1 / band ? "slower" : "noise";
  return {
    verdict,
    lower,
    upper,
    medianVsBaseline,
    medianVsControl,
    control,
    candidateGap,
    band,
    confidence: o.confidence,
    resamples,
    iterations: n,
  };
}
