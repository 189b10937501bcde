/**
 * The KL section mask s(i,t) for partial KL (spec §4; SIRL arXiv 2505.11792 eq. 5): with `kl.sections:
 * ["model", "python"]`, s = 1 on tokens whose character span overlaps a `<model>…</model>` or `<python>…</python>`
 * span (tags included) and 0 elsewhere. An unclosed tag runs to the end. With no configured tag present, s = 1
 * everywhere (full KL, the conservative fallback) and the completion is counted as missing.
 * Token spans come from decoding growing prefixes of the completion's own ids (no re-tokenization).
 */
import { tokenCharEnds, type Tokenizer } from "../models/tokenizer.js";
import type { Rollout } from "../rollout/types.js";

/** s(t) per completion token, and whether no section was found. */
export function klSectionMask(
  ids: readonly number[],
  tokenizer: Tokenizer,
  sections: readonly string[],
): { mask: number[]; missing: boolean } {
  const text = tokenizer.decode(ids);
  const spans: Array<[number, number]> = [];
  for (const tag of sections) {
    const open = `<${tag}`;
    const close = `</${tag}>`;
    let at = 0;
    for (;;) {
      const s = text.indexOf(open, at);
      if (s < 0) break;
      const c = text.indexOf(close, s);
      const e = c < 0 ? text.length : c + close.length;
      spans.push([s, e]);
      at = e;
    }
  }
  if (spans.length === 0) return { mask: ids.map(() => 1), missing: true };
  const mask: number[] = [];
  const ends = tokenCharEnds(ids, tokenizer);
  let start = 0;
  for (let j = 0; j < ids.length; j++) {
    const end = ends[j]!;
    // A token overlaps a span; an empty token (start = end) counts when it sits inside one.
    const overlaps = spans.some(([s, e]) => start < e && end > s);
    const emptyInside = start === end && spans.some(([s, e]) => start >= s && start < e);
    mask.push(overlaps || emptyInside ? 1 : 0);
    start = end;
  }
  return { mask, missing: false };
}

/**
 * Section masks of a step's rollouts when the algorithm has partial KL (`sections` non-null), and the share of
 * completions with no section (`kl/sectionMissingFrac`); null sections give no masks (s ≡ 1).
 */
export function sectionMasks(
  rollouts: readonly Rollout[],
  tokenizer: Tokenizer,
  sections: readonly string[] | null,
): { masks: Map<Rollout, number[]>; metrics: Record<string, number> } | null {
  if (!sections) return null;
  let missing = 0;
  const masks = new Map(
    rollouts.map((r) => {
      const s = klSectionMask(r.completionIds, tokenizer, sections);
      if (s.missing) missing++;
      return [r, s.mask] as const;
    }),
  );
  return { masks, metrics: { "kl/sectionMissingFrac": missing / Math.max(1, rollouts.length) } };
}
