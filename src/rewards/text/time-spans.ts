/**
 * Time spans in answers (spec §5.1, §5.4): reading `a to b` pairs (also `and`, `-`, `–`, s/sec/seconds units,
 * `mm:ss`, `hh:mm:ss`) and the IoU of spans. Three reading policies, chosen by the temporal reward's `spans` option:
 * - "single" (default): the answer holds exactly one span and no other number, so a spray of segments, a chain
 *   `0 - 10 - 20` or a claim such as `IoU = 1.0` next to the span makes the answer invalid;
 * - "union": the answer holds one or more spans and no other number; they are scored as one set (their union), so
 *   spraying segments only lowers the IoU;
 * - "last": the last valid pair, ignoring everything else (VideoChat-R1's rule; hackable: a spray that ends on the
 *   gold earns IoU 1).
 * A pair that touches a larger token (`-5 to 3`, `1e9 to 2e9`, a 5,000-digit number) or is reversed is invalid.
 */

/** A time span in seconds, `[start, end]`. */
export type Span = [number, number];

type SpanList = readonly (readonly [number, number])[];

/** How the spans of an answer are read. */
export type SpanPolicy = "single" | "union" | "last";

/** Most spans read from one answer (G8). */
export const MAX_SPANS = 100;

const MAX_ANSWER_CHARS = 20_000;
const TIME = String.raw`(\d{1,7}(?::\d{1,2}){0,2}(?:\.\d{1,6})?)`;
const UNIT = "(?:seconds|secs|sec|s)";
const SEP = String.raw`(?:to|and|-|\u2013)`;
// Bounded whitespace everywhere: no quantifier can backtrack over long runs.
const WS = "[ \\t]{0,3}";
const PAIR = new RegExp(String.raw`${TIME}${WS}${UNIT}?${WS}${SEP}${WS}${TIME}(?:${WS}${UNIT}\b)?`, "g");

function seconds(t: string): number {
  return t.split(":").reduce((acc, part) => acc * 60 + Number(part), 0);
}

interface PairHit {
  span: Span | null;
  start: number;
  end: number;
}

/** Every pair match, in order; `span` is null when the pair is part of a larger token, reversed or not finite. */
function pairHits(answer: string): PairHit[] {
  const out: PairHit[] = [];
  for (const m of answer.matchAll(PAIR)) {
    const before = answer[m.index - 1] ?? " ";
    const after = answer[m.index + m[0].length] ?? " ";
    const end = m.index + m[0].length;
    // A full stop after the pair ends a sentence unless a digit follows it.
    const glued = /[\da-zA-Z]/.test(after) || (after === "." && /\d/.test(answer[end + 1] ?? ""));
    if (/[\d.\-a-zA-Z]/.test(before) || glued) {
      out.push({ span: null, start: m.index, end });
      continue;
    }
    const a = seconds(m[1]!);
    const b = seconds(m[2]!);
    out.push({ span: Number.isFinite(a) && Number.isFinite(b) && a <= b ? [a, b] : null, start: m.index, end });
  }
  return out;
}

/**
 * All spans of an answer that is a list of spans in words: every pair valid, at most `MAX_SPANS`, and no digit
 * outside the pairs. Otherwise the reason it is not such a list.
 */
export function parseTimeSpans(answer: string): { spans: Span[] } | { error: string } {
  if (answer.length > MAX_ANSWER_CHARS) return { error: "answer too long" };
  const hits = pairHits(answer);
  if (hits.length === 0) return { error: "no time span" };
  if (hits.length > MAX_SPANS) return { error: `more than ${MAX_SPANS} spans` };
  if (hits.some((h) => h.span === null)) return { error: "a malformed or reversed span" };
  let rest = "";
  let pos = 0;
  for (const h of hits) {
    rest += answer.slice(pos, h.start);
    pos = h.end;
  }
  rest += answer.slice(pos);
  if (/\d/.test(rest)) return { error: "a number outside the spans" };
  return { spans: hits.map((h) => h.span!) };
}

/** The last valid pair, ignoring everything else (VideoChat-R1's rule; hackable), or null. */
export function lastTimeSpan(answer: string): Span | null {
  if (answer.length > MAX_ANSWER_CHARS) return null;
  const hits = pairHits(answer);
  return hits.length ? hits[hits.length - 1]!.span : null;
}

/** The spans of an answer under a policy ("single" gives exactly one), or the reason there are none. */
export function readSpans(answer: string, policy: SpanPolicy): { spans: Span[] } | { error: string } {
  if (policy === "last") {
    const span = lastTimeSpan(answer);
    return span ? { spans: [span] } : { error: "no valid last span" };
  }
  const res = parseTimeSpans(answer);
  if ("error" in res) return res;
  const n = res.spans.length;
  if (policy === "single" && n !== 1) return { error: `${n} spans where exactly one is expected` };
  return res;
}

/** The one span of a single-span answer (or, with "last", the last valid pair); null if there is none. */
export function parseTimeRange(answer: string, policy: "single" | "last" = "single"): Span | null {
  const res = readSpans(answer, policy);
  return "error" in res ? null : res.spans[0]!;
}

/** Temporal IoU of two segments (hull as union, which equals the union when they overlap). */
export function temporalIou(gold: readonly [number, number], pred: readonly [number, number]): number {
  const inter = Math.max(0, Math.min(gold[1], pred[1]) - Math.max(gold[0], pred[0]));
  const union = Math.max(gold[1], pred[1]) - Math.min(gold[0], pred[0]);
  return union > 0 ? inter / union : 0;
}

/** Sorts spans and merges those that overlap or touch. */
export function mergeSpans(spans: SpanList): Span[] {
  const sorted = [...spans].sort((a, b) => a[0] - b[0]);
  const out: Span[] = [];
  for (const [s, e] of sorted) {
    const last = out[out.length - 1];
    if (last && s <= last[1]) last[1] = Math.max(last[1], e);
    else out.push([s, e]);
  }
  return out;
}

/** Total length of a list of spans. */
export const spansLength = (spans: SpanList): number => spans.reduce((s, [a, b]) => s + b - a, 0);

/** IoU of two span lists after merging each: total intersection / total union. */
export function spansIou(gold: SpanList, pred: SpanList): number {
  const g = mergeSpans(gold);
  const p = mergeSpans(pred);
  let inter = 0;
  for (const [a, b] of g) for (const [c, d] of p) inter += Math.max(0, Math.min(b, d) - Math.max(a, c));
  const union = spansLength(g) + spansLength(p) - inter;
  return union > 0 ? inter / union : 0;
}
