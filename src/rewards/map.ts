/**
 * COCO-style mean average precision for evaluation (not a training reward). Follows `cocodataset/cocoapi`
 * COCOeval for boxes: per class and IoU threshold (0.50:0.05:0.95, inclusive `>=`), detections sorted by score
 * (stable), each matched to the unmatched gold box of the same image with the highest IoU, precision made monotone,
 * then sampled at 101 recall points. Departures: no crowd boxes, no area ranges, and at most `maxDets` detections per
 * image (100); classes without gold boxes are skipped, as COCOeval does.
 */
import { boxIou, type Box } from "./boxes.js";

/** A gold object in one image. */
export interface GoldObject {
  image: string;
  label: string;
  box: Box;
}

/** A scored detection in one image. */
export interface Detection extends GoldObject {
  score: number;
}

/** mAP summary: mAP@[.5:.95], AP50, AP75 and AP per class (averaged over thresholds). */
export interface MapResult {
  map: number;
  map50: number;
  map75: number;
  perClass: Record<string, number>;
}

const THRESHOLDS = Array.from({ length: 10 }, (_, i) => 0.5 + 0.05 * i);
const RECALL_POINTS = Array.from({ length: 101 }, (_, i) => i / 100);

/** AP of one class at one IoU threshold (101-point interpolation). */
function averagePrecision(dets: Detection[], gold: GoldObject[], t: number): number {
  const byImage = new Map<string, { box: Box; used: boolean }[]>();
  for (const g of gold) {
    const list = byImage.get(g.image) ?? [];
    list.push({ box: g.box, used: false });
    byImage.set(g.image, list);
  }
  const tp: number[] = [];
  for (const d of dets) {
    let best = -1;
    let bestIou = t - 1e-10; // COCOeval: iou >= t
    const gs = byImage.get(d.image) ?? [];
    gs.forEach((g, j) => {
      if (g.used) return;
      const v = boxIou(d.box, g.box);
      if (v >= bestIou) [best, bestIou] = [j, v];
    });
    if (best >= 0) gs[best]!.used = true;
    tp.push(best >= 0 ? 1 : 0);
  }
  const precision: number[] = [];
  const recall: number[] = [];
  let ctp = 0;
  tp.forEach((v, i) => {
    ctp += v;
    precision.push(ctp / (i + 1));
    recall.push(ctp / gold.length);
  });
  for (let i = precision.length - 2; i >= 0; i--) precision[i] = Math.max(precision[i]!, precision[i + 1]!);
  let sum = 0;
  let k = 0;
  for (const r of RECALL_POINTS) {
    while (k < recall.length && recall[k]! < r) k++;
    sum += k < precision.length ? precision[k]! : 0;
  }
  return sum / RECALL_POINTS.length;
}

/** COCO-style mAP over all classes that have gold boxes. */
export function cocoMap(gold: readonly GoldObject[], detections: readonly Detection[], maxDets = 100): MapResult {
  const perImage = new Map<string, Detection[]>();
  for (const d of detections) perImage.set(d.image, [...(perImage.get(d.image) ?? []), d]);
  const kept = [...perImage.values()].flatMap((ds) =>
    ds
      .map((d, i) => ({ d, i }))
      .sort((a, b) => b.d.score - a.d.score || a.i - b.i)
      .slice(0, maxDets)
      .map((x) => x.d),
  );
  const labels = [...new Set(gold.map((g) => g.label))].sort();
  const perClass: Record<string, number> = {};
  const at = THRESHOLDS.map(() => 0);
  for (const label of labels) {
    const g = gold.filter((x) => x.label === label);
    const ds = kept
      .filter((x) => x.label === label)
      .map((d, i) => ({ d, i }))
      .sort((a, b) => b.d.score - a.d.score || a.i - b.i)
      .map((x) => x.d);
    const aps = THRESHOLDS.map((t) => averagePrecision(ds, g, t));
    aps.forEach((ap, i) => (at[i]! += ap));
    perClass[label] = aps.reduce((s, v) => s + v, 0) / aps.length;
  }
  const n = Math.max(1, labels.length);
  return { map: at.reduce((s, v) => s + v, 0) / (at.length * n), map50: at[0]! / n, map75: at[5]! / n, perClass };
}
