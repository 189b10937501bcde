/**
 * Visual-RFT box and class rewards (spec §4): "box-detection" (IoU term, confidence term, format term) and
 * "class-match" (exact class after normalisation, plus format). Parsing reads only the single `<answer>` block
 * (`answerBlock`, G5) as exactly one JSON list (`parseJsonAnswer`; one repair: single quotes to double quotes); any
 * invalid item invalidates the whole list, and by default (`formatRequiresAnswer`) so does the format term.
 * Departures from `Liuziyu77/Visual-RFT` (reproducible with options): the confidence term is 0 when nothing matched
 * and is scaled by min(1, #gold/#pred) (D-B4, `confidenceRule: "reference"`); degenerate gold boxes give null
 * (D-B5); no gold and no prediction scores 1 (D-B6); exact class match, no substring credit (D-B7); no repair of
 * truncated JSON (D-B9). `preset: "visualRft"` restores the reference confidence rule, repair, lenient parser and
 * tag-only format regex, and is hackable (docs/rewards.md).
 */
import { z } from "zod";
import type { RewardResult, RewardSpec } from "./types.js";
import { answerBlock } from "./text/region.js";
import { finiteNumber, parseJsonAnswer, plainKeys, type JsonParser, type JsonRepair } from "./text/json-answer.js";
import { exactTagFormat, formatOptions, formatScore } from "./format.js";

/** An axis-aligned box in pixel xyxy. */
export type Box = [number, number, number, number];

/** Coordinate space of boxes in data and in model output. */
export type CoordSpace = "pixel" | "norm1000" | "norm1";

/** IoU of two xyxy boxes; no +1 pixel, touching boxes score 0. */
export function boxIou(a: Box, b: Box): number {
  const iw = Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0]));
  const ih = Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
  const inter = iw * ih;
  const union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
  return union > 0 ? inter / union : 0;
}

/** Converts a box to pixel xyxy. */
export function toPixels(b: Box, space: CoordSpace, size?: readonly [number, number]): Box {
  if (space === "pixel") return b;
  if (!size) throw new Error(`coordSpace ${space} needs imageSize`);
  const s = space === "norm1000" ? 1000 : 1;
  return [(b[0] * size[0]) / s, (b[1] * size[1]) / s, (b[2] * size[0]) / s, (b[3] * size[1]) / s];
}

const validBox = (b: readonly number[]): boolean =>
  b.length === 4 && b.every(Number.isFinite) && b[0]! < b[2]! && b[1]! < b[3]!;

/** A predicted box with its confidence. */
export interface PredBox {
  box: Box;
  confidence: number;
}

/** Options of `parseBoxList`. */
export interface BoxListOptions {
  positionKey: string;
  confidenceKey: string;
  maxItems: number;
  coordSpace: CoordSpace;
  imageSize?: readonly [number, number];
  /** D-B9: close a list truncated mid-item (pays truncated outputs). */
  repairTruncated?: boolean;
  /** "strict" (default): the whole answer is one JSON list; "visual-rft-lenient": the paper's slice (hackable). */
  parser?: JsonParser;
  /** Item keys tolerated besides position and confidence (strict parser only), e.g. `label`. */
  extraKeys?: readonly string[];
}

/** One validated item in pixels, or null (§4.1 step 1). */
function parseBoxItem(item: unknown, o: BoxListOptions, allowed: Set<string> | null): PredBox | null {
  const entries = plainKeys(item);
  if (!entries) return null;
  if (allowed && [...entries.keys()].some((k) => !allowed.has(k))) return null;
  const pos = entries.get(o.positionKey.toLowerCase());
  const ck = o.confidenceKey.toLowerCase();
  const c = entries.has(ck) ? entries.get(ck) : 1; // missing means 1; an explicit null is invalid
  if (!Array.isArray(pos) || !pos.every(finiteNumber) || !finiteNumber(c) || !(c >= 0 && c <= 1)) return null;
  if (!validBox(pos)) return null;
  let box = toPixels(pos as Box, o.coordSpace, o.imageSize);
  if (o.imageSize) {
    const [w, h] = o.imageSize;
    const cx = (v: number): number => Math.min(Math.max(v, 0), w);
    const cy = (v: number): number => Math.min(Math.max(v, 0), h);
    box = [cx(box[0]), cy(box[1]), cx(box[2]), cy(box[3])];
    if (!validBox(box)) return null;
  }
  return { box, confidence: c };
}

/**
 * Parses the answer as a JSON list of `{Position, Confidence}`; null when anything is invalid (D-B5, §4.1 step 1).
 * Strict by default: the whole answer is one JSON list (repairs: single quotes; truncation with `repairTruncated`),
 * and each item holds only the position, the confidence and any `extraKeys`.
 */
export function parseBoxList(answer: string, o: BoxListOptions): PredBox[] | null {
  const parser = o.parser ?? "strict";
  const repairs: JsonRepair[] = o.repairTruncated ? ["singleQuotes", "truncated"] : ["singleQuotes"];
  const res = parseJsonAnswer(answer, { parser, repairs });
  if ("error" in res || !Array.isArray(res.value) || res.value.length > o.maxItems) return null;
  const keys = [o.positionKey, o.confidenceKey, ...(o.extraKeys ?? [])].map((k) => k.toLowerCase());
  const allowed = parser === "strict" ? new Set(keys) : null;
  const out: PredBox[] = [];
  for (const item of res.value) {
    const p = parseBoxItem(item, o, allowed);
    if (!p) return null;
    out.push(p);
  }
  return out;
}

/** Matching result: for each prediction, the gold index it matched (or -1) and the IoU. */
export interface BoxMatch {
  gold: number[];
  iou: number[];
}

/** Greedy matching (reference): by confidence descending, each takes the best unused gold box above the threshold. */
export function greedyMatch(
  preds: readonly PredBox[],
  gold: readonly Box[],
  threshold: number,
  inclusive: boolean,
): BoxMatch {
  const order = preds.map((_, i) => i).sort((a, b) => preds[b]!.confidence - preds[a]!.confidence || a - b);
  const used = new Array<boolean>(gold.length).fill(false);
  const res: BoxMatch = { gold: preds.map(() => -1), iou: preds.map(() => 0) };
  for (const i of order) {
    let best = -1;
    let bestIou = -1;
    gold.forEach((g, j) => {
      if (used[j]) return;
      const v = boxIou(preds[i]!.box, g);
      if (v > bestIou) [best, bestIou] = [j, v];
    });
    if (best >= 0 && (inclusive ? bestIou >= threshold : bestIou > threshold)) {
      used[best] = true;
      res.gold[i] = best;
      res.iou[i] = bestIou;
    }
  }
  return res;
}

let lsa: Promise<typeof import("linear-sum-assignment")> | null = null;

/** Hungarian matching maximising total IoU (D-B2, ablations); pairs at or below the threshold are dropped. */
export async function hungarianMatch(
  preds: readonly PredBox[],
  gold: readonly Box[],
  threshold: number,
  inclusive: boolean,
): Promise<BoxMatch> {
  const res: BoxMatch = { gold: preds.map(() => -1), iou: preds.map(() => 0) };
  if (preds.length === 0 || gold.length === 0) return res;
  lsa ??= import("linear-sum-assignment");
  const { linearSumAssignment } = await lsa;
  const m = preds.map((p) => gold.map((g) => boxIou(p.box, g)));
  const { rowAssignments } = linearSumAssignment(m, { maximaze: true });
  rowAssignments.forEach((j, i) => {
    if (j < 0) return;
    const v = m[i]![j]!;
    if (inclusive ? v >= threshold : v > threshold) {
      res.gold[i] = j;
      res.iou[i] = v;
    }
  });
  return res;
}

/** Options of the detection reward (spec §4 defaults). */
export const detectionOptions = z.object({
  iouThreshold: z.number().min(0).max(1).default(0.5).describe("a match needs IoU above this (D-B1)"),
  inclusive: z.boolean().default(false).describe("match at IoU equal to the threshold too (COCO style)"),
  matching: z
    .enum(["greedy", "hungarian"])
    .default("greedy")
    .describe("greedy by confidence (reference) or Hungarian maximum IoU (D-B2)"),
  confidenceRule: z
    .enum(["ours", "reference"])
    .default("ours")
    .describe("ours: 0 with no match and scaled by min(1,#gold/#pred) (D-B4)"),
  positionKey: z.string().default("Position").describe("JSON key of the box (case-insensitive), e.g. bbox_2d"),
  confidenceKey: z
    .string()
    .default("Confidence")
    .describe("JSON key of the confidence (case-insensitive); missing means 1"),
  maxItems: z.number().int().positive().default(100).describe("more predicted boxes invalidate the list"),
  requireThink: z
    .boolean()
    .default(true)
    .describe("format term needs <think> before <answer> (otherwise <answer> alone)"),
  repairTruncated: z
    .boolean()
    .default(false)
    .describe("repair truncated JSON as the reference does (D-B9); pays truncated outputs"),
  parser: z
    .enum(["strict", "visual-rft-lenient"])
    .default("strict")
    .describe("strict: the whole answer is one JSON list; visual-rft-lenient: the paper's slice (hackable)"),
  extraKeys: z.array(z.string()).default([]).describe("item keys allowed besides position and confidence, e.g. label"),
  formatRequiresAnswer: z.boolean().default(true).describe("the format term also needs a valid box list"),
  preset: z
    .enum(["none", "visualRft"])
    .default("none")
    .describe("visualRft: the paper's confidence rule, repair, lenient parser and tag-only format (hackable)"),
});
/** Parsed detection options. */
export type DetectionOptions = z.output<typeof detectionOptions>;

/** Gold of the detection reward. */
export interface DetectionGold {
  boxes: number[][];
  coordSpace?: CoordSpace;
  imageSize?: [number, number];
}

/** IoU and confidence terms for parsed predictions (§4.1 steps 2–6). */
export function detectionTerms(
  preds: readonly PredBox[],
  gold: readonly Box[],
  match: BoxMatch,
  rule: "ours" | "reference",
): { iou: number; confidence: number } {
  if (gold.length === 0) return preds.length === 0 ? { iou: 1, confidence: 1 } : { iou: 0, confidence: 0 };
  if (preds.length === 0) return { iou: 0, confidence: 0 };
  const iou = Math.min(1, match.iou.reduce((s, v) => s + v, 0) / Math.max(gold.length, preds.length));
  let conf = preds.reduce((s, p, i) => s + (match.gold[i]! >= 0 ? p.confidence : 1 - p.confidence), 0) / preds.length;
  if (rule === "ours") conf = match.gold.some((g) => g >= 0) ? conf * Math.min(1, gold.length / preds.length) : 0;
  return { iou, confidence: conf };
}

function dedupe(preds: PredBox[]): PredBox[] {
  const seen = new Set<string>();
  return preds.filter((p) => {
    const key = p.box.join(",");
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** What `preset: "visualRft"` sets: the paper's rules, each hackable (docs/rewards.md). */
const VISUAL_RFT = {
  confidenceRule: "reference",
  repairTruncated: true,
  parser: "visual-rft-lenient",
  formatRequiresAnswer: false,
} as const;

/** Scores one detection completion; async only for Hungarian matching. */
export async function scoreDetection(
  completion: string,
  gold: DetectionGold,
  options: DetectionOptions,
): Promise<RewardResult> {
  const o: DetectionOptions = options.preset === "visualRft" ? { ...options, ...VISUAL_RFT } : options;
  const space = gold.coordSpace ?? "pixel";
  const goldBoxes = gold.boxes.map((b) => (validBox(b) ? toPixels(b as Box, space, gold.imageSize) : null));
  if (goldBoxes.some((b) => b === null))
    return { score: null, terms: {}, info: { reason: "degenerate or invalid gold box" } };
  const tags =
    o.preset === "visualRft"
      ? formatScore(completion, formatOptions.parse({ preset: "visualRft" }))
      : exactTagFormat(completion, o.requireThink ? ["think", "answer"] : ["answer"]);
  const answer = answerBlock(completion);
  const listOptions = { ...o, coordSpace: space, ...(gold.imageSize ? { imageSize: gold.imageSize } : {}) };
  const parsed = answer.text === null ? null : parseBoxList(answer.text, listOptions);
  const format = o.formatRequiresAnswer && !parsed ? 0 : tags;
  if (!parsed) {
    const reason = answer.text === null ? answer.reason : "invalid box list";
    return { score: format, terms: { iou: 0, confidence: 0, format }, info: { reason } };
  }
  const preds = dedupe(parsed);
  const g = goldBoxes as Box[];
  const match =
    o.matching === "hungarian"
      ? await hungarianMatch(preds, g, o.iouThreshold, o.inclusive)
      : greedyMatch(preds, g, o.iouThreshold, o.inclusive);
  const { iou, confidence } = detectionTerms(preds, g, match, o.confidenceRule);
  return {
    score: iou + confidence + format,
    terms: { iou, confidence, format },
    info: { predictions: preds.length, matched: match.gold.filter((j) => j >= 0).length },
  };
}

/** "box-detection": Visual-RFT IoU + confidence + format (weights 1/1/1). */
export const boxDetectionReward: RewardSpec<DetectionOptions, DetectionGold> = {
  name: "box-detection",
  description: "Visual-RFT detection: greedy-matched box IoU + confidence + format, from a JSON list in <answer>",
  options: detectionOptions,
  exampleGold: {
    boxes: [
      [10, 10, 50, 60],
      [70, 20, 90, 40],
    ],
  },
  maxScore: 3,
  score: ({ completion, gold }, o) => scoreDetection(completion, gold, o),
  goldCompletion: (gold) =>
    `<think>\nI see the objects.\n</think>\n<answer>${JSON.stringify(gold.boxes.map((b) => ({ Position: b, Confidence: 1 })))}</answer>`,
};

/** Options of the classification reward. */
export const classOptions = z.object({
  requireThink: z.boolean().default(true).describe("format term needs <think> before <answer>"),
});
/** Parsed classification options. */
export type ClassOptions = z.output<typeof classOptions>;

/** Gold of the classification reward. */
export interface ClassGold {
  label: string;
  aliases?: string[];
  classList?: string[];
}

/** §4.1 step 7: NFKC, lowercase, without spaces, `_` and `-`. */
export function normalizeClass(s: string): string {
  return s
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[\s_-]+/g, "");
}

/** 1 iff the normalised answer is non-empty and equals the label or an alias (and is listed, with a class list). */
export function classAccuracy(answer: string, gold: ClassGold): number {
  const a = normalizeClass(answer);
  if (!a) return 0;
  if (gold.classList && !gold.classList.some((c) => normalizeClass(c) === a)) return 0;
  return [gold.label, ...(gold.aliases ?? [])].some((l) => normalizeClass(l) === a) ? 1 : 0;
}

/** "class-match": exact class (no substring credit, D-B7) + format. */
export const classMatchReward: RewardSpec<ClassOptions, ClassGold> = {
  name: "class-match",
  description:
    "Visual-RFT classification: exact class name in the single <answer> block (no substring credit) + format",
  options: classOptions,
  exampleGold: { label: "Golden Retriever", aliases: ["golden"] },
  maxScore: 2,
  score({ completion, gold }, o): RewardResult {
    if (!normalizeClass(gold.label)) return { score: null, terms: {}, info: { reason: "empty gold label" } };
    const format = exactTagFormat(completion, o.requireThink ? ["think", "answer"] : ["answer"]);
    const answer = answerBlock(completion).text;
    const accuracy = answer === null ? 0 : classAccuracy(answer, gold);
    return { score: accuracy + format, terms: { accuracy, format }, info: { answer } };
  },
  goldCompletion: (gold) => `<think>\nIt looks like one.\n</think>\n<answer>${gold.label}</answer>`,
};
