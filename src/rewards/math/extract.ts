/**
 * Candidate extraction for maths answers (spec §1.1): C0 `\boxed{}`/`\fbox{}` (brace-matched, plus `\boxed 5`),
 * C1 answer phrases ("final answer is", "the answer is", "answer:"), C2 maths environments, C3 bare numbers.
 * `strict` uses C0–C1, `lenient` C0–C3. Within the winning class the rightmost candidate that parses is used.
 * Brace matching is one stack pass over the region, so nested or unclosed braces cost linear time.
 */
import { parseAnswerString, type ParsedAnswer } from "./normalize.js";

/** One extracted candidate. */
export interface Candidate {
  text: string;
  cls: 0 | 1 | 2 | 3;
  start: number;
  end: number;
}

/** How much of the text may be an answer. */
export type ExtractMode = "strict" | "lenient";

/** Most candidates per class that are tried before giving up (bounds work on hostile text). */
const MAX_TRIES = 16;
const MAX_ANSWER = 1_000;

/** For each `{` at index i, the index of its matching `}` (or -1). Escaped `\{` `\}` are not braces. */
function braceMatches(s: string): Int32Array {
  const match = new Int32Array(s.length).fill(-1);
  const stack: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 92 /* \ */) {
      i++;
      continue;
    }
    if (c === 123 /* { */) stack.push(i);
    else if (c === 125 /* } */ && stack.length) match[stack.pop()!] = i;
  }
  return match;
}

/** C0: every box in reading order. */
export function boxedCandidates(s: string): Candidate[] {
  const out: Candidate[] = [];
  let match: Int32Array | null = null;
  for (const cmd of ["\\boxed", "\\fbox"]) {
    for (let i = s.indexOf(cmd); i >= 0; i = s.indexOf(cmd, i + cmd.length)) {
      let j = i + cmd.length;
      const next = s.charCodeAt(j);
      if ((next >= 65 && next <= 90) || (next >= 97 && next <= 122)) continue; // \boxedx is another command
      while (s[j] === " ") j++;
      if (s[j] === "{") {
        match ??= braceMatches(s);
        const k = match[j]!;
        if (k < 0) continue; // unclosed box (truncated completion): skipped
        out.push({ text: s.slice(j + 1, k), cls: 0, start: i, end: k + 1 });
      } else if (j > i + cmd.length) {
        let k = j;
        while (k < s.length && !" \t\n$".includes(s[k]!) && k - j < 64) k++;
        if (k > j) out.push({ text: s.slice(j, k), cls: 0, start: i, end: k });
      }
    }
  }
  return out.sort((a, b) => a.start - b.start);
}

const PHRASES = ["final answer is", "the answer is", "answer:"];

function mathEnvAt(s: string, i: number): { text: string; end: number } | null {
  const pairs: [string, string, boolean][] = [["$$", "$$", true], ["\\[", "\\]", true], ["\\(", "\\)", false], ["$", "$", false]];
  for (const [open, close, multiline] of pairs) {
    if (!s.startsWith(open, i)) continue;
    const j = s.indexOf(close, i + open.length);
    if (j < 0) return null;
    const text = s.slice(i + open.length, j);
    if (!multiline && text.includes("\n")) return null;
    return { text, end: j + close.length };
  }
  return null;
}

/** C1: the text after an answer phrase. */
function phraseCandidates(s: string): Candidate[] {
  const lower = s.toLowerCase();
  const out: Candidate[] = [];
  for (const phrase of PHRASES) {
    for (let i = lower.indexOf(phrase); i >= 0; i = lower.indexOf(phrase, i + phrase.length)) {
      let j = i + phrase.length;
      while (j < s.length && (s[j] === " " || s[j] === ":" || s[j] === "*")) j++;
      const env = mathEnvAt(s, j);
      if (env) {
        out.push({ text: env.text, cls: 1, start: i, end: env.end });
        continue;
      }
      let depth = 0;
      let k = j;
      for (; k < s.length && k - j <= MAX_ANSWER; k++) {
        const c = s[k]!;
        if (c === "(" || c === "[" || c === "{") depth++;
        else if (c === ")" || c === "]" || c === "}") depth--;
        else if (c === "\n") break;
        else if ((c === "," || c === ";") && depth <= 0) break;
        else if (c === "." && (k + 1 === s.length || s[k + 1] === " " || s[k + 1] === "\n")) break;
      }
      const text = s.slice(j, k).replace(/\*+$/, "").trim();
      if (text) out.push({ text, cls: 1, start: i, end: k });
    }
  }
  return out;
}

/** C2: `$…$`, `$$…$$`, `\(…\)`, `\[…\]`. */
function envCandidates(s: string): Candidate[] {
  const out: Candidate[] = [];
  let i = 0;
  while (i < s.length) {
    const d = s.indexOf("$", i);
    const b = s.indexOf("\\", i);
    const k = d < 0 ? b : b < 0 ? d : Math.min(d, b);
    if (k < 0) break;
    const env = mathEnvAt(s, k);
    if (env) {
      out.push({ text: env.text, cls: 2, start: k, end: env.end });
      i = env.end;
    } else i = k + 1;
  }
  return out;
}

const BARE_NUMBER = /-?\d+(?:,\d{3})*(?:\.\d+)?(?:\/\d+)?%?/g;

/** C3: bare numbers (lenient mode only). */
function bareCandidates(s: string): Candidate[] {
  const out: Candidate[] = [];
  for (const m of s.matchAll(BARE_NUMBER)) out.push({ text: m[0], cls: 3, start: m.index, end: m.index + m[0].length });
  return out;
}

/** The chosen answer: the candidate, its parse, and the boxes in reading order (for multi-part golds). */
export interface Extraction {
  candidate: Candidate | null;
  parsed: ParsedAnswer | null;
  boxes: Candidate[];
}

/** Picks the answer: lowest class with candidates; rightmost (then longest) first; first that parses (§1.1 step 3). */
export function extractAnswer(region: string, mode: ExtractMode, decimalComma = false): Extraction {
  const boxes = boxedCandidates(region);
  const lazy: (() => Candidate[])[] = [() => boxes, () => phraseCandidates(region)];
  if (mode === "lenient") lazy.push(() => envCandidates(region), () => bareCandidates(region));
  let first: Candidate | null = null;
  for (const make of lazy) {
    const cands = make();
    const ordered = [...cands].sort((a, b) => b.end - a.end || b.end - b.start - (a.end - a.start));
    for (const c of ordered.slice(0, MAX_TRIES)) {
      const parsed = parseAnswerString(c.text, decimalComma);
      if (parsed) return { candidate: c, parsed, boxes };
    }
    first ??= ordered[0] ?? null;
  }
  return { candidate: first, parsed: null, boxes };
}
