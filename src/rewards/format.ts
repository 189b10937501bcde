/**
 * Tag-format reward ("format-tags", spec §2). Our rule: each listed tag opens and closes exactly once, in the listed
 * order, with non-empty content and only whitespace outside the blocks; tags are case-sensitive and take no
 * attributes. `rule: "closingTags"` is the loose SAKE-paper rule (every closing tag present). Presets reproduce the
 * reference rules of §2.1 (openRs, openRsTagCount, openR1, visualRft, videoChatR1, robotxR1, exgrpo) without
 * regexes that can backtrack; wd1 is the sum of `xiaohangt/wd1` `reward_func.py`'s strict (0.5), soft (0.5) and
 * xmlcount terms on `<reasoning>`/`<answer>`. Departure: openR1 is checked without Python's MULTILINE flag.
 */
import { z } from "zod";
import type { RewardResult, RewardSpec } from "./types.js";
import { countOf } from "./text/region.js";

/** Options of the format reward. */
export const formatOptions = z.object({
  tags: z
    .array(z.string().regex(/^[a-z_][a-z0-9_-]*$/i))
    .min(1)
    .default(["think", "answer"])
    .describe("tags that must each appear exactly once, in this order"),
  thinkOpenedInPrompt: z
    .boolean()
    .default(false)
    .describe("the prompt already opened <think>: prepend it before checking"),
  rule: z
    .enum(["exact", "closingTags"])
    .default("exact")
    .describe("exact: §2.2; closingTags: every closing tag present (SAKE paper)"),
  preset: z
    .enum(["none", "openRs", "openRsTagCount", "openR1", "visualRft", "videoChatR1", "robotxR1", "exgrpo", "wd1"])
    .default("none")
    .describe("reproduce a reference rule (§2.1)"),
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

const afterLast = (text: string, sep: string): string => {
  const i = text.lastIndexOf(sep);
  return i < 0 ? text : text.slice(i + sep.length);
};

/**
 * wd1 (`reward_func.py`): strict_format (0.5) + soft_format (0.5) + xmlcount (4 × 0.125 minus 0.001 per trailing
 * char). Python's `.` does not cross newlines there, so `.*?` is `[^\n]*`; the soft match scans instead of backtracking.
 */
export function wd1Format(text: string): number {
  const strict = /^<reasoning>\n[^\n]*\n<\/reasoning>\n<answer>\n[^\n]*\n<\/answer>\n\n?$/.test(text) ? 0.5 : 0;
  let soft = 0;
  if (text.startsWith("<reasoning>")) {
    const eol = text.indexOf("\n") < 0 ? text.length : text.indexOf("\n");
    let nextClose = -2;
    for (
      let p = text.indexOf("</reasoning>", 11);
      p >= 0 && p + 12 <= eol && soft === 0;
      p = text.indexOf("</reasoning>", p + 1)
    ) {
      let q = p + 12;
      while (q < text.length && /\s/.test(text[q]!)) q++;
      if (!text.startsWith("<answer>", q)) continue;
      if (nextClose !== -1 && nextClose < q + 8) nextClose = text.indexOf("</answer>", q + 8);
      const lineEnd = text.indexOf("\n", q + 8) < 0 ? text.length : text.indexOf("\n", q + 8);
      if (nextClose >= 0 && nextClose + 9 <= lineEnd) soft = 0.5;
    }
  }
  let count = 0;
  if (countOf(text, "<reasoning>\n") === 1) count += 0.125;
  if (countOf(text, "\n</reasoning>\n") === 1) count += 0.125;
  if (countOf(text, "\n<answer>\n") === 1) count += 0.125 - afterLast(text, "\n</answer>\n").length * 0.001;
  if (countOf(text, "\n</answer>") === 1) count += 0.125 - (afterLast(text, "\n</answer>").length - 1) * 0.001;
  return strict + soft + count;
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
    case "wd1":
      return wd1Format(completion);
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
  goldCompletion: (_gold, o) => {
    const text = o.tags.map((t) => `<${t}>\nx\n</${t}>`).join("\n");
    // With the think block opened by the prompt, the completion starts inside it.
    return o.thinkOpenedInPrompt && o.tags[0] === "think" ? text.slice("<think>\n".length) : text;
  },
};
