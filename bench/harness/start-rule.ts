/**
 * A start rule for effect benches (docs/benchmarks.md, "Starts"): one rule for every seed, chosen on the `tune` half,
 * instead of one fixed SFT length. SFT lengths are tried in order, and the first whose `tune` figure reaches a
 * threshold is the start. A fixed length can leave one seed near its ceiling (nothing left for RL to show) and another
 * far below it, because the SFT curve of a small model jumps: bench:wd1's sudoku start went from 10% to 68% solved
 * between 800 and 1,000 steps on one seed (docs/diffusion.md, "The start rule"). With a ceiling, a rung that jumps
 * past the band [threshold, ceiling] is refined by bisecting the gap to the rung below it (another seed's 900-step
 * start went from 2% at 800 steps to 54.5%).
 */

/** What the rule chose: the length, what `make` built for it, and the figure of every length it measured. */
export interface StartChoice<T> {
  steps: number;
  start: T;
  /** The `tune` figure per length tried, in order (empty when `threshold` ≤ 0: nothing is measured). */
  tried: Record<number, number>;
}

/**
 * Where the rule refines a jump (`firstReaching`'s `refine`): when the first length reaching the threshold also passes
 * `ceiling`, lengths between it and the one before are tried, halving the gap, down to `minGap` steps.
 */
export interface Refine {
  ceiling: number;
  minGap: number;
}

/**
 * Builds a start for each of `ladder`'s lengths in order and returns the first whose `measure` reaches `threshold`,
 * or the last one when none does. With `threshold` ≤ 0 the first length is taken unmeasured (a fixed length).
 *
 * With `refine`, a length that reaches the threshold but overshoots `refine.ceiling` (the SFT curve jumped past the
 * band between two rungs) is not taken at once: the gap to the rung before is bisected, in multiples of
 * `refine.minGap`, and the shortest length found that reaches the threshold is the start. The search stops early at
 * a length inside [threshold, ceiling]. The first rung is taken as it is (there is no rung below it).
 */
export async function firstReaching<T>(
  ladder: readonly number[],
  threshold: number,
  make: (steps: number) => Promise<T>,
  measure: (start: T) => Promise<number>,
  refine?: Refine,
): Promise<StartChoice<T>> {
  if (ladder.length === 0) throw new Error("firstReaching: the ladder of lengths is empty");
  if (refine && !(refine.minGap >= 1 && refine.ceiling >= threshold))
    throw new Error(`firstReaching: refine needs minGap >= 1 and ceiling >= threshold, got ${JSON.stringify(refine)}`);
  const tried: Record<number, number> = {};
  let chosen: StartChoice<T> | null = null;
  for (const [i, steps] of ladder.entries()) {
    const start = await make(steps);
    chosen = { steps, start, tried };
    if (threshold <= 0) break;
    tried[steps] = await measure(start);
    if (tried[steps]! < threshold) continue;
    if (refine && i > 0 && tried[steps]! > refine.ceiling) chosen = await bisect(ladder[i - 1]!, chosen);
    break;
  }
  return chosen!;

  /** Halves (lo, hi], lo below the threshold and hi (the current choice) above the ceiling; see `refine`. */
  async function bisect(lo: number, hi: StartChoice<T>): Promise<StartChoice<T>> {
    const gap = refine!.minGap;
    for (;;) {
      const mid = Math.round((lo + hi.steps) / 2 / gap) * gap;
      if (mid <= lo || mid >= hi.steps) return hi;
      const start = await make(mid);
      tried[mid] = await measure(start);
      if (tried[mid]! < threshold) lo = mid;
      else if (tried[mid]! > refine!.ceiling) hi = { steps: mid, start, tried };
      else return { steps: mid, start, tried };
    }
  }
}
