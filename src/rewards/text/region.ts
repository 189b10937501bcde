/**
 * The answer region (G3) and tag-block helpers shared by every text checker. Only the final answer region is
 * graded: the text after the last `</think>`, or the single `<answer>` block. Reasoning, tool outputs and prompt
 * echoes are never read. All scans are indexOf loops (linear time, no regex backtracking).
 *
 * The hedging rule (G5) lives here, once: `answerBlock` is the one place a family reads a tag block from, and under
 * the default policy "single" a completion with two or more blocks of that tag (or an unclosed extra open tag) has no
 * answer at all. "last" is the rule of papers that grade the last block (wd1, VideoChat-R1); it is hackable, because
 * a wrong block followed by a right one is paid, and only presets that reproduce such a paper use it.
 */

/** Where the graded text comes from. */
export type RegionMode = "afterThink" | "answerTag" | "all";

/** Default cap on the graded region (G8). */
export const MAX_REGION_CHARS = 20_000;

/** The graded region, or a reason why there is none. */
export type Region = { text: string } | { text: null; reason: string };

/** How several blocks of one tag are read: "single" (hedging is invalid, G5) or "last" (a paper's rule; hackable). */
export type BlockPolicy = "single" | "last";

/** Options for `answerRegion`. */
export interface RegionOptions {
  mode: RegionMode;
  /** The block policy (default "single"): under it, any region holding two `<answer>` blocks has no answer. */
  blocks?: BlockPolicy;
  /** With "afterThink": a completion without `</think>` has no region. */
  requireThink?: boolean;
  /** The prompt; verbatim echoes of it are removed from the region. */
  prompt?: string;
  /** Longer regions count as unparseable (G8). */
  maxChars?: number;
}

/** Every non-overlapping `<tag>…</tag>` block (content only), in reading order; unclosed opens are ignored. */
export function tagBlocks(text: string, tag: string): string[] {
  const open = `<${tag}>`;
  const close = `</${tag}>`;
  const out: string[] = [];
  let i = text.indexOf(open);
  while (i >= 0) {
    const j = text.indexOf(close, i + open.length);
    if (j < 0) break;
    out.push(text.slice(i + open.length, j));
    i = text.indexOf(open, j + close.length);
  }
  return out;
}

/** Number of occurrences of `needle` in `text`. */
export function countOf(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

/** The content of the single `<tag>` block: exactly one open and one close tag, in order; otherwise null. */
export function singleBlock(text: string, tag: string): string | null {
  const open = `<${tag}>`;
  const close = `</${tag}>`;
  if (countOf(text, open) !== 1 || countOf(text, close) !== 1) return null;
  const i = text.indexOf(open);
  const j = text.indexOf(close);
  return j > i ? text.slice(i + open.length, j) : null;
}

/** Options for `answerBlock`. */
export interface BlockOptions {
  /** The tag name (default "answer"). */
  tag?: string;
  /** Default "single". */
  blocks?: BlockPolicy;
  /** Longer blocks count as unparseable (G8; default MAX_REGION_CHARS). */
  maxChars?: number;
}

/**
 * The content of the graded `<tag>` block under the block policy, or the reason there is none. "single": exactly one
 * open and one close tag, in that order. "last": the last complete block.
 */
export function answerBlock(completion: string, opts: BlockOptions = {}): Region {
  const tag = opts.tag ?? "answer";
  let text: string | null;
  if ((opts.blocks ?? "single") === "last") {
    const blocks = tagBlocks(completion, tag);
    if (blocks.length === 0) return { text: null, reason: `no <${tag}> block` };
    text = blocks[blocks.length - 1]!;
  } else {
    const opens = countOf(completion, `<${tag}>`);
    const closes = countOf(completion, `</${tag}>`);
    if (opens === 0 || closes === 0) return { text: null, reason: `no <${tag}> block` };
    if (opens > 1 || closes > 1) return { text: null, reason: `more than one <${tag}> block` };
    text = singleBlock(completion, tag);
    if (text === null) return { text: null, reason: `</${tag}> before <${tag}>` };
  }
  if (text.length > (opts.maxChars ?? MAX_REGION_CHARS)) return { text: null, reason: `<${tag}> block too long` };
  return { text };
}

/** True when a region holds more than one `<answer>` open or close tag. */
const hedged = (text: string): boolean => countOf(text, "<answer>") > 1 || countOf(text, "</answer>") > 1;

/** The graded region of a completion (G3, D-M12). */
export function answerRegion(completion: string, opts: RegionOptions): Region {
  let text: string;
  if (opts.mode === "answerTag") {
    const block = answerBlock(completion, { blocks: opts.blocks ?? "single", maxChars: Infinity });
    if (block.text === null) return block;
    text = block.text;
  } else if (opts.mode === "afterThink") {
    const end = completion.lastIndexOf("</think>");
    if (end >= 0) text = completion.slice(end + "</think>".length);
    else if (opts.requireThink || completion.includes("<think>"))
      return { text: null, reason: "reasoning never closed (no </think>)" };
    else text = completion;
  } else text = completion;
  if (opts.prompt && opts.prompt.length >= 16 && text.includes(opts.prompt)) text = text.split(opts.prompt).join(" ");
  if (text.length > (opts.maxChars ?? MAX_REGION_CHARS)) return { text: null, reason: "answer region too long" };
  if (opts.mode !== "answerTag" && (opts.blocks ?? "single") === "single" && hedged(text)) {
    return { text: null, reason: "more than one <answer> block" }; // G5 holds for regions that are not a block too
  }
  return { text };
}
