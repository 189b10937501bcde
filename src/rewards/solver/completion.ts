/**
 * Reading a SIRL completion (rewards spec §9): `<think>…</think><model>…</model><code>…</code>` with configurable
 * tag names. Only the code section is ever run, and only its single fenced block tagged `lp` or `js`; an LP written
 * inside the reasoning is never read (§9.4 #6). Model text is data: nothing here evaluates it.
 */

/** Tag names of the three sections (SIRL itself uses "python" for the code tag). */
export interface SirlTags {
  think: string;
  model: string;
  code: string;
}

/** Default tag names. */
export const DEFAULT_TAGS: SirlTags = { think: "think", model: "model", code: "code" };

/** The program found in the code section. */
export type CodeBlock = { ok: true; lang: "lp" | "js"; source: string } | { ok: false; reason: string };

function count(text: string, tag: string): number {
  let n = 0;
  for (let i = text.indexOf(tag); i >= 0; i = text.indexOf(tag, i + tag.length)) n++;
  return n;
}

function open(t: string): string {
  return `<${t}>`;
}
function close(t: string): string {
  return `</${t}>`;
}

/** The text between the single open/close pair of `tag`, or null when the pair is missing or repeated. */
export function section(text: string, tag: string): string | null {
  if (count(text, open(tag)) !== 1 || count(text, close(tag)) !== 1) return null;
  const a = text.indexOf(open(tag)) + open(tag).length;
  const b = text.indexOf(close(tag));
  return b >= a ? text.slice(a, b) : null;
}

/** Our format rule: each pair exactly once, in order think → model → code, each non-empty. 1 or 0. */
export function formatStrict(text: string, tags: SirlTags): number {
  const parts = [tags.think, tags.model, tags.code];
  let last = -1;
  for (const t of parts) {
    const body = section(text, t);
    if (body === null || body.trim() === "") return 0;
    const at = text.indexOf(open(t));
    if (at < last) return 0;
    last = text.indexOf(close(t));
  }
  return 1;
}

/**
 * The reference's graded format score in [0, 2] (`Cardinal-Operations/SIRL` stage-1 reward, preset `sirlCode`):
 * starts at 2; −1/8 for each think/model tag whose count is not 1, −1/4 for each code tag whose count is not 1, and
 * −1/3 for each order fault (think before model, model before code, nothing after the code section).
 */
export function formatGraded(text: string, tags: SirlTags): number {
  let s = 2;
  for (const t of [tags.think, tags.model]) for (const x of [open(t), close(t)]) if (count(text, x) !== 1) s -= 1 / 8;
  for (const x of [open(tags.code), close(tags.code)]) if (count(text, x) !== 1) s -= 1 / 4;
  const pos = (x: string) => text.indexOf(x);
  if (!(pos(close(tags.think)) >= 0 && pos(close(tags.think)) < pos(open(tags.model)))) s -= 1 / 3;
  if (!(pos(close(tags.model)) >= 0 && pos(close(tags.model)) < pos(open(tags.code)))) s -= 1 / 3;
  const end = text.lastIndexOf(close(tags.code));
  if (end < 0 || text.slice(end + close(tags.code).length).trim() !== "") s -= 1 / 3;
  return Math.max(0, s);
}

const FENCE = /```[ \t]*([A-Za-z]*)[ \t]*\r?\n([\s\S]*?)```/g;

/** The single fenced `lp` or `js` block of the code section. */
export function codeBlock(text: string, tags: SirlTags): CodeBlock {
  const body = section(text, tags.code);
  if (body === null) return { ok: false, reason: `no single <${tags.code}> section` };
  const blocks = [...body.matchAll(FENCE)];
  if (blocks.length !== 1)
    return { ok: false, reason: `expected one fenced block in <${tags.code}>, found ${blocks.length}` };
  const lang = (blocks[0]![1] ?? "").toLowerCase();
  const source = blocks[0]![2] ?? "";
  if (lang === "lp") return { ok: true, lang: "lp", source };
  if (lang === "js" || lang === "javascript") return { ok: true, lang: "js", source };
  return { ok: false, reason: `the fenced block must be tagged lp or js, got "${lang}"` };
}
