/**
 * Side-by-side timing that a slow drift in the machine cannot bias: the arms (rlvr and its peer) run in turns,
 * A B A B ..., so each repetition of one arm has a repetition of the other next to it in time, and the report is the
 * median and the spread of each arm and of the per-turn ratio. Timing all of A, then all of B, lets a neighbour that
 * starts or stops halfway (or a CPU that throttles) land on one side only.
 */

/** The median, extremes and quartiles of some samples. */
export interface Spread {
  n: number;
  median: number;
  min: number;
  max: number;
  /** First and third quartiles (linear interpolation between order statistics). */
  q1: number;
  q3: number;
}

/** The spread of `xs` (at least one sample). */
export function spread(xs: readonly number[]): Spread {
  if (xs.length === 0) throw new RangeError("spread: no samples");
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => {
    const pos = q * (s.length - 1);
    const lo = Math.floor(pos);
    return s[lo]! + (s[Math.min(lo + 1, s.length - 1)]! - s[lo]!) * (pos - lo);
  };
  return { n: s.length, median: at(0.5), min: s[0]!, max: s[s.length - 1]!, q1: at(0.25), q3: at(0.75) };
}

/** One arm's samples in the order taken, with their spread. */
export type ArmSamples = Spread & { samples: number[] };

/**
 * Runs each arm once per turn, in the order given, for `warmup` turns (discarded) and then `reps` turns; each call
 * returns its own measurement (seconds, tokens per second: whatever the arm measures). Resolves to each arm's samples.
 */
export async function interleave<K extends string>(
  arms: Record<K, () => number | Promise<number>>,
  reps: number,
  warmup = 1,
): Promise<Record<K, ArmSamples>> {
  if (!Number.isInteger(reps) || reps < 1)
    throw new RangeError(`interleave: reps must be a positive integer, got ${reps}`);
  const names = Object.keys(arms) as K[];
  const samples = Object.fromEntries(names.map((k) => [k, [] as number[]])) as Record<K, number[]>;
  for (let turn = 0; turn < warmup + reps; turn++) {
    for (const k of names) {
      const value = await arms[k]();
      if (turn >= warmup) samples[k].push(value);
    }
  }
  return Object.fromEntries(names.map((k) => [k, { ...spread(samples[k]), samples: samples[k] }])) as Record<
    K,
    ArmSamples
  >;
}

/**
 * The ratio a / b per turn (the i-th sample of each, taken next to each other) and its spread: steadier than the
 * ratio of the medians when the machine's speed drifts during the run.
 */
export function pairedRatio(a: readonly number[], b: readonly number[]): Spread {
  if (a.length !== b.length) throw new RangeError(`pairedRatio: ${a.length} samples against ${b.length}`);
  return spread(a.map((x, i) => x / b[i]!));
}
