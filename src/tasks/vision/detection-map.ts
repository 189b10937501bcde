/**
 * COCO mAP@[.5:.95] (src/rewards/map.ts, COCOeval's rules) of completions on vision-detection examples: the metric of
 * Visual-RFT's detection result (arXiv 2503.01785 §4.2), for evaluation, not training. Each example is one image and
 * its query is the class; each box an answer lists is a detection scored by its Confidence. An answer that does not
 * parse as a box list (box-detection's strict parser) detects nothing.
 */
import { parseBoxList, type Box } from "../../rewards/boxes.js";
import { cocoMap, type Detection, type GoldObject, type MapResult } from "../../rewards/map.js";
import { answerBlock } from "../../rewards/text/region.js";
import type { Example } from "../types.js";
import type { DetectionGold } from "./tasks.js";

const LIST = { positionKey: "Position", confidenceKey: "Confidence", maxItems: 100, coordSpace: "pixel" as const };

/** mAP of `completions[i]` answering `examples[i]`. */
export function detectionMap(examples: readonly Example<DetectionGold>[], completions: readonly string[]): MapResult {
  if (examples.length !== completions.length)
    throw new Error(`detectionMap: ${examples.length} examples but ${completions.length} completions`);
  const gold: GoldObject[] = [];
  const dets: Detection[] = [];
  examples.forEach((e, i) => {
    const { boxes, query } = e.gold;
    for (const b of boxes) gold.push({ image: e.id, label: query, box: b as Box });
    const text = answerBlock(completions[i]!).text;
    const preds = text === null ? null : parseBoxList(text, LIST);
    for (const p of preds ?? []) dets.push({ image: e.id, label: query, box: p.box, score: p.confidence });
  });
  return cocoMap(gold, dets);
}
