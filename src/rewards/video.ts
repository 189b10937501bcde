/**
 * VideoChat-R1 rewards (spec §5): temporal grounding ("temporal-iou"), tracking ("tracking-iou"), multiple choice
 * ("video-mcq"), grounded QA ("grounded-qa"); each sums its terms with weight 1, as `OpenGVLab/VideoChat-R1`
 * `grpo_tasks.py` does. Caption recall is model-judged in the paper: it is offered only as a pluggable judge
 * (`makeCaptionRecallReward`), marked `modelJudged`, and not registered by default.
 * Departures: zero-length gold segments/glue give null (the reference gives 1.0); tracking excludes frame 0 (its box
 * is in the prompt); MCQ takes exactly one option (the reference takes the first capital letter anywhere); a temporal
 * answer holds exactly one span (`spans`; the reference grades the last pair, `preset: "videoChatR1"`); two answer
 * blocks are invalid (G5, `answerBlock`); and the format term needs the answer to parse (`formatRequiresAnswer`).
 */
import { z } from "zod";
import type { RewardResult, RewardSpec } from "./types.js";
import { answerBlock } from "./text/region.js";
import { finiteNumber, hasLongNumber, parseJsonAnswer } from "./text/json-answer.js";
import { mergeSpans, readSpans, spansIou, spansLength, temporalIou, type Span } from "./text/time-spans.js";
import { exactTagFormat, formatOptions, formatScore } from "./format.js";
import { boxIou, type Box } from "./boxes.js";

export {
  lastTimeSpan,
  mergeSpans,
  parseTimeRange,
  parseTimeSpans,
  readSpans,
  spansIou,
  temporalIou,
} from "./text/time-spans.js";
export type { Span, SpanPolicy } from "./text/time-spans.js";

const thinkOption = z
  .boolean()
  .default(true)
  .describe("the format term needs <think> before <answer> (false: the answer may come directly)");

const formatRequiresAnswer = z.boolean().default(true).describe("the format term also needs a parsed answer");

/** Options of the temporal grounding reward. */
export const temporalOptions = z.object({
  requireThink: thinkOption,
  spans: z
    .enum(["single", "union", "last"])
    .default("single")
    .describe("single: one span, no other number; union: all spans as one set; last: the last pair (hackable)"),
  answerBlocks: z
    .enum(["single", "last"])
    .default("single")
    .describe("single: two <answer> blocks are invalid (G5); last: the last block is graded (hackable)"),
  formatRequiresAnswer,
  preset: z
    .enum(["none", "videoChatR1"])
    .default("none")
    .describe("videoChatR1: last block, last pair, tag-only format (the paper's rules; hackable)"),
});
/** Parsed temporal options. */
export type TemporalOptions = z.output<typeof temporalOptions>;

const VIDEO_CHAT_R1 = { spans: "last", answerBlocks: "last", formatRequiresAnswer: false } as const;

/** The tag part of a VideoChat-R1 format term: ours (§2.2), or the paper's lazy regex under its preset. */
function tagFormat(completion: string, requireThink: boolean, paper: boolean): number {
  if (paper && requireThink) return formatScore(completion, formatOptions.parse({ preset: "videoChatR1" }));
  return exactTagFormat(completion, requireThink ? ["think", "answer"] : ["answer"]);
}

/** "temporal-iou": format + temporal IoU of the span(s) in the <answer> block, read under the `spans` policy. */
export const temporalIouReward: RewardSpec<TemporalOptions, { segment: [number, number]; duration?: number }> = {
  name: "temporal-iou",
  description:
    "VideoChat-R1 temporal grounding: format + IoU of the predicted time span ('a to b' in <answer>) with the gold segment",
  options: temporalOptions,
  exampleGold: { segment: [12.5, 20], duration: 60 },
  maxScore: 2,
  score({ completion, gold }, options): RewardResult {
    const o: TemporalOptions = options.preset === "videoChatR1" ? { ...options, ...VIDEO_CHAT_R1 } : options;
    const [s, e] = gold.segment;
    if (!(Number.isFinite(s) && Number.isFinite(e) && e > s))
      return { score: null, terms: {}, info: { reason: "zero-length or invalid gold segment" } };
    const tags = tagFormat(completion, o.requireThink, o.preset === "videoChatR1");
    const block = answerBlock(completion, { blocks: o.answerBlocks });
    const read = block.text === null ? { error: block.reason } : readSpans(block.text, o.spans);
    const spans: Span[] | null = "spans" in read ? read.spans : null;
    const format = o.formatRequiresAnswer && !spans ? 0 : tags;
    let tiou = 0;
    if (spans) tiou = o.spans === "union" ? spansIou([gold.segment], spans) : temporalIou(gold.segment, spans[0]!);
    const range = spans && spans.length === 1 ? spans[0] : null;
    const info = { range, spans, ...("error" in read ? { reason: read.error } : {}) };
    return { score: format + tiou, terms: { format, tiou }, info };
  },
  goldCompletion: (g) =>
    `<think>\nThe event happens then.\n</think>\n<answer>${g.segment[0]} to ${g.segment[1]}</answer>`,
};

/** The answer as exactly one JSON list (no repairs), or null. */
function parseJsonList(answer: string): unknown[] | null {
  const res = parseJsonAnswer(answer);
  return "value" in res && Array.isArray(res.value) ? res.value : null;
}

const isBoxLike = (b: unknown): b is number[] => Array.isArray(b) && b.length === 4 && b.every(finiteNumber);
const positiveArea = (b: readonly number[]): boolean => b[0]! < b[2]! && b[1]! < b[3]!;

/** Options of the tracking reward. */
export const trackingOptions = z.object({
  requireThink: thinkOption,
  formatRequiresAnswer: formatRequiresAnswer.describe("true: format needs N boxes of positive area; false: tags only"),
});

/** Gold of the tracking reward: one box per sampled frame (frame 0 is given in the prompt). */
export interface TrackingGold {
  boxes: number[][];
  absent?: boolean[];
}

/** "tracking-iou": format + mean per-frame box IoU over frames 1..N−1. */
export const trackingIouReward: RewardSpec<z.output<typeof trackingOptions>, TrackingGold> = {
  name: "tracking-iou",
  description:
    "VideoChat-R1 tracking: format + mean box IoU over frames 1..N-1 of a list of exactly N boxes in <answer>",
  options: trackingOptions,
  exampleGold: {
    boxes: [
      [10, 10, 30, 30],
      [12, 10, 32, 30],
      [14, 11, 34, 31],
      [16, 12, 36, 32],
    ],
  },
  maxScore: 2,
  score({ completion, gold }, o): RewardResult {
    const n = gold.boxes.length;
    const frames = gold.boxes
      .map((b, i) => i)
      .filter((i) => i > 0 && !gold.absent?.[i] && isBoxLike(gold.boxes[i]) && positiveArea(gold.boxes[i]!));
    if (frames.length === 0)
      return { score: null, terms: {}, info: { reason: "no scorable gold frame after frame 0" } };
    const answer = answerBlock(completion).text;
    const list = answer === null ? null : parseJsonList(answer);
    const valid = list !== null && list.length === n && list.every(isBoxLike);
    const staticBaseline = isBoxLike(gold.boxes[0])
      ? frames.reduce((s, i) => s + boxIou(gold.boxes[0] as Box, gold.boxes[i] as Box), 0) / frames.length
      : 0;
    const tags = exactTagFormat(completion, o.requireThink ? ["think", "answer"] : ["answer"]);
    if (!valid) {
      const format = o.formatRequiresAnswer ? 0 : tags;
      const info = { reason: "answer is not a list of exactly N boxes", staticBaseline };
      return { score: format, terms: { format, trackIou: 0 }, info };
    }
    const boxes = list as number[][];
    const format = o.formatRequiresAnswer && !boxes.every(positiveArea) ? 0 : tags;
    const trackIou =
      frames.reduce((s, i) => s + (positiveArea(boxes[i]!) ? boxIou(boxes[i] as Box, gold.boxes[i] as Box) : 0), 0) /
      frames.length;
    return { score: format + trackIou, terms: { format, trackIou }, info: { frames: frames.length, staticBaseline } };
  },
  goldCompletion: (g) => `<think>\nFollow the object.\n</think>\n<answer>${JSON.stringify(g.boxes)}</answer>`,
};

const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const normOption = (s: string): string =>
  s
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();

/** §5.3: the one option chosen in an answer (a letter token or the full option text), or null. */
export function parseChoice(answer: string, options: readonly string[]): string | null {
  let s = answer
    .trim()
    .replace(/^(?:the answer is|the correct answer is|answer\s*:|option)\s*/i, "")
    .trim();
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
export const mcqOptions = z.object({
  requireThink: thinkOption,
  formatRequiresAnswer: formatRequiresAnswer.describe("the format term also needs exactly one chosen option"),
});

/** Accuracy and whether the answer chose exactly one option; null when the gold letter is outside the options. */
function choiceAccuracy(completion: string, gold: ChoiceGold): { accuracy: number; chosen: boolean } | null {
  const idx = LETTERS.indexOf(gold.answer.trim().replace(/[().]/g, ""));
  if (idx < 0 || idx >= gold.options.length) return null;
  const answer = answerBlock(completion).text;
  const letter = answer === null ? null : parseChoice(answer, gold.options);
  return { accuracy: letter === LETTERS[idx] ? 1 : 0, chosen: letter !== null };
}

/** "video-mcq": format + accuracy of exactly one chosen option. */
export const videoMcqReward: RewardSpec<z.output<typeof mcqOptions>, ChoiceGold> = {
  name: "video-mcq",
  description: "VideoChat-R1 multiple choice: format + exactly one option (letter or full option text) in <answer>",
  options: mcqOptions,
  exampleGold: { answer: "B", options: ["a cat", "a dog", "a bird", "a fish"] },
  maxScore: 2,
  score({ completion, gold }, o): RewardResult {
    const choice = choiceAccuracy(completion, gold);
    if (choice === null) return { score: null, terms: {}, info: { reason: "gold letter outside the options" } };
    const tags = exactTagFormat(completion, o.requireThink ? ["think", "answer"] : ["answer"]);
    const format = o.formatRequiresAnswer && !choice.chosen ? 0 : tags;
    return { score: format + choice.accuracy, terms: { format, accuracy: choice.accuracy } };
  },
  goldCompletion: (g) => `<think>\nLooking at the video.\n</think>\n<answer>${g.answer}</answer>`,
};

/** Parses a glue list `[(s,e), …]` of number pairs with 0 <= s <= e; null when it is not such a literal. */
export function parseGlue(text: string): [number, number][] | null {
  const t = text.trim();
  if (t.length > 20_000 || !/^[\s\[\](),\d.eE+-]*$/.test(t) || hasLongNumber(t)) return null;
  let v: unknown;
  try {
    v = JSON.parse(t.replace(/\(/g, "[").replace(/\)/g, "]"));
  } catch {
    return null;
  }
  if (!Array.isArray(v) || v.length > 100) return null;
  const out: [number, number][] = [];
  for (const p of v) {
    if (!Array.isArray(p) || p.length !== 2 || !p.every((x) => typeof x === "number" && Number.isFinite(x)))
      return null;
    if (p[0] < 0 || p[0] > p[1]) return null;
    out.push([p[0], p[1]]);
  }
  return out;
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
  exampleGold: {
    answer: "A",
    options: ["he opens the door", "he sits down"],
    glue: [
      [3, 8],
      [20, 24],
    ],
  },
  maxScore: 3,
  score({ completion, gold }, o): RewardResult {
    if (spansLength(mergeSpans(gold.glue)) <= 0) {
      return { score: null, terms: {}, info: { reason: "empty or zero-length gold glue" } };
    }
    const choice = choiceAccuracy(completion, gold);
    if (choice === null) return { score: null, terms: {}, info: { reason: "gold letter outside the options" } };
    const accuracy = choice.accuracy;
    const glueText = answerBlock(completion, { tag: "glue" }).text;
    const glue = glueText === null ? null : parseGlue(glueText);
    const tags = o.requireThink ? ["think", "answer", "glue"] : ["answer", "glue"];
    const format = glue !== null && (choice.chosen || !o.formatRequiresAnswer) ? exactTagFormat(completion, tags) : 0;
    const glueIou = glue ? spansIou(gold.glue, glue) : 0;
    return { score: format + glueIou + accuracy, terms: { format, glueIou, accuracy } };
  },
  goldCompletion: (g) =>
    `<think>\nThe evidence is there.\n</think>\n<answer>${g.answer}</answer>\n<glue>${JSON.stringify(g.glue).replace(/\[(\d[^\[\]]*)\]/g, "($1)")}</glue>`,
};

/** A model that judges how much of a reference caption a generated caption covers, in [0, 1]. */
export interface CaptionJudge {
  judge(caption: string, reference: string): Promise<number>;
}

/** Options of the caption reward (free text: the format term checks tags only). */
export const captionOptions = z.object({ requireThink: thinkOption });

/**
 * Caption recall (VideoChat-R1 §3.3) — MODEL-JUDGED, NOT RULE-BASED: the score is whatever the supplied judge
 * returns, plus the format term. A judge failure gives null (infrastructure, not the model's fault).
 */
export function makeCaptionRecallReward(
  judge: CaptionJudge,
  name = "caption-recall",
): RewardSpec<z.output<typeof captionOptions>, { caption: string }> {
  return {
    name,
    description: "MODEL-JUDGED (not rule-based): format + caption recall in [0,1] as scored by a pluggable judge",
    options: captionOptions,
    modelJudged: true,
    maxScore: 2,
    async score({ completion, gold }, o): Promise<RewardResult> {
      const format = exactTagFormat(completion, o.requireThink ? ["think", "answer"] : ["answer"]);
      const answer = answerBlock(completion).text;
      if (answer === null || !answer.trim()) return { score: format, terms: { format, recall: 0 } };
      let recall: number;
      try {
        recall = await judge.judge(answer.trim(), gold.caption);
      } catch (err) {
        return {
          score: null,
          terms: { format },
          info: { reason: `judge failed: ${err instanceof Error ? err.message : String(err)}` },
        };
      }
      if (!(recall >= 0 && recall <= 1))
        return { score: null, terms: { format }, info: { reason: `judge returned ${recall}, not in [0,1]` } };
      return { score: format + recall, terms: { format, recall }, info: { modelJudged: true } };
    },
    goldCompletion: (g) => `<think>\nDescribe.\n</think>\n<answer>${g.caption}</answer>`,
  };
}
