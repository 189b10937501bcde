/**
 * Tag-format reward ("format-tags", spec §2). Our rule: each listed tag opens and closes exactly once, in the listed
 * order, with non-empty content and only whitespace outside the blocks; tags are case-sensitive and take no
 * attributes. `rule: "closingTags"` is the loose SAKE-paper rule (every closing tag present). Presets reproduce the
 * reference rules of §2.1 (openRs, openRsTagCount, openR1, visualRft, videoChatR1, robotxR1, exgrpo) without
 * regexes that can backtrack. Departure: the wd1 preset (per-tag 0.125 counts and length penalty) is not offered;
 * openR1 is checked without Python's MULTILINE flag.
 */
import { z } from "zod";
import type { RewardResult, RewardSpec } from "./types.js";
import { countOf } from "./text/region.js";

/** Options of the format reward. */
export const formatOptions = z.object({
  tags: z.array(z.string().regex(/^[a-z_][a-z0-9_-]*$/i)).min(1).default(["think", "answer"]).describe("tags that must each appear exactly once, in this order"),
  thinkOpenedInPrompt: z.boolean().default(false).describe("the prompt already opened <think>: prepend it before checking"),
  rule: z.enum(["exact", "closingTags"]).default("exact").describe("exact: §2.2; closingTags: every closing tag present (SAKE paper)"),
  preset: z.enum(["none", "openRs", "openRsTagCount", "openR1", "visualRft", "videoChatR1", "robotxR1", "exgrpo"]).default("none").describe("reproduce a reference rule (§2.1)"),
});
/** Parsed format options. */
export type FormatOptions = z.output<typeof formatOptions>;

const isBlank = (s: string): boolean => s.trim().length === 0;

/** §2.2: 1 when every tag opens and closes exactly once, in order, non-empty, with only whitespace around blocks. */
export function exactTagFormat(text: string, tags: readonly string[]): number {
  let pos = 0;
  for (const tag of tags) {
    const open = `<${tag}>`;
    const close = `</${tag}>`;
    if (countOf(text, open) !== 1 || countOf(text, close) !== 1) return 0;
    const i = text.indexOf(open);
    const j = text.indexOf(close);
    if (i < pos || j < i || !isBlank(text.slice(pos, i)) || isBlank(text.slice(i + open.length, j))) return 0;
    pos = j + close.length;
  }
  return isBlank(text.slice(pos)) ? 1 : 0;
}

/** 1 when every closing tag appears at least once. */
export function closingTagsPresent(text: string, tags: readonly string[]): number {
  return tags.every((t) => text.includes(`</${t}>`)) ? 1 : 0;
}

/** `<a>.*?</a>\s*<b>.*?</b>` as a full match (DOTALL), without a backtracking regex. */
function lazyPairFullMatch(text: string, a: string, b: string): number {
  const openA = `<${a}>`;
  const closeA = `</${a}>`;
  const openB = `<${b}>`;
  const closeB = `</${b}>`;
  if (!text.startsWith(openA) || !text.endsWith(closeB)) return 0;
  for (let p = text.indexOf(closeA, openA.length); p >= 0; p = text.indexOf(closeA, p + 1)) {
    let q = p + closeA.length;
    while (q < text.length && /\s/.test(text[q]!)) q++;
    if (text.startsWith(openB, q) && q + openB.length <= text.length - closeB.length) return 1;
  }
  return 0;
}

/** The format score under the given options. */
export function formatScore(completion: string, o: FormatOptions): number {
  const text = o.thinkOpenedInPrompt ? `<think>\n${completion}` : completion;
  switch (o.preset) {
    case "openRs":
      return countOf(completion, "\n</think>\n") === 1 ? 1 : 0;
    case "openRsTagCount":
      return (countOf(completion, "<think>\n") === 1 ? 0.5 : 0) + (countOf(completion, "\n</think>\n") === 1 ? 0.5 : 0);
    case "openR1": {
      if (!text.startsWith("<think>\n") || !text.endsWith("\n</answer>")) return 0;
      const sep = text.indexOf("\n</think>\n<answer>\n", "<think>".length);
      return sep >= 0 && sep + "\n</think>\n<answer>\n".length <= text.length - "\n</answer>".length + 1 ? 1 : 0;
    }
    case "visualRft":
      return lazyPairFullMatch(text, "think", "answer");
    case "videoChatR1":
      return lazyPairFullMatch(text.trim(), "think", "answer");
    case "robotxR1": {
      const one = (t: string): number => (countOf(text, `<${t}>`) === 1 && countOf(text, `</${t}>`) === 1 ? 1 : 0);
      return (one("reasoning") + one("answer")) / 2;
    }
    case "exgrpo":
      return text.startsWith("<think>\n") && text.indexOf("\n</think>", "<think>".length) >= 0 ? 1 : 0;
    case "none":
      return o.rule === "closingTags" ? closingTagsPresent(text, o.tags) : exactTagFormat(text, o.tags);
  }
}

/** "format-tags": the think/answer (or any tag list) format term. */
export const formatTagsReward: RewardSpec<FormatOptions, unknown> = {
  name: "format-tags",
  description: "Tag format: each tag (default think, answer) exactly once, in order, non-empty, nothing outside",
  options: formatOptions,
  exampleGold: null,
  maxScore: 1,
  score({ completion }, o): RewardResult {
    const format = formatScore(completion, o);
    return { score: format, terms: { format } };
  },
  goldCompletion: (_gold, o) => (o.thinkOpenedInPrompt ? "" : "") + o.tags.map((t, i) => (i === 0 && o.thinkOpenedInPrompt && t === "think" ? `reasoning\n</think>` : `<${t}>\nx\n</${t}>`)).join("\n"),
};
