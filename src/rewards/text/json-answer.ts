/**
 * Strict reading of a JSON answer (boxes, tracks): the whole answer, trimmed, must be exactly one JSON value. Nothing
 * is cut out of surrounding text, so `[…] // IoU = 1.0, verified` and `{"boxes": [], "iou": 1}` are not lists. The
 * only repairs are the ones a caller names, each documented in docs/rewards.md:
 * - `singleQuotes`: single quotes become double quotes (spec §4.1 step 1, the Visual-RFT repair);
 * - `truncated`: a list cut off mid-item is closed after its last complete `},` (D-B9; pays truncated outputs).
 * `slice-brackets` is not a repair but the lenient parser of the Visual-RFT preset (first `[` to last `]`), kept so
 * that preset can reproduce the paper; it reads lists out of prose and is hackable.
 *
 * Numbers are checked too: a number token of more than `MAX_NUMBER_DIGITS` digits is refused (a 5,000-digit
 * coordinate is not a coordinate, and `1e400` reads as Infinity, which callers reject as non-finite). Object keys are
 * checked by `plainKeys`: reserved names (`__proto__`, `constructor`, `prototype`) and keys that collide after
 * lowercasing invalidate the object.
 */

/** A repair the strict parser may apply (documented in docs/rewards.md). */
export type JsonRepair = "singleQuotes" | "truncated";

/** Strict: exactly one JSON value. `visual-rft-lenient`: the paper's first-`[`-to-last-`]` slice (hackable). */
export type JsonParser = "strict" | "visual-rft-lenient";

/** Longest digit run accepted in a JSON answer. */
export const MAX_NUMBER_DIGITS = 20;

/** Default cap on a JSON answer's length (G8). */
export const MAX_JSON_CHARS = 20_000;

/** Options of `parseJsonAnswer`. */
export interface JsonAnswerOptions {
  parser?: JsonParser;
  repairs?: readonly JsonRepair[];
  maxChars?: number;
}

const LONG_DIGITS = new RegExp(String.raw`\d{${MAX_NUMBER_DIGITS + 1}}`);

function tryParse(text: string): { value: unknown } | null {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return null;
  }
}

/** The candidate texts, in the order they are tried. */
function candidates(answer: string, o: JsonAnswerOptions): string[] {
  let body = answer.trim();
  if (o.parser === "visual-rft-lenient") {
    const start = body.indexOf("[");
    const end = body.lastIndexOf("]");
    if (start < 0) return [];
    body = end > start ? body.slice(start, end + 1) : body.slice(start);
  }
  const repairs = o.repairs ?? [];
  const out = [body];
  if (repairs.includes("singleQuotes")) out.push(body.replace(/'/g, '"'));
  const cut = body.lastIndexOf("},");
  if (repairs.includes("truncated") && body.startsWith("[") && cut > 0) {
    const closed = body.slice(0, cut + 1) + "]";
    out.push(closed);
    if (repairs.includes("singleQuotes")) out.push(closed.replace(/'/g, '"'));
  }
  return out;
}

/** Reads one JSON value from the whole answer (after the named repairs), or says why it cannot. */
export function parseJsonAnswer(answer: string, o: JsonAnswerOptions = {}): { value: unknown } | { error: string } {
  if (answer.length > (o.maxChars ?? MAX_JSON_CHARS)) return { error: "answer too long" };
  if (LONG_DIGITS.test(answer)) return { error: `a number with more than ${MAX_NUMBER_DIGITS} digits` };
  for (const text of candidates(answer, o)) {
    const parsed = tryParse(text);
    if (parsed) return parsed;
  }
  return { error: "not exactly one JSON value" };
}

const RESERVED = new Set(["__proto__", "constructor", "prototype"]);

/**
 * The entries of a plain JSON object with lowercased keys, or null when it is not a plain object, has a reserved
 * key, or has two keys that are equal after lowercasing (which one would be read is then a guess).
 */
export function plainKeys(item: unknown): Map<string, unknown> | null {
  if (typeof item !== "object" || item === null || Array.isArray(item)) return null;
  const out = new Map<string, unknown>();
  for (const [k, v] of Object.entries(item)) {
    const key = k.toLowerCase();
    if (RESERVED.has(key) || out.has(key)) return null;
    out.set(key, v);
  }
  return out;
}

/** True for a finite number (JSON `1e400` parses to Infinity and is refused here). */
export const finiteNumber = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x);

/** True when the text holds a digit run longer than `MAX_NUMBER_DIGITS`. */
export const hasLongNumber = (text: string): boolean => LONG_DIGITS.test(text);
