/**
 * Credit after a verified mistake (`algorithm.loss.afterFirstError`). When a checker localises the first wrong
 * step of a completion (`RewardResult.firstErrorEnd`, e.g. "working-steps"), the tokens that start after that step
 * follow from a wrong premise. With an outcome reward they share the completion's (negative) advantage, so GRPO
 * pushes down steps that are right given what came before (`6+13=19` after `3+2=6`), which teaches the model
 * wrong facts. `"mask"` takes those tokens out of the policy loss (loss mask 0); the wrong step itself, and
 * everything before it, keep the completion's advantage. `"train"` (default, the card's sketch) leaves every token
 * in. This is the first-error rule of step-level supervision ("Let's Verify Step by Step", arXiv 2305.20050: a
 * solution is judged by its first wrong step) applied to a program-checked working instead of a learned PRM; the
 * reward itself is unchanged.
 *
 * Token spans come from decoding growing prefixes of the completion's own ids (no re-tokenization), as for KL
 * sections.
 */
import { tokenCharEnds, type Tokenizer } from "../models/tokenizer.js";
import type { RolloutGroup } from "../rollout/types.js";

/**
 * Index of the first token that starts at or after character `end` of the decoded completion (ids.length if none).
 * Never 0: the token holding the mistake keeps its credit even when the checker reports an empty span.
 */
export function firstTokenAfter(ids: readonly number[], tokenizer: Tokenizer, end: number): number {
  const ends = tokenCharEnds(ids, tokenizer);
  // token j starts where token j − 1 ends
  for (let j = 1; j < ids.length; j++) if (ends[j - 1]! >= end) return j;
  return ids.length;
}

/** Masks, in place, the tokens after each completion's first wrong step; records how many on `creditMasked`. */
export function maskAfterFirstError(groups: readonly RolloutGroup[], tokenizer: Tokenizer): void {
  for (const r of groups.flatMap((g) => g.rollouts)) {
    if (r.firstErrorEnd === undefined) continue;
    const from = firstTokenAfter(r.completionIds, tokenizer, r.firstErrorEnd);
    let masked = 0;
    for (let j = from; j < r.lossMask.length; j++) {
      if (r.lossMask[j] !== 0) masked++;
      r.lossMask[j] = 0;
    }
    r.creditMasked = masked;
  }
}
