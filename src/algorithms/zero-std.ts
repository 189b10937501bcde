/**
 * Zero-variance group policy (algorithms spec §1.7): the decision and filter functions behind `keep`, `drop` and
 * DAPO's dynamic sampling (`resample`). The generation loop itself lives in the trainer; these functions say which
 * groups are informative, which to keep in generation order, and whether to generate another batch.
 */
import { isZeroStd } from "./advantages.js";
import { ALGORITHM_DEFAULTS } from "./schema.js";

/** A group is informative when it has at least two scored members with non-zero spread. */
export function isInformative(group: readonly (number | null)[]): boolean {
  return group.filter((r) => r !== null).length >= 2 && !isZeroStd(group);
}

/**
 * Indices of the groups that enter the optimizer batch under a policy: `keep` all; `drop` the informative ones;
 * `resample` the first `want` informative ones in generation order (surplus cut, §1.7).
 */
export function selectGroups(
  rewards: readonly (readonly (number | null)[])[],
  policy: "keep" | "drop" | "resample",
  want = Infinity,
): number[] {
  const idx = rewards.map((_, i) => i);
  if (policy === "keep") return idx;
  const informative = idx.filter((i) => isInformative(rewards[i]!));
  return policy === "drop" ? informative : informative.slice(0, want);
}

/** What DAPO's dynamic sampling does next: train, generate another batch, or train on what it has (exhausted). */
export type ResampleDecision = "train" | "generateMore" | "exhausted" | "skipStep";

/**
 * After `batches` generation batches holding `informative` informative groups of `want`: "train" when full,
 * "generateMore" below `maxGenBatches`, else "exhausted" (train on what was collected, log dynamic/exhausted = 1)
 * or "skipStep" when nothing informative was collected.
 */
export function resampleDecision(
  informative: number,
  want: number,
  batches: number,
  maxGenBatches = ALGORITHM_DEFAULTS.zeroStd.maxGenBatches,
): ResampleDecision {
  if (informative >= want) return "train";
  if (batches < maxGenBatches) return "generateMore";
  return informative > 0 ? "exhausted" : "skipStep";
}
