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

const ENV_PAIRS: [string, string, boolean][] = [
  ["$$", "$$", true],
  ["\\[", "\\]", true],
  ["\\(", "\\)", false],
  ["$", "$", false],
];

/**
 * Finds maths environments starting at given offsets. The next-close position per delimiter is cached, so a scan
 * over many unclosed opens stays linear (a hostile `\(\(\(…` would otherwise be quadratic).
 */
class EnvFinder {
  private readonly from = new Map<string, number>();
  private readonly found = new Map<string, number>();
  constructor(private readonly s: string) {}

  private nextClose(close: string, start: number): number {
    const f = this.found.get(close);
    if (f !== undefined && start >= this.from.get(close)! && (f < 0 || start <= f)) return f;
    const r = this.s.indexOf(close, start);
    this.from.set(close, start);
    this.found.set(close, r);
    return r;
  }

  at(i: number): { text: string; end: number } | null {
    const s = this.s;
    for (const [open, close, multiline] of ENV_PAIRS) {
      if (!s.startsWith(open, i)) continue;
      const j = this.nextClose(close, i + open.length);
      if (j < 0) return null;
      const text = s.slice(i + open.length, j);
      if (!multiline && (text.includes("\n") || text.length > MAX_ANSWER)) return null;
      if (text.length > MAX_ANSWER * 20) return null;
      return { text, end: j + close.length };
    }
    return null;
  }
}

/** Removes answer phrases that open a phrase candidate ("The final answer is 18" → "18"); at most 3 in a row. */
function stripPhrases(text: string): string {
  for (let n = 0; n < 3; n++) {
    const m = /^(?:the\s+)?(?:final\s+answer\s+is|answer\s+is|answer\s*:)[\s:*]*/i.exec(text);
    if (!m || m[0].length === 0) break;
    text = text.slice(m[0].length).trim();
  }
  const env = /^\$([^$]{1,1000})\$$|^\\\(([^]{1,1000}?)\\\)$/.exec(text);
  return env ? (env[1] ?? env[2]!).trim() : text;
}

/** C1: the text after an answer phrase. */
function phraseCandidates(s: string): Candidate[] {
  const lower = s.toLowerCase();
  const envs = new EnvFinder(s);
  const out: Candidate[] = [];
  for (const phrase of PHRASES) {
    const starts: number[] = [];
    for (let i = lower.indexOf(phrase); i >= 0; i = lower.indexOf(phrase, i + phrase.length)) starts.push(i);
    // Only the rightmost occurrences can win (§1.1 step 3); this bounds work on text that repeats the phrase.
    for (const i of starts.slice(-2 * MAX_TRIES)) {
      let j = i + phrase.length;
      while (j < s.length && (s[j] === " " || s[j] === ":" || s[j] === "*")) j++;
      const env = envs.at(j);
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
      // "Final Answer: The final answer is 18": the answer follows the innermost phrase (issue 11).
      const text = stripPhrases(s.slice(j, k).replace(/\*+$/, "").trim());
      if (text) out.push({ text, cls: 1, start: i, end: k });
    }
  }
  return out;
}

/** C2: `$…$`, `$$…$$`, `\(…\)`, `\[…\]`. */
function envCandidates(s: string): Candidate[] {
  const out: Candidate[] = [];
  const envs = new EnvFinder(s);
  let i = 0;
  let d = -2;
  let b = -2;
  while (i < s.length) {
    // Next "$" and next "\\" after i, recomputed only when passed (keeps the scan linear).
    if (d !== -1 && d < i) d = s.indexOf("$", i);
    if (b !== -1 && b < i) b = s.indexOf("\\", i);
    const k = d < 0 ? b : b < 0 ? d : Math.min(d, b);
    if (k < 0) break;
    const env = envs.at(k);
    if (env) {
      out.push({ text: env.text, cls: 2, start: k, end: env.end });
      i = env.end;
    } else i = k + 1;
  }
  return out;
}

/** Digits with thousands separators: a comma, a thin space (`\,`, `\ `, U+2009, U+202F) or one space (`2 500`). */
const BARE_NUMBER = /-?(?:\d{1,3}(?:(?:,|\\,|\\ |[ \u2009\u202f])\d{3}(?!\d))+|\d+)(?:\.\d+)?(?:\/\d+)?%?/g;

/** C3: bare numbers (lenient mode only). */
function bareCandidates(s: string): Candidate[] {
  const out: Candidate[] = [];
  // Only the rightmost numbers can win: scan the last 4,000 chars, starting after a non-digit.
  let from = Math.max(0, s.length - 4_000);
  while (from > 0 && from < s.length && /[\d.,\-]/.test(s[from]!)) from++;
  for (const m of s.slice(from).matchAll(BARE_NUMBER))
    out.push({ text: m[0], cls: 3, start: from + m.index, end: from + m.index + m[0].length });
  return out.slice(-2 * MAX_TRIES);
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
  if (mode === "lenient")
    lazy.push(
      () => envCandidates(region),
      () => bareCandidates(region),
    );
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
