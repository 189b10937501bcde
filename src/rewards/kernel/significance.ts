/**
 * When is a measured speed-up real? The pay rule of the kernel speed reward (docs/solver-and-kernel.md, "Paying only
 * for a real speed-up").
 *
 * Every timed iteration calls three kernels on identical inputs, in a shuffled order: the baseline, a second copy of
 * the baseline in its own isolate (the control), and the candidate. Two noise sources make equal kernels look
 * different: per-call jitter (scheduler stalls, cache state), which a confidence interval captures, and a
 * per-isolate bias (JIT tier, code placement), which no number of iterations removes. The rule answers both:
 *
 * 1. Ratios r1 = b1 / c and r2 = b2 / c per iteration (b1 baseline, b2 control, c candidate). The statistic is the
 *    smaller of median(r1) and median(r2): the candidate must beat both baseline isolates. Medians, not means:
 *    robust to stalls, free of the mean-of-ratios bias (E[b/c] > 1 for equal noisy times), and symmetric under
 *    swapping the kernels (median(1/r) = 1/median(r) for odd n).
 * 2. A seeded percentile bootstrap over iterations (pairs resampled together) gives a one-sided lower bound of that
 *    statistic at `confidence`, and the mirror upper bound of the larger median.
 * 3. The dead band: B = max(1 + deadBand, exp |ln median(b1 / b2)|). The second term is the baseline-against-baseline
 *    difference measured in this evaluation, on this machine, under this load.
 * 4. Verdict: "faster" when lower > B, "slower" when upper < 1 / B, otherwise "noise" (paid 0).
 *
 * For an equal kernel to be paid, its isolate must beat both baseline isolates by more than the band and by more
 * than the baselines differ from each other, with the interval's whole lower tail above it.
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
  /** Lower bound of min(median b1/c, median b2/c) at `confidence`. */
  lower: number;
  /** Upper bound of max(median b1/c, median b2/c) at `confidence`. */
  upper: number;
  /** Median speed-up of the candidate over each baseline isolate. */
  medianVsBaseline: number;
  medianVsControl: number;
  /** Baseline against control: median b1 / b2 (1 for a perfectly quiet machine). */
  control: number;
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
 * Applies the pay rule to paired times (ns) of the baseline, the control (a second baseline isolate) and the
 * candidate. `seed` seeds the bootstrap, so the same times always give the same verdict.
 */
export function decideSpeedup(
  b1: readonly number[],
  b2: readonly number[],
  c: readonly number[],
  o: SignificanceOptions,
  seed: number,
): Significance {
  const n = c.length;
  if (n < 2 || b1.length !== n || b2.length !== n) {
    throw new RangeError(`decideSpeedup: need ≥ 2 paired times, got ${n}`);
  }
  if (!(o.confidence > 0.5 && o.confidence < 1)) {
    throw new RangeError(`confidence must be in (0.5, 1), got ${o.confidence}`);
  }
  if (!(o.deadBand >= 0)) throw new RangeError(`deadBand must be ≥ 0, got ${o.deadBand}`);
  const pos = (x: number) => Math.max(x, 1); // a time at or under the call overhead counts as 1 ns (flagged elsewhere)
  const r1 = Float64Array.from(c, (ci, i) => pos(b1[i]!) / pos(ci));
  const r2 = Float64Array.from(c, (ci, i) => pos(b2[i]!) / pos(ci));
  const q = Float64Array.from(c, (_, i) => pos(b1[i]!) / pos(b2[i]!));
  const medianVsBaseline = medianInPlace(r1.slice(), n);
  const medianVsControl = medianInPlace(r2.slice(), n);
  const control = medianInPlace(q.slice(), n);

  const rng = new Rng(seed);
  const resamples = Math.max(100, Math.floor(o.resamples));
  const lows = new Float64Array(resamples);
  const highs = new Float64Array(resamples);
  const s1 = new Float64Array(n);
  const s2 = new Float64Array(n);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < n; i++) {
      const j = rng.int(n); // iterations are resampled whole, keeping each one's three calls together
      s1[i] = r1[j]!;
      s2[i] = r2[j]!;
    }
    const m1 = medianInPlace(s1, n);
    const m2 = medianInPlace(s2, n);
    lows[r] = Math.min(m1, m2);
    highs[r] = Math.max(m1, m2);
  }
  lows.sort();
  highs.sort();
  const tail = Math.floor((1 - o.confidence) * resamples);
  const lower = lows[tail]!;
  const upper = highs[resamples - 1 - tail]!;
  const band = Math.max(1 + o.deadBand, Math.exp(Math.abs(Math.log(control))));
  const verdict = lower > band ? "faster" : upper < 1 / band ? "slower" : "noise";
  return {
    verdict,
    lower,
    upper,
    medianVsBaseline,
    medianVsControl,
    control,
    band,
    confidence: o.confidence,
    resamples,
    iterations: n,
  };
}
