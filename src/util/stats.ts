/** Small statistics over plain number arrays, used by metrics, benchmarks and advantage estimators. */

/** Arithmetic mean; NaN for an empty array. */
export function mean(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

/** Standard deviation; `sample` divides by n-1 (Bessel), `population` by n. Empty or n=1 sample gives 0. */
export function std(xs: readonly number[], form: "sample" | "population" = "population"): number {
  const n = xs.length;
  const d = form === "sample" ? n - 1 : n;
  if (d <= 0) return 0;
  const m = mean(xs);
  let s = 0;
  for (const x of xs) s += (x - m) * (x - m);
  return Math.sqrt(s / d);
}

/** Median; NaN for an empty array. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Minimum and maximum of a non-empty array. */
export function minMax(xs: readonly number[]): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (const x of xs) {
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  return [lo, hi];
}
