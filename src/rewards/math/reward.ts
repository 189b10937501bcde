/**
 * The maths final-answer reward ("math-answer") and its library entry points `verifyMath` (gold first, G1) and
 * `parseAnswer`. Pipeline (spec §1.1): region (G3) → candidates (extract.ts) → normalise and parse
 * (normalize.ts, parse.ts) → compare (compare.ts). An unparseable gold gives `null` (G2, D-M1).
 * Departures: the `openRs` preset reproduces argument swapping, all-box joining and whole-text grading, but not its
 * score of 1.0 for unparseable golds (we keep null); the `exgrpo` region rule is not offered.
 */
import { z } from "zod";
import type { RewardResult, RewardSpec } from "../types.js";
import { answerRegion } from "../text/region.js";
import { show } from "./ast.js";
import { Work } from "./budget.js";
import { compareAnswers, type CompareOptions } from "./compare.js";
import { boxedCandidates, extractAnswer } from "./extract.js";
import { parseAnswerString, type ParsedAnswer } from "./normalize.js";

/** Options of the maths checker; every open decision of spec §1.5 is one field, defaulting to the spec. */
export const mathOptions = z.object({
  mode: z
    .enum(["strict", "lenient"])
    .default("strict")
    .describe("strict: boxes and answer phrases (C0–C1); lenient adds maths environments and bare numbers (C2–C3)"),
  floatRounding: z
    .number()
    .int()
    .min(0)
    .max(15)
    .default(6)
    .describe("decimal places both sides are rounded to when either is a decimal (D-M4)"),
  allowSetRelation: z
    .enum(["never", "unambiguous", "always"])
    .default("unambiguous")
    .describe("when a relation may match an interval (D-M7)"),
  decimalComma: z.boolean().default(false).describe("read 1,5 as 1.5 (otherwise a comma separates list items)"),
  boxed: z
    .enum(["last", "all"])
    .default("last")
    .describe(
      "last: only the last box (joined boxes only for multi-element golds); all: join every box (Open-RS accuracy)",
    ),
  region: z.enum(["afterThink", "answerTag", "all"]).default("afterThink").describe("graded region (G3, D-M12)"),
  requireThink: z.boolean().default(false).describe("a completion without </think> scores 0"),
  legacySwapArgs: z
    .boolean()
    .default(false)
    .describe("compare (pred, gold) as Open-RS did (D-M2); only for reproducing it"),
  maxRegionChars: z.number().int().positive().default(20_000).describe("longer answer regions are unparseable (G8)"),
  preset: z.enum(["none", "openRs"]).default("none").describe("openRs: legacySwapArgs, boxed=all, region=all"),
  unsimplified: z
    .enum(["lenient", "always", "never"])
    .default("lenient")
    .describe(
      "when integrals, limits, determinants and expressions in variables that reduce to a constant are evaluated to " +
        "match a constant gold: lenient = only in lenient mode (evaluation), so training never pays a restated problem",
    ),
});
/** Parsed maths options. */
export type MathOptions = z.output<typeof mathOptions>;

/** Gold of the maths reward: the answer string, or an example with `answer` (and an optional type hint). */
export type MathGold = string | { answer: string; answerType?: string };

const DEFAULTS: MathOptions = mathOptions.parse({});

function applyPreset(o: MathOptions): MathOptions {
  return o.preset === "openRs" ? { ...o, legacySwapArgs: true, boxed: "all", region: "all" } : o;
}

const goldCache = new Map<string, ParsedAnswer | null>();
const goldShown = new WeakMap<ParsedAnswer, string>();

/** `show` of a parsed gold, memoised (the same gold is checked once per sample in its group). */
function showGold(g: ParsedAnswer): string {
  let s = goldShown.get(g);
  if (s === undefined) goldShown.set(g, (s = show(g.node)));
  return s;
}

/** Parses a gold answer (a `\boxed{}` inside it is unwrapped); cached, since a group shares its gold. */
export function parseGold(gold: string, decimalComma = false): ParsedAnswer | null {
  if (gold.length > 2_000) return null; // G8: over the answer cap, and not worth caching
  const key = (decimalComma ? "1" : "0") + gold;
  if (goldCache.has(key)) return goldCache.get(key)!;
  const boxes = boxedCandidates(gold);
  const parsed = parseAnswerString(boxes.length ? boxes[boxes.length - 1]!.text : gold, decimalComma);
  if (goldCache.size > 4_096) goldCache.clear();
  goldCache.set(key, parsed);
  return parsed;
}

/** What `parseAnswer` reports: the extracted text, its class (0 box, 1 phrase, 2 maths env, 3 bare) and parse. */
export interface AnswerParse {
  extracted: string | null;
  candidateClass: number | null;
  parsed: string | null;
  boxes: string[];
  reason?: string;
}

/** Shows what the maths checker extracts from a completion and how it parses (for debugging data). */
export function parseAnswer(text: string, options: Partial<MathOptions> = {}): AnswerParse {
  const o = applyPreset({ ...DEFAULTS, ...options });
  const region = answerRegion(text, { mode: o.region, requireThink: o.requireThink, maxChars: o.maxRegionChars });
  if (region.text === null)
    return { extracted: null, candidateClass: null, parsed: null, boxes: [], reason: region.reason };
  const ex = extractAnswer(region.text, o.mode, o.decimalComma);
  return {
    extracted: ex.candidate?.text ?? null,
    candidateClass: ex.candidate?.cls ?? null,
    parsed: ex.parsed ? show(ex.parsed.node) : null,
    boxes: ex.boxes.map((b) => b.text),
    ...(ex.candidate ? {} : { reason: "no answer candidate" }),
  };
}

/** Outcome of one maths check with diagnostics. */
export interface MathCheck {
  /** null: the gold cannot be parsed (not scorable). */
  correct: boolean | null;
  info: Record<string, unknown>;
}

const multiPart = (p: ParsedAnswer): boolean => {
  const n = p.node;
  return (
    ((n.k === "set" || n.k === "list" || n.k === "tuple") && n.items.length >= 2) ||
    (n.k === "rel" && n.ops.length === 1 && n.ops[0] === "=" && n.items[1]!.k === "pm") ||
    n.k === "pm"
  );
};

/** Runs the full maths check on a completion (or a bare answer when `bareFallback` is set). */
export function checkMath(
  gold: string,
  completion: string,
  options: Partial<MathOptions> = {},
  prompt?: string,
  bareFallback = false,
): MathCheck {
  const o = applyPreset({ ...DEFAULTS, ...options });
  const g = parseGold(gold, o.decimalComma);
  if (!g) return { correct: null, info: { reason: "gold answer cannot be parsed", gold } };
  const unsimplified = o.unsimplified === "always" || (o.unsimplified === "lenient" && o.mode === "lenient");
  const cmp: CompareOptions = { floatRounding: o.floatRounding, allowSetRelation: o.allowSetRelation, unsimplified };
  const region = answerRegion(completion, {
    mode: o.region,
    requireThink: o.requireThink,
    maxChars: o.maxRegionChars,
    ...(prompt ? { prompt } : {}),
  });
  if (region.text === null) return { correct: false, info: { reason: region.reason, goldParsed: showGold(g) } };
  let ex = extractAnswer(region.text, o.mode, o.decimalComma);
  // With an <answer> block as the region, the block itself is the answer when it holds no box or phrase.
  if (!ex.candidate && (bareFallback || o.region === "answerTag"))
    ex = {
      candidate: { text: region.text.trim(), cls: 3, start: 0, end: region.text.length },
      parsed: parseAnswerString(region.text.trim(), o.decimalComma),
      boxes: [],
    };
  if (o.boxed === "all" && ex.boxes.length > 1) {
    const joined = ex.boxes.map((b) => b.text).join(", ");
    ex = {
      ...ex,
      candidate: { text: joined, cls: 0, start: 0, end: 0 },
      parsed: parseAnswerString(joined, o.decimalComma),
    };
  }
  const info: Record<string, unknown> = { extracted: ex.candidate?.text ?? null, goldParsed: showGold(g) };
  if (!ex.parsed)
    return {
      correct: false,
      info: { ...info, reason: ex.candidate ? "answer cannot be parsed" : "no answer candidate" },
    };
  info.predParsed = show(ex.parsed.node);
  // One work budget for the whole check (D-M10): both comparisons below spend from it; info.work reports it.
  const w = new Work();
  let res = o.legacySwapArgs ? compareAnswers(ex.parsed, g, cmp, w) : compareAnswers(g, ex.parsed, cmp, w);
  // D-M11: multi-part golds may be written as several boxes; all boxes joined, so hedging still fails.
  if (!res.equal && o.boxed === "last" && ex.boxes.length > 1 && ex.candidate?.cls === 0 && multiPart(g)) {
    const joined = parseAnswerString(ex.boxes.map((b) => b.text).join(", "), o.decimalComma);
    if (joined) {
      const r2 = compareAnswers(g, joined, cmp, w);
      if (r2.equal) res = { equal: true, rule: `joined-boxes:${r2.rule}`, work: r2.work };
    }
  }
  return { correct: res.equal, info: { ...info, rule: res.rule, work: w.used } };
}

/**
 * True when `prediction` (a completion or a bare answer) matches `gold`. Gold first (G1). An unparseable gold gives
 * false here; use `checkMath` or the "math-answer" reward to see it reported as not scorable.
 */
export function verifyMath(gold: string, prediction: string, options: Partial<MathOptions> = {}): boolean {
  return checkMath(gold, prediction, options, undefined, true).correct === true;
}

const goldText = (g: MathGold): string => (typeof g === "string" ? g : g.answer);

/** "math-answer": 1 when the final answer matches the gold, 0 otherwise, null when the gold cannot be parsed. */
export const mathAnswerReward: RewardSpec<MathOptions, MathGold> = {
  name: "math-answer",
  description:
    "Maths final answer (\\boxed{} or answer phrase after </think>) equals the gold: numbers, LaTeX, expressions, sets, intervals, relations",
  options: mathOptions,
  exampleGold: "\\frac{1}{2}",
  maxScore: 1,
  score({ completion, gold, prompt }, options): RewardResult {
    const res = checkMath(goldText(gold), completion, options, prompt);
    if (res.correct === null) return { score: null, terms: {}, info: res.info };
    const correct = res.correct ? 1 : 0;
    return { score: correct, terms: { correct }, info: res.info };
  },
  goldCompletion: (gold) => `<think>\nWork it out.\n</think>\nThe final answer is $\\boxed{${goldText(gold)}}$.`,
};
