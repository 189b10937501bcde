/**
 * The figures of the `openrs` and `drgrpo` seed systems, computed from the per-step logs of their RL arms
 * (bench/seeds/lib/openrs-job.ts): pure functions, unit-tested in test/bench/seeds-openrs.test.ts and
 * seeds-drgrpo.test.ts.
 *
 * - Length over a window: the mean of a per-step series (null = that step had no completion of the kind) over the
 *   first or the last `w` steps; growth is last minus first.
 * - Peak: the first evaluation step (after the start) with the highest held-out pass@1, which is the checkpoint
 *   keep-best must have kept (it replaces `best` only on a strict improvement).
 * - Separation: two arms' per-seed figures are separated when every seed of one lies above every seed of the other
 *   (the difference is outside the seed spread), and the per-seed difference has one sign.
 */

/** Mean of the non-null values among `series[from..to)`; NaN when there are none. */
export function windowMean(series: readonly (number | null)[], from: number, to: number): number {
  const xs = series.slice(Math.max(0, from), Math.max(0, to)).filter((x): x is number => x !== null && !isNaN(x));
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN;
}

/** Mean over the first `w` entries, the last `w` entries, and growth = last − first. */
export function growth(series: readonly (number | null)[], w: number): { first: number; last: number; growth: number } {
  if (!(w >= 1)) throw new Error(`growth: window must be >= 1, got ${w}`);
  const first = windowMean(series, 0, w);
  const last = windowMean(series, series.length - w, series.length);
  return { first, last, growth: last - first };
}

/** The peak of an evaluation history: the first step after the start with the highest pass@1. */
export function peakOf(evals: readonly { step: number; pass: number }[]): { step: number; pass: number } {
  const after = evals.filter((e) => e.step > 0);
  if (after.length === 0) throw new Error("peakOf: no evaluation after the start");
  return after.reduce((best, e) => (e.pass > best.pass ? e : best));
}

/** How the evaluation history ends relative to its peak. */
export interface PeakReport {
  peakStep: number;
  peakPass: number;
  lastStep: number;
  lastPass: number;
  startPass: number;
  /** Peak pass@1 minus the last evaluation's (0 when the last is the peak). */
  dropAfterPeak: number;
  /** Whether keep-best's step is the peak's step. */
  keepBestIsPeak: boolean;
}

/** The peak against the last evaluation, and whether keep-best's checkpoint is the peak. */
export function peakReport(
  evals: readonly { step: number; pass: number }[],
  best: { step: number } | null,
): PeakReport {
  const peak = peakOf(evals);
  const last = evals[evals.length - 1]!;
  const start = evals.find((e) => e.step === 0);
  return {
    peakStep: peak.step,
    peakPass: peak.pass,
    lastStep: last.step,
    lastPass: last.pass,
    startPass: start ? start.pass : NaN,
    dropAfterPeak: peak.pass - last.pass,
    keepBestIsPeak: best !== null && best.step === peak.step,
  };
}

/** Per-seed `a − b`, and whether the two arms' seeds do not overlap with `a` above (`aAbove`) or below. */
export function separation(
  a: readonly number[],
  b: readonly number[],
): { diffs: number[]; aAbove: boolean; aBelow: boolean } {
  if (a.length !== b.length || a.length === 0) throw new Error("separation: need the same seeds in both arms");
  return {
    diffs: a.map((x, i) => x - b[i]!),
    aAbove: Math.min(...a) > Math.max(...b),
    aBelow: Math.max(...a) < Math.min(...b),
  };
}

/** A length series printed every `every` steps (for the readable log), e.g. `12.1 14.0 …`; `-` where null. */
/**
 * Logs a title, then one sparkline per arm of its mean completion length of one kind (`correctLen` or `wrongLen`),
 * labels padded to one width.
 */
export function logLengths(
  log: (line: string) => void,
  title: string,
  arms: readonly (readonly [string, { steps_: readonly { correctLen: number | null; wrongLen: number | null }[] }])[],
  field: "correctLen" | "wrongLen",
  every = 10,
): void {
  log(title);
  const width = Math.max(...arms.map(([label]) => label.length));
  for (const [label, arm] of arms)
    log(
      `  ${label.padEnd(width)} ${sparkline(
        arm.steps_.map((st) => st[field]),
        every,
      )}`,
    );
}

export function sparkline(series: readonly (number | null)[], every: number): string {
  const out: string[] = [];
  for (let i = 0; i < series.length; i += every) {
    const m = windowMean(series, i, i + every);
    out.push(isNaN(m) ? "-" : m.toFixed(1));
  }
  return out.join(" ");
}
