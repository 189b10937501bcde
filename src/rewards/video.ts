/**
 * VideoChat-R1 rewards (spec §5): temporal grounding ("temporal-iou"), tracking ("tracking-iou"), multiple choice
 * ("video-mcq"), grounded QA ("grounded-qa"); each sums its terms with weight 1, as `OpenGVLab/VideoChat-R1`
 * `grpo_tasks.py` does. Caption recall is model-judged in the paper: it is offered only as a pluggable judge
 * (`makeCaptionRecallReward`), marked `modelJudged`, and not registered by default.
 * Departures: zero-length gold segments/glue give null (the reference gives 1.0); tracking excludes frame 0 (its box
 * is in the prompt); MCQ takes exactly one option (the reference takes the first capital letter anywhere).
 */
import { z } from "zod";
import type { RewardResult, RewardSpec } from "./types.js";
import { countOf, singleBlock, tagBlocks } from "./text/region.js";
import { exactTagFormat } from "./format.js";
import { boxIou, type Box } from "./boxes.js";

const TIME = String.raw`(\d{1,7}(?::\d{1,2}){0,2}(?:\.\d{1,6})?)`;
// Bounded whitespace everywhere: no quantifier can backtrack over long runs.
const PAIR = new RegExp(String.raw`${TIME}[ \t]{0,3}(?:seconds|secs|sec|s)?[ \t]{0,3}(?:to|and|-|\u2013)[ \t]{0,3}${TIME}(?:[ \t]{0,3}(?:seconds|secs|sec|s)\b)?`, "g");

function seconds(t: string): number {
  return t.split(":").reduce((acc, part) => acc * 60 + Number(part), 0);
}

/** The last time pair `a to b` (also `and`, `-`, `–`, s/sec units, mm:ss) with 0 <= a <= b; null if none. */
export function parseTimeRange(answer: string): [number, number] | null {
  if (answer.length > 20_000) return null;
  let last: [number, number] | null = null;
  for (const m of answer.matchAll(PAIR)) {
    const before = answer[m.index - 1] ?? " ";
    const after = answer[m.index + m[0].length] ?? " ";
    if (/[\d.\-a-zA-Z]/.test(before) || /[\d.a-zA-Z]/.test(after)) {
      last = null; // "-5 to 3", "1e9 to 2e9": part of a larger token, so the last pair is not a valid one
      continue;
    }
    const a = seconds(m[1]!);
    const b = seconds(m[2]!);
    last = Number.isFinite(a) && Number.isFinite(b) && a <= b ? [a, b] : null;
  }
  return last;
}

/** Temporal IoU of two segments (hull as union, which equals the union when they overlap). */
export function temporalIou(gold: readonly [number, number], pred: readonly [number, number]): number {
  const inter = Math.max(0, Math.min(gold[1], pred[1]) - Math.max(gold[0], pred[0]));
  const union = Math.max(gold[1], pred[1]) - Math.min(gold[0], pred[0]);
  return union > 0 ? inter / union : 0;
}

const thinkOption = z.boolean().default(true).describe("the format term needs <think> before <answer> (false: the answer may come directly)");

/** Options of the temporal grounding reward. */
export const temporalOptions = z.object({ requireThink: thinkOption });

/** "temporal-iou": format + temporal IoU of the last time pair in the last <answer> block. */
export const temporalIouReward: RewardSpec<z.output<typeof temporalOptions>, { segment: [number, number]; duration?: number }> = {
  name: "temporal-iou",
  description: "VideoChat-R1 temporal grounding: format + IoU of the predicted time span ('a to b' in <answer>) with the gold segment",
  options: temporalOptions,
  exampleGold: { segment: [12.5, 20], duration: 60 },
  maxScore: 2,
  score({ completion, gold }, o): RewardResult {
    const [s, e] = gold.segment;
    if (!(Number.isFinite(s) && Number.isFinite(e) && e > s)) return { score: null, terms: {}, info: { reason: "zero-length or invalid gold segment" } };
    const format = exactTagFormat(completion, o.requireThink ? ["think", "answer"] : ["answer"]);
    const blocks = tagBlocks(completion, "answer");
    const range = blocks.length ? parseTimeRange(blocks[blocks.length - 1]!) : null;
    const tiou = range ? temporalIou(gold.segment, range) : 0;
    return { score: format + tiou, terms: { format, tiou }, info: { range } };
  },
  goldCompletion: (g) => `<think>\nThe event happens then.\n</think>\n<answer>${g.segment[0]} to ${g.segment[1]}</answer>`,
};

function parseJsonList(answer: string): unknown[] | null {
  const a = answer.indexOf("[");
  const b = answer.lastIndexOf("]");
  if (a < 0 || b < a) return null;
  try {
    const v: unknown = JSON.parse(answer.slice(a, b + 1));
    return Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

const isBoxLike = (b: unknown): b is number[] => Array.isArray(b) && b.length === 4 && b.every((x) => typeof x === "number" && Number.isFinite(x));
const positiveArea = (b: readonly number[]): boolean => b[0]! < b[2]! && b[1]! < b[3]!;

/** Options of the tracking reward. */
export const trackingOptions = z.object({ requireThink: thinkOption });

/** Gold of the tracking reward: one box per sampled frame (frame 0 is given in the prompt). */
export interface TrackingGold {
  boxes: number[][];
  absent?: boolean[];
}

/** "tracking-iou": format + mean per-frame box IoU over frames 1..N−1. */
export const trackingIouReward: RewardSpec<z.output<typeof trackingOptions>, TrackingGold> = {
  name: "tracking-iou",
  description: "VideoChat-R1 tracking: format + mean box IoU over frames 1..N-1 of a list of exactly N boxes in <answer>",
  options: trackingOptions,
  exampleGold: { boxes: [[10, 10, 30, 30], [12, 10, 32, 30], [14, 11, 34, 31], [16, 12, 36, 32]] },
  maxScore: 2,
  score({ completion, gold }, o): RewardResult {
    const n = gold.boxes.length;
    const frames = gold.boxes.map((b, i) => i).filter((i) => i > 0 && !gold.absent?.[i] && isBoxLike(gold.boxes[i]) && positiveArea(gold.boxes[i]!));
    if (frames.length === 0) return { score: null, terms: {}, info: { reason: "no scorable gold frame after frame 0" } };
    const answer = singleBlock(completion, "answer");
    const list = answer === null ? null : parseJsonList(answer);
    const valid = list !== null && list.length === n && list.every(isBoxLike);
    const staticBaseline = isBoxLike(gold.boxes[0]) ? frames.reduce((s, i) => s + boxIou(gold.boxes[0] as Box, gold.boxes[i] as Box), 0) / frames.length : 0;
    if (!valid) return { score: 0, terms: { format: 0, trackIou: 0 }, info: { reason: "answer is not a list of exactly N boxes", staticBaseline } };
    const format = exactTagFormat(completion, o.requireThink ? ["think", "answer"] : ["answer"]);
    const boxes = list as number[][];
    const trackIou = frames.reduce((s, i) => s + (positiveArea(boxes[i]!) ? boxIou(boxes[i] as Box, gold.boxes[i] as Box) : 0), 0) / frames.length;
    return { score: format + trackIou, terms: { format, trackIou }, info: { frames: frames.length, staticBaseline } };
  },
  goldCompletion: (g) => `<think>\nFollow the object.\n</think>\n<answer>${JSON.stringify(g.boxes)}</answer>`,
};

const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const normOption = (s: string): string => s.normalize("NFKC").toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();

/** §5.3: the one option chosen in an answer (a letter token or the full option text), or null. */
export function parseChoice(answer: string, options: readonly string[]): string | null {
  let s = answer.trim().replace(/^(?:the answer is|the correct answer is|answer\s*:|option)\s*/i, "").trim();
  s = s.replace(/^(?:option)\s*/i, "").trim();
  if (s.length > 2_000) return null;
  const m = /^\(?([A-Z])(?:\)|\.|:|\b)[ \t]*([\s\S]*)$/.exec(s);
  if (m) {
    const letter = m[1]!;
    const idx = LETTERS.indexOf(letter);
    const rest = m[2]!.trim();
    if (rest === "" && idx < options.length) return letter;
    if (idx < options.length && normOption(rest) === normOption(options[idx]!)) return letter;
    // Not a letter answer ("A bird" starts with an article): fall through to the full option text.
  }
  const n = normOption(s);
  if (!n) return null;
  const hits = options.map((o, i) => (normOption(o) === n ? LETTERS[i]! : null)).filter((x) => x !== null);
  return hits.length === 1 ? hits[0]! : null;
}

/** Gold of the multiple-choice reward. */
export interface ChoiceGold {
  answer: string;
  options: string[];
}

/** Options of the multiple-choice reward. */
export const mcqOptions = z.object({ requireThink: thinkOption });

function choiceAccuracy(completion: string, gold: ChoiceGold): number | null {
  const idx = LETTERS.indexOf(gold.answer.trim().replace(/[().]/g, ""));
  if (idx < 0 || idx >= gold.options.length) return null;
  const answer = singleBlock(completion, "answer");
  return answer !== null && parseChoice(answer, gold.options) === LETTERS[idx] ? 1 : 0;
}

/** "video-mcq": format + accuracy of exactly one chosen option. */
export const videoMcqReward: RewardSpec<z.output<typeof mcqOptions>, ChoiceGold> = {
  name: "video-mcq",
  description: "VideoChat-R1 multiple choice: format + exactly one option (letter or full option text) in <answer>",
  options: mcqOptions,
  exampleGold: { answer: "B", options: ["a cat", "a dog", "a bird", "a fish"] },
  maxScore: 2,
  score({ completion, gold }, o): RewardResult {
    const accuracy = choiceAccuracy(completion, gold);
    if (accuracy === null) return { score: null, terms: {}, info: { reason: "gold letter outside the options" } };
    const format = exactTagFormat(completion, o.requireThink ? ["think", "answer"] : ["answer"]);
    return { score: format + accuracy, terms: { format, accuracy } };
  },
  goldCompletion: (g) => `<think>\nLooking at the video.\n</think>\n<answer>${g.answer}</answer>`,
};

/** Parses a glue list `[(s,e), …]` of number pairs with 0 <= s <= e; null when it is not such a literal. */
export function parseGlue(text: string): [number, number][] | null {
  const t = text.trim();
  if (t.length > 20_000 || !/^[\s\[\](),\d.eE+-]*$/.test(t)) return null;
  let v: unknown;
  try {
    v = JSON.parse(t.replace(/\(/g, "[").replace(/\)/g, "]"));
  } catch {
    return null;
  }
  if (!Array.isArray(v) || v.length > 100) return null;
  const out: [number, number][] = [];
  for (const p of v) {
    if (!Array.isArray(p) || p.length !== 2 || !p.every((x) => typeof x === "number" && Number.isFinite(x))) return null;
    if (p[0] < 0 || p[0] > p[1]) return null;
    out.push([p[0], p[1]]);
  }
  return out;
}

function merge(spans: readonly [number, number][]): [number, number][] {
  const sorted = [...spans].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [s, e] of sorted) {
    const last = out[out.length - 1];
    if (last && s <= last[1]) last[1] = Math.max(last[1], e);
    else out.push([s, e]);
  }
  return out;
}

const total = (spans: readonly [number, number][]): number => spans.reduce((s, [a, b]) => s + b - a, 0);

/** IoU of two span lists after merging each: total intersection / total union. */
export function spansIou(gold: readonly [number, number][], pred: readonly [number, number][]): number {
  const g = merge(gold);
  const p = merge(pred);
  let inter = 0;
  for (const [a, b] of g) for (const [c, d] of p) inter += Math.max(0, Math.min(b, d) - Math.max(a, c));
  const union = total(g) + total(p) - inter;
  return union > 0 ? inter / union : 0;
}

/** Gold of grounded QA: the choice plus the evidence spans. */
export interface GroundedQaGold extends ChoiceGold {
  glue: [number, number][];
}

/** "grounded-qa": format (with a valid glue list) + glue IoU + choice accuracy. */
export const groundedQaReward: RewardSpec<z.output<typeof mcqOptions>, GroundedQaGold> = {
  name: "grounded-qa",
  description: "VideoChat-R1 grounded QA: format (think, answer, glue) + IoU of the <glue> spans + choice accuracy",
  options: mcqOptions,
  exampleGold: { answer: "A", options: ["he opens the door", "he sits down"], glue: [[3, 8], [20, 24]] },
  maxScore: 3,
  score({ completion, gold }, o): RewardResult {
    if (total(merge(gold.glue)) <= 0) return { score: null, terms: {}, info: { reason: "empty or zero-length gold glue" } };
    const accuracy = choiceAccuracy(completion, gold);
    if (accuracy === null) return { score: null, terms: {}, info: { reason: "gold letter outside the options" } };
    const glueText = countOf(completion, "<glue>") === 1 ? singleBlock(completion, "glue") : null;
    const glue = glueText === null ? null : parseGlue(glueText);
    const tags = o.requireThink ? ["think", "answer", "glue"] : ["answer", "glue"];
    const format = glue !== null ? exactTagFormat(completion, tags) : 0;
    const glueIou = glue ? spansIou(gold.glue, glue) : 0;
    return { score: format + glueIou + accuracy, terms: { format, glueIou, accuracy } };
  },
  goldCompletion: (g) => `<think>\nThe evidence is there.\n</think>\n<answer>${g.answer}</answer>\n<glue>${JSON.stringify(g.glue).replace(/\[(\d[^\[\]]*)\]/g, "($1)")}</glue>`,
};

/** A model that judges how much of a reference caption a generated caption covers, in [0, 1]. */
export interface CaptionJudge {
  judge(caption: string, reference: string): Promise<number>;
}

/**
 * Caption recall (VideoChat-R1 §3.3) — MODEL-JUDGED, NOT RULE-BASED: the score is whatever the supplied judge
 * returns, plus the format term. A judge failure gives null (infrastructure, not the model's fault).
 */
export function makeCaptionRecallReward(judge: CaptionJudge, name = "caption-recall"): RewardSpec<z.output<typeof mcqOptions>, { caption: string }> {
  return {
    name,
    description: "MODEL-JUDGED (not rule-based): format + caption recall in [0,1] as scored by a pluggable judge",
    options: mcqOptions,
    modelJudged: true,
    maxScore: 2,
    async score({ completion, gold }, o): Promise<RewardResult> {
      const format = exactTagFormat(completion, o.requireThink ? ["think", "answer"] : ["answer"]);
      const answer = singleBlock(completion, "answer");
      if (answer === null || !answer.trim()) return { score: format, terms: { format, recall: 0 } };
      let recall: number;
      try {
        recall = await judge.judge(answer.trim(), gold.caption);
      } catch (err) {
        return { score: null, terms: { format }, info: { reason: `judge failed: ${err instanceof Error ? err.message : String(err)}` } };
      }
      if (!(recall >= 0 && recall <= 1)) return { score: null, terms: { format }, info: { reason: `judge returned ${recall}, not in [0,1]` } };
      return { score: format + recall, terms: { format, recall }, info: { modelJudged: true } };
    },
    goldCompletion: (g) => `<think>\nDescribe.\n</think>\n<answer>${g.caption}</answer>`,
  };
}
