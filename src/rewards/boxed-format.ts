/**
 * "boxed-format": the light format term of the built-in short-answer tasks. 1 when the completion, trimmed, is
 * exactly one `\boxed{…}` with brace-balanced, non-empty content and nothing else; 0 otherwise (two boxes, text
 * around the box, an unclosed box). It reads no gold. The short form suits character-level models, where every
 * character is a sampled token: `\boxed{357}` is 11 tokens where `<answer>\boxed{357}</answer>` is 28.
 * Also exports `boxedSpans`, the brace-matching scan shared with the countdown checker (linear, no regex).
 */
import { z } from "zod";
import { rewards } from "./registry.js";
import type { RewardResult, RewardSpec } from "./types.js";

/** Options of "boxed-format". */
export const boxedFormatOptions = z
  .object({
    workBefore: z
      .boolean()
      .default(false)
      .describe("allow working (any text without a box) before the one box; nothing may follow it"),
  })
  .strict();

/** One `\boxed{…}`: where it starts and ends in the text, and its content. */
export interface BoxedSpan {
  start: number;
  end: number;
  content: string;
}

/** Every brace-matched `\boxed{…}` in reading order; an unclosed box is skipped (it does not match). */
export function boxedSpans(text: string): BoxedSpan[] {
  const out: BoxedSpan[] = [];
  const key = "\\boxed{";
  let i = text.indexOf(key);
  while (i >= 0) {
    let depth = 1;
    let j = i + key.length;
    for (; j < text.length && depth > 0; j++) {
      if (text[j] === "{") depth++;
      else if (text[j] === "}") depth--;
    }
    if (depth !== 0) break;
    out.push({ start: i, end: j, content: text.slice(i + key.length, j - 1) });
    i = text.indexOf(key, j);
  }
  return out;
}

/**
 * 1 when `completion` is exactly one non-empty `\boxed{…}` (whitespace around it allowed); with `workBefore`,
 * text before the box is allowed too, but the box must still end the completion.
 */
export function boxedOnly(completion: string, workBefore = false): { score: number; reason?: string } {
  const text = completion.trim();
  const spans = boxedSpans(text);
  if (spans.length === 0) return { score: 0, reason: "no closed \\boxed{}" };
  if (spans.length > 1 || text.split("\\boxed").length - 1 > 1) return { score: 0, reason: "more than one \\boxed{}" };
  const s = spans[0]!;
  if ((s.start !== 0 && !workBefore) || s.end !== text.length) return { score: 0, reason: "text outside the box" };
  if (s.content.trim() === "") return { score: 0, reason: "empty box" };
  return { score: 1 };
}

/** The registered reward spec. */
export const boxedFormatReward: RewardSpec<z.infer<typeof boxedFormatOptions>, unknown> = {
  name: "boxed-format",
  description: "format term: the completion is exactly one non-empty \\boxed{...} and nothing else",
  options: boxedFormatOptions,
  score: ({ completion }, o): RewardResult => {
    const r = boxedOnly(completion, o.workBefore);
    return { score: r.score, terms: { format: r.score }, ...(r.reason ? { info: { reason: r.reason } } : {}) };
  },
  goldCompletion: () => "\\boxed{42}",
  exampleGold: null,
  maxScore: 1,
};

if (!rewards.has(boxedFormatReward.name)) rewards.register(boxedFormatReward);
