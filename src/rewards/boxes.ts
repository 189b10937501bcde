/**
 * Visual-RFT box and class rewards (spec §4): "box-detection" (IoU term, confidence term, format term) and
 * "class-match" (exact class after normalisation, plus format). Parsing reads only the single `<answer>` block and
 * strict JSON (one repair: single quotes to double quotes); any invalid item invalidates the whole list.
 * Departures from `Liuziyu77/Visual-RFT` (reproducible with options): the confidence term is 0 when nothing matched
 * and is scaled by min(1, #gold/#pred) (D-B4, `confidenceRule: "reference"`); degenerate gold boxes give null
 * (D-B5); no gold and no prediction scores 1 (D-B6); exact class match, no substring credit (D-B7); no repair of
 * truncated JSON (D-B9). `preset: "visualRft"` restores the reference confidence rule, repair and format regex.
 */
import { z } from "zod";
import type { RewardResult, RewardSpec } from "./types.js";
import { singleBlock } from "./text/region.js";
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

const validBox = (b: readonly number[]): boolean => b.length === 4 && b.every(Number.isFinite) && b[0]! < b[2]! && b[1]! < b[3]!;

/** A predicted box with its confidence. */
export interface PredBox {
  box: Box;
  confidence: number;
}

/** Parses the answer JSON list of `{Position, Confidence}`; null when anything is invalid (D-B5, §4.1 step 1). */
export function parseBoxList(answer: string, o: { positionKey: string; confidenceKey: string; maxItems: number; coordSpace: CoordSpace; imageSize?: readonly [number, number]; repairTruncated?: boolean }): PredBox[] | null {
  const start = answer.indexOf("[");
  const end = answer.lastIndexOf("]");
  if (start < 0) return null;
  const body = end > start ? answer.slice(start, end + 1) : answer.slice(start);
  const attempts = [body, body.replace(/'/g, '"')];
  // D-B9 (visualRft preset only): cut after the last "}," and close the list, which pays truncated outputs.
  const cut = body.lastIndexOf("},");
  if (o.repairTruncated && cut > 0) attempts.push(body.slice(0, cut + 1) + "]", body.slice(0, cut + 1).replace(/'/g, '"') + "]");
  let data: unknown = undefined;
  for (const text of attempts) {
    try {
      data = JSON.parse(text);
      break;
    } catch {
      continue;
    }
  }
  if (data === undefined) return null;
  if (!Array.isArray(data) || data.length > o.maxItems) return null;
  const pk = o.positionKey.toLowerCase();
  const ck = o.confidenceKey.toLowerCase();
  const out: PredBox[] = [];
  for (const item of data) {
    if (typeof item !== "object" || item === null || Array.isArray(item)) return null;
    const lower = Object.fromEntries(Object.entries(item).map(([k, v]) => [k.toLowerCase(), v]));
    const pos = lower[pk];
    const c = lower[ck] ?? 1;
    if (!Array.isArray(pos) || !pos.every((x) => typeof x === "number") || typeof c !== "number" || !(c >= 0 && c <= 1)) return null;
    if (!validBox(pos)) return null;
    let box = toPixels(pos as Box, o.coordSpace, o.imageSize);
    if (o.imageSize) {
      const [w, h] = o.imageSize;
      box = [Math.min(Math.max(box[0], 0), w), Math.min(Math.max(box[1], 0), h), Math.min(Math.max(box[2], 0), w), Math.min(Math.max(box[3], 0), h)];
      if (!validBox(box)) return null;
    }
    out.push({ box, confidence: c });
  }
  return out;
}

/** Matching result: for each prediction, the gold index it matched (or -1) and the IoU. */
export interface BoxMatch {
  gold: number[];
  iou: number[];
}

/** Greedy matching (reference): by confidence descending, each takes the best unused gold box above the threshold. */
export function greedyMatch(preds: readonly PredBox[], gold: readonly Box[], threshold: number, inclusive: boolean): BoxMatch {
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
export async function hungarianMatch(preds: readonly PredBox[], gold: readonly Box[], threshold: number, inclusive: boolean): Promise<BoxMatch> {
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
  matching: z.enum(["greedy", "hungarian"]).default("greedy").describe("greedy by confidence (reference) or Hungarian maximum IoU (D-B2)"),
  confidenceRule: z.enum(["ours", "reference"]).default("ours").describe("ours: 0 with no match and scaled by min(1,#gold/#pred) (D-B4)"),
  positionKey: z.string().default("Position").describe("JSON key of the box (case-insensitive), e.g. bbox_2d"),
  confidenceKey: z.string().default("Confidence").describe("JSON key of the confidence (case-insensitive); missing means 1"),
  maxItems: z.number().int().positive().default(100).describe("more predicted boxes invalidate the list"),
  requireThink: z.boolean().default(true).describe("format term needs <think> before <answer> (otherwise <answer> alone)"),
  repairTruncated: z.boolean().default(false).describe("repair truncated JSON as the reference does (D-B9); pays truncated outputs"),
  preset: z.enum(["none", "visualRft"]).default("none").describe("visualRft: reference confidence rule, truncation repair and lazy-regex format"),
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
export function detectionTerms(preds: readonly PredBox[], gold: readonly Box[], match: BoxMatch, rule: "ours" | "reference"): { iou: number; confidence: number } {
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

/** Scores one detection completion; async only for Hungarian matching. */
export async function scoreDetection(completion: string, gold: DetectionGold, options: DetectionOptions): Promise<RewardResult> {
  const o: DetectionOptions = options.preset === "visualRft" ? { ...options, confidenceRule: "reference", repairTruncated: true } : options;
  const space = gold.coordSpace ?? "pixel";
  const goldBoxes = gold.boxes.map((b) => (validBox(b) ? toPixels(b as Box, space, gold.imageSize) : null));
  if (goldBoxes.some((b) => b === null)) return { score: null, terms: {}, info: { reason: "degenerate or invalid gold box" } };
  const format = o.preset === "visualRft" ? formatScore(completion, formatOptions.parse({ preset: "visualRft" })) : exactTagFormat(completion, o.requireThink ? ["think", "answer"] : ["answer"]);
  const answer = singleBlock(completion, "answer");
  const parsed = answer === null ? null : parseBoxList(answer, { ...o, coordSpace: space, ...(gold.imageSize ? { imageSize: gold.imageSize } : {}) });
  if (!parsed) return { score: format, terms: { iou: 0, confidence: 0, format }, info: { reason: answer === null ? "no single <answer> block" : "invalid box list" } };
  const preds = dedupe(parsed);
  const g = goldBoxes as Box[];
  const match = o.matching === "hungarian" ? await hungarianMatch(preds, g, o.iouThreshold, o.inclusive) : greedyMatch(preds, g, o.iouThreshold, o.inclusive);
  const { iou, confidence } = detectionTerms(preds, g, match, o.confidenceRule);
  return { score: iou + confidence + format, terms: { iou, confidence, format }, info: { predictions: preds.length, matched: match.gold.filter((j) => j >= 0).length } };
}

/** "box-detection": Visual-RFT IoU + confidence + format (weights 1/1/1). */
export const boxDetectionReward: RewardSpec<DetectionOptions, DetectionGold> = {
  name: "box-detection",
  description: "Visual-RFT detection: greedy-matched box IoU + confidence + format, from a JSON list in <answer>",
  options: detectionOptions,
  exampleGold: { boxes: [[10, 10, 50, 60], [70, 20, 90, 40]] },
  maxScore: 3,
  score: ({ completion, gold }, o) => scoreDetection(completion, gold, o),
  goldCompletion: (gold) => `<think>\nI see the objects.\n</think>\n<answer>${JSON.stringify(gold.boxes.map((b) => ({ Position: b, Confidence: 1 })))}</answer>`,
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
  return s.normalize("NFKC").toLowerCase().replace(/[\s_-]+/g, "");
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
  description: "Visual-RFT classification: exact class name in the single <answer> block (no substring credit) + format",
  options: classOptions,
  exampleGold: { label: "Golden Retriever", aliases: ["golden"] },
  maxScore: 2,
  score({ completion, gold }, o): RewardResult {
    if (!normalizeClass(gold.label)) return { score: null, terms: {}, info: { reason: "empty gold label" } };
    const format = exactTagFormat(completion, o.requireThink ? ["think", "answer"] : ["answer"]);
    const answer = singleBlock(completion, "answer");
    const accuracy = answer === null ? 0 : classAccuracy(answer, gold);
    return { score: accuracy + format, terms: { accuracy, format }, info: { answer } };
  },
  goldCompletion: (gold) => `<think>\nIt looks like one.\n</think>\n<answer>${gold.label}</answer>`,
};
