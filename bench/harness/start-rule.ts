/**
 * A start rule for effect benches (docs/benchmarks.md, "Starts"): one rule for every seed, chosen on the `tune` half,
 * instead of one fixed SFT length. SFT lengths are tried in order, and the first whose `tune` figure reaches a
 * threshold is the start. A fixed length can leave one seed near its ceiling (nothing left for RL to show) and another
 * far below it, because the SFT curve of a small model jumps: bench:wd1's sudoku start went from 10% to 68% solved
 * between 800 and 1,000 steps on one seed (docs/diffusion.md, "The start rule").
 */

/** What the rule chose: the length, what `make` built for it, and the figure of every length it measured. */
export interface StartChoice<T> {
  steps: number;
  start: T;
  /** The `tune` figure per length tried, in order (empty when `threshold` ≤ 0: nothing is measured). */
  tried: Record<number, number>;
}

/**
 * Builds a start for each of `ladder`'s lengths in order and returns the first whose `measure` reaches `threshold`,
 * or the last one when none does. With `threshold` ≤ 0 the first length is taken unmeasured (a fixed length).
 */
export async function firstReaching<T>(
  ladder: readonly number[],
  threshold: number,
  make: (steps: number) => Promise<T>,
  measure: (start: T) => Promise<number>,
): Promise<StartChoice<T>> {
  if (ladder.length === 0) throw new Error("firstReaching: the ladder of lengths is empty");
  const tried: Record<number, number> = {};
  let chosen: StartChoice<T> | null = null;
  for (const steps of ladder) {
    const start = await make(steps);
    chosen = { steps, start, tried };
    if (threshold <= 0) break;
    tried[steps] = await measure(start);
    if (tried[steps]! >= threshold) break;
  }
  return chosen!;
}
