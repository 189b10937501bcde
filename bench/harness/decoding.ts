/**
 * Baselines at their best decoding. RL sharpens a policy, and a lower sampling temperature sharpens it too, for
 * free; so "RL gained g points" is measured against the start's best decoding, not against one chosen setting.
 * Every arm is evaluated at each decoding of `DECODINGS`: greedy (T 0) and sampled pass@1 at T 0.3, 0.6 and 1.
 * The gain of an arm is its pass@1 at the start's best decoding minus the start's pass@1 there (same decoding on
 * both sides), reported next to the best-against-best difference.
 */

/** One decoding setting: a temperature (0 = greedy, pass@1 from one sample) and its label. */
export interface Decoding {
  label: string;
  temperature: number;
}

/** The decodings every arm of an effect bench is evaluated at. */
export const DECODINGS: readonly Decoding[] = [
  { label: "T0", temperature: 0 },
  { label: "T0.3", temperature: 0.3 },
  { label: "T0.6", temperature: 0.6 },
  { label: "T1", temperature: 1 },
];

/** Greedy and T 1 only: for benches whose every sample is costly to score (timed kernels, long programs). */
export const ENDPOINT_DECODINGS: readonly Decoding[] = DECODINGS.filter(
  (d) => d.temperature === 0 || d.temperature === 1,
);

/** pass@1 of one model at each decoding label. */
export type PassByDecoding = Record<string, number>;

/** The decoding at which `pass` is highest (ties go to the earlier, i.e. cheaper and colder, decoding). */
export function bestDecoding(
  pass: PassByDecoding,
  decodings: readonly Decoding[] = DECODINGS,
): { label: string; value: number } {
  let best: { label: string; value: number } | null = null;
  for (const d of decodings) {
    const v = pass[d.label];
    if (v === undefined || !Number.isFinite(v)) throw new Error(`bestDecoding: no finite pass@1 for ${d.label}`);
    if (best === null || v > best.value) best = { label: d.label, value: v };
  }
  if (best === null) throw new Error("bestDecoding: no decodings");
  return best;
}

/** Gains of an arm over the start: at the start's best decoding, and best against best. */
export function gainOverBest(start: PassByDecoding, arm: PassByDecoding, decodings: readonly Decoding[] = DECODINGS) {
  const s = bestDecoding(start, decodings);
  const a = bestDecoding(arm, decodings);
  return {
    /** The start's best decoding. */
    decoding: s.label,
    /** The arm's pass@1 minus the start's, both at the start's best decoding. */
    atStartBest: arm[s.label]! - s.value,
    /** The arm's best pass@1 minus the start's best pass@1 (each at its own best decoding). */
    bestVsBest: a.value - s.value,
  };
}
