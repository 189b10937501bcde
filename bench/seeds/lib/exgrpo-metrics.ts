/**
 * The pure figures of the `exgrpo` seed system (bench/seeds/exgrpo.ts): each arm's held-out pass@1 at the start's
 * best decoding (bench/harness/decoding.ts), and the one-line rendering of a pass@1 curve.
 */
import { bestDecoding, type PassByDecoding } from "../../harness/decoding.js";

/** One seed's pass@1 of the start and of each arm, all at the start's best decoding. */
export interface SeedRow {
  decoding: string;
  start: number;
  onpolicy: number;
  exgrpo: number;
  control?: number;
}

/** Reads every arm at the start's best decoding (the same decoding on every side of each difference). */
export function minusOnPolicy(
  start: PassByDecoding,
  onpolicy: PassByDecoding,
  exgrpo: PassByDecoding,
  control?: PassByDecoding,
): SeedRow {
  const { label, value } = bestDecoding(start);
  const at = (p: PassByDecoding, arm: string) => {
    const v = p[label];
    if (v === undefined || !Number.isFinite(v)) throw new Error(`exgrpo: ${arm} has no pass@1 at ${label}`);
    return v;
  };
  return {
    decoding: label,
    start: value,
    onpolicy: at(onpolicy, "onpolicy"),
    exgrpo: at(exgrpo, "exgrpo"),
    ...(control ? { control: at(control, "control") } : {}),
  };
}

/** `step:pass` pairs in points, e.g. `0:60 10:34 20:36`. */
export function curveLine(curve: readonly { step: number; pass: number }[]): string {
  return curve.map((c) => `${c.step}:${(c.pass * 100).toFixed(0)}`).join(" ");
}
