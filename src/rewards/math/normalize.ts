/**
 * Normalisation of one extracted answer string before parsing (spec §1.2): Unicode maths symbols, LaTeX spacing
 * and sizing macros, `\dfrac`/`\tfrac`, trailing punctuation, units, currency and degree marks (recorded so that two
 * different known units fail, D-M9), `\text{}`-like wrappers, "or" lists, choice letters and text answers.
 * Every step is a linear scan or a regex without nested quantifiers, so hostile inputs cannot backtrack.
 * Issue 11: JSON-doubled backslashes are halved, `\\` (matrix rows) survives the spacing rules, a short unknown word
 * in `\text{}` after a number is stripped like a unit, `(b)` is a choice, and "all real numbers" is `(-\infty,\infty)`.
 */
import { MathParseFail, type MathNode } from "./ast.js";
import { parseMath } from "./parse.js";

const UNICODE: Record<string, string> = {
  "\u2212": "-",
  "\u2013": "-",
  "\u00d7": "\\times ",
  "\u00b7": "\\cdot ",
  "\u22c5": "\\cdot ",
  "\u00f7": "\\div ",
  "\u2264": "\\le ",
  "\u2265": "\\ge ",
  "\u2260": "\\ne ",
  "\u03c0": "\\pi ",
  "\u221e": "\\infty ",
  "\u222a": "\\cup ",
  "\u00b1": "\\pm ",
  "\u2213": "\\mp ",
  "\u00b0": "\\circ ",
  "\u2208": "\\in ",
  "\u2205": "\\emptyset ",
  "\u00a0": " ",
  "\u2009": " ",
  "\u202f": " ",
  "\u2061": "",
  "\u200b": "",
};
const UNICODE_RE =
  /[\u2212\u2013\u00d7\u00b7\u22c5\u00f7\u2264\u2265\u2260\u03c0\u221e\u222a\u00b1\u2213\u00b0\u2208\u2205\u00a0\u2009\u202f\u2061\u200b]/g;

/** Known units by canonical name; a unit on both sides must agree (D-M9). Single letters only inside \text{}. */
const UNIT_WORDS: Record<string, string> = {};
function units(canon: string, ...names: string[]): void {
  for (const n of [canon, ...names]) UNIT_WORDS[n] = canon;
}
units("mm", "millimeter", "millimeters", "millimetre", "millimetres");
units("cm", "centimeter", "centimeters", "centimetre", "centimetres");
units("m", "meter", "meters", "metre", "metres");
units("km", "kilometer", "kilometers", "kilometre", "kilometres");
units("in", "inch", "inches");
units("ft", "foot", "feet");
units("yd", "yard", "yards");
units("mi", "mile", "miles");
units("mg", "milligram", "milligrams");
units("g", "gram", "grams");
units("kg", "kilogram", "kilograms", "kilo", "kilos");
units("lb", "lbs", "pound", "pounds");
units("oz", "ounce", "ounces");
units("t", "ton", "tons", "tonne", "tonnes");
units("s", "sec", "secs", "second", "seconds");
units("min", "mins", "minute", "minutes");
units("h", "hr", "hrs", "hour", "hours");
units("day", "days");
units("week", "weeks");
units("month", "months");
units("year", "years", "yr", "yrs");
units("usd", "dollar", "dollars", "$");
units("cent", "cents");
units("eur", "euro", "euros");
units("deg", "degree", "degrees", "\\circ");
units("rad", "radian", "radians");
units("l", "liter", "liters", "litre", "litres");
units("ml", "milliliter", "milliliters", "millilitre", "millilitres");
units("mph");
units("kmh", "km/h");
units("unit", "units", "square units", "sq units", "cubic units");
units("sqcm", "cm^2", "square centimeters");
units("sqm", "m^2", "square meters");
units("sqft", "ft^2", "square feet");
units("sqin", "in^2", "square inches");
units("cucm", "cm^3", "cubic centimeters");
units("cup", "cups");
units("tsp", "teaspoon", "teaspoons");
units("tbsp", "tablespoon", "tablespoons");
units("gal", "gallon", "gallons");
units("qt", "quart", "quarts");
units("pt", "pint", "pints");
units("people", "persons", "students", "apples", "books", "items");
const SINGLE_LETTER_UNITS = new Set(["m", "s", "g", "h", "t", "l"]);
/** Words that are never a unit: stripping them could turn a hedge or a negation into a bare number. */
const NOT_UNITS = new Set([
  "or",
  "and",
  "not",
  "no",
  "nor",
  "but",
  "except",
  "is",
  "are",
  "isnt",
  "never",
  "than",
  "plus",
  "minus",
  "times",
  "none",
  "yes",
  "true",
  "false",
  "either",
  "neither",
  "wrong",
  "incorrect",
  "maybe",
  "approx",
  "about",
  "undefined",
]);

const TEXT_WRAP =
  /\\(?:text|textbf|textit|textrm|textnormal|mbox|mathrm|mathbf|mathit|mathsf|operatorname|boldsymbol|bm)\s*\{([^{}]*)\}/g;
const KNOWN_WORDS = new Set([
  "sin",
  "cos",
  "tan",
  "sec",
  "csc",
  "cot",
  "arcsin",
  "arccos",
  "arctan",
  "sinh",
  "cosh",
  "tanh",
  "sqrt",
  "exp",
  "log",
  "pi",
  "inf",
  "infty",
  "infinity",
  "frac",
  "dfrac",
  "tfrac",
  "cfrac",
  "binom",
  "dbinom",
  "left",
  "right",
  "cdot",
  "times",
  "div",
  "circ",
]);
const TEXT_WORDS = new Set(["yes", "no", "none", "true", "false", "odd", "even", "neither"]);

/** An answer string after normalisation: the string to parse plus what was stripped. */
export interface NormalizedAnswer {
  /** Text to parse as maths. */
  s: string;
  /** Canonical unit stripped from the answer, if any. */
  unit?: string;
}

/** `\\text{ cm}^2`, `\\mbox{meters}`, `\\mathrm{kg}` at the end of an answer. */
const UNIT_WRAP = /\\(?:text|mbox|mathrm|textrm|operatorname)\s*\{\s*([a-zA-Z$ /.]{1,24}?)\s*\}(\^\{?[23]\}?)?\s*$/;

function stripUnitAtEnd(s: string): { s: string; unit?: string } {
  // \text{ cm}^2, \mbox{meters}, \mathrm{kg} at the end.
  const wrapped = UNIT_WRAP.exec(s);
  if (wrapped && wrapped.index > 0) {
    const word = (wrapped[1]!.toLowerCase() + (wrapped[2] ? `^${wrapped[2].replace(/[\^{}]/g, "")}` : "")).trim();
    const unit = UNIT_WORDS[word] ?? UNIT_WORDS[wrapped[1]!.toLowerCase().trim()];
    if (unit) return { s: s.slice(0, wrapped.index), unit };
    // An unknown unit word after a number (`12 \text{ marbles}`): stripped and not recorded, so it never conflicts.
    const before = s.slice(0, wrapped.index).trimEnd();
    const words = wrapped[1]!.toLowerCase().replace(/\./g, " ").trim().split(/\s+/);
    const unitLike = words.length <= 3 && words.every((w) => /^[a-z]{1,16}$/.test(w) && !NOT_UNITS.has(w));
    if (unitLike && /[0-9)}]$/.test(before)) return { s: before };
  }
  // A plain trailing word after a digit or a closing bracket: "12.50 dollars", "5 cm".
  const plain = /([0-9)}])\s*([a-zA-Z]{2,12}(?: [a-zA-Z]{2,8})?)(\^\{?[23]\}?)?\s*$/.exec(s);
  if (plain) {
    const w = plain[2]!.toLowerCase() + (plain[3] ? `^${plain[3].replace(/[\^{}]/g, "")}` : "");
    const unit = UNIT_WORDS[w];
    if (unit && !SINGLE_LETTER_UNITS.has(w)) return { s: s.slice(0, plain.index + 1), unit };
  }
  return { s };
}

/** `0.1\overline{6}` → the exact fraction `\frac{1}{6}` (a repeating decimal is an exact value, not a rounded one). */
function repeatingDecimal(_m: string, int: string, nonRep: string, rep: string): string {
  if (int.length + nonRep.length > 30) return _m;
  const a = BigInt(nonRep.length);
  const nines = 10n ** BigInt(rep.length) - 1n;
  const num = BigInt(int || "0") * 10n ** a * nines + BigInt(nonRep || "0") * nines + BigInt(rep);
  return `\\frac{${num}}{${10n ** a * nines}}`;
}

/**
 * Text copied out of JSON keeps its escapes: `\\frac{1}{2}`. When every run of backslashes has even length and one
 * pair starts a command, every run is halved (single-escaped LaTeX always has an odd run, as in `\begin`).
 */
function undoubleBackslashes(s: string): string {
  if (!s.includes("\\\\") || !/\\\\[a-zA-Z]/.test(s)) return s;
  const runs = s.match(/\\+/g) ?? [];
  if (runs.some((r) => r.length % 2 === 1)) return s;
  return s.replace(/\\+/g, (r) => r.slice(r.length / 2));
}

const SPACING = /\\\\(?:\[[^\]\\]{0,12}\])?|\\[,;: !]|~/g;
/** "percent", "per cent" or `\\text{percent}` / `\\text{\\%}` at the end: a percent sign. */
const PERCENT_WORD = /\s*(?:\b(?:percent|per cent)|\\(?:text|mbox|mathrm)\s*\{\s*(?:percent|per cent|\\?%)\s*\})\s*$/i;

/** Applies the spec's normalisation to an extracted answer (before parsing). */
export function normalizeAnswer(raw: string): NormalizedAnswer {
  let s = undoubleBackslashes(raw).replace(UNICODE_RE, (c) => UNICODE[c] ?? c);
  s = s.replace(/\u221a/g, "\\sqrt ");
  // `\\` (a matrix row, with an optional spacing argument `\\[2pt]`) is kept; `\!` goes;
  // `\,` `\;` `\:` `\ ` `~` are spaces.
  s = s.replace(SPACING, (m) => (m.startsWith("\\\\") ? "\\\\" : m === "\\!" ? "" : " "));
  s = s.replace(/\\(?:dfrac|tfrac|cfrac)/g, "\\frac").replace(/\\(begin|end) {1,8}\{/g, "\\$1{");
  s = s.replace(/\\(?:left|right)\s*([.])?/g, "").replace(/\\(?:displaystyle|textstyle|!)/g, "");
  s = s.replace(/(\d)\{,\}(?=\d{3})/g, "$1");
  if (s.includes("\\overline")) s = s.replace(/(\d{0,30})\.(\d{0,30})\\overline\{(\d{1,12})\}/g, repeatingDecimal);
  s = s.replace(/\*\*/g, "^").replace(PERCENT_WORD, "%").trim();
  // Outer $ ... $ and trailing sentence punctuation.
  while (s.length > 1 && s.startsWith("$") && s.endsWith("$")) s = s.slice(1, -1).trim();
  s = s.replace(/[.\s]+$/, "");
  let unit: string | undefined;
  // Degrees and currency.
  const deg = /(?:\^\s*\{?\s*\\circ\s*\}?|\\degree|\\circ)\s*([CF])?\s*$/.exec(s);
  if (deg) {
    s = s.slice(0, deg.index);
    unit = "deg";
  }
  if (/^\\?\$\s*/.test(s)) {
    s = s.replace(/^\\?\$\s*/, "");
    unit = "usd";
  }
  const u = stripUnitAtEnd(s);
  if (u.unit) {
    if (unit && unit !== u.unit) return { s: u.s.trim(), unit: "mixed" };
    s = u.s.trim();
    unit = u.unit;
  } else s = u.s.trim();
  return unit ? { s, unit } : { s };
}

/** Lower-cased text form for text answers: wrappers and commands removed, whitespace collapsed. */
export function normalizeText(s: string): string {
  let t = s;
  for (let k = 0; k < 3; k++) t = t.replace(TEXT_WRAP, "$1");
  return t
    .replace(/\\[a-zA-Z]+/g, " ")
    .replace(/[{}$\\]/g, "")
    .toLowerCase()
    .replace(/\s+/g, " ")
    .replace(/^[\s.]+|[\s.]+$/g, "");
}

function isTextAnswer(s: string): boolean {
  const plain = s.replace(/\\(?:begin|end)\{[a-zA-Z*]*\}/g, " ").replace(/\\[a-zA-Z]+/g, " ");
  for (const m of plain.matchAll(/[a-zA-Z]{3,}/g)) if (!KNOWN_WORDS.has(m[0])) return true;
  const w = plain.replace(/[^a-zA-Z]/g, "").toLowerCase();
  return (
    TEXT_WORDS.has(w) &&
    plain
      .trim()
      .toLowerCase()
      .replace(/[^a-z]/g, "") === w
  );
}

/** A fully parsed answer: the node plus the unit stripped from it. */
export interface ParsedAnswer {
  node: MathNode;
  unit?: string;
}

/**
 * Normalises and parses one answer string. Returns null when it is outside the grammar (unparseable).
 * Text answers and choice letters come back as `text` / `choice` nodes.
 */
export function parseAnswerString(raw: string, decimalComma = false): ParsedAnswer | null {
  if (raw.length > 1_000) return null; // G8: a maths answer is at most 1,000 chars
  const norm = normalizeAnswer(raw);
  let s = norm.s;
  if (!s) return null;
  // Unwrap a whole-answer \text{...} (possibly nested) before deciding text versus maths.
  for (let k = 0; k < 3; k++) {
    const w = /^\\(?:text|textbf|textit|textrm|mbox|mathrm|mathbf|boxed)\s*\{([^{}]*)\}$/.exec(s);
    if (!w) break;
    s = w[1]!.trim();
  }
  // A capital letter, or a lower-case one in parentheses or before ")": a choice (compared ignoring case).
  const choice = /^\(?\s*([A-Z])\s*\)?\.?$/.exec(s) ?? /^(?:\(\s*([a-z])\s*\)|([a-z])\))$/.exec(s);
  if (choice) {
    return { node: { k: "choice", letter: choice[1] ?? choice[2]! }, ...(norm.unit ? { unit: norm.unit } : {}) };
  }
  if (/^(?:all )?real numbers$|^all reals$/.test(normalizeText(s))) s = "(-\\infty,\\infty)";
  // "x = 1 or x = -1", "2 \text{ or } 3": an "or"/"and" list is a comma list.
  s = s.replace(/\\(?:text|mbox|textrm)\s*\{\s*(?:or|and)\s*\}|\b(?:or|and)\b/g, ",");
  s = s.replace(/\\quad|\\qquad/g, " ");
  if (isTextAnswer(s)) {
    const t = normalizeText(s);
    return t ? { node: { k: "text", s: t } } : null;
  }
  // Units written inside the maths with \text{} elsewhere are not supported: strip remaining empty wrappers.
  s = s.replace(/\\(?:text|mbox)\s*\{\s*\}/g, "");
  try {
    const node = parseMath(s, decimalComma);
    return norm.unit ? { node, unit: norm.unit } : { node };
  } catch (err) {
    if (err instanceof MathParseFail || err instanceof RangeError) return null;
    throw err;
  }
}
