/**
 * Visual-RFT grounding variant ("box-grounding", spec §4.2 note, after `grpo_lisa.py`): the answer gives one box as
 * `(x1,y1),(x2,y2)` on a 0–1000 grid and the reward is GIoU + 1 ∈ [0, 2]. The same validation as detection applies
 * (finite numbers, positive area, clamped to the grid); an unparsed or invalid box earns 0 and a degenerate gold box
 * gives null. The reference's "exact string match scores 2" needs no special case: equal boxes already give GIoU 1.
 * One box per answer (`boxes: "single"`): an answer with two boxes, or with any number outside its one box, is
 * invalid, so a spray of boxes that ends on the gold earns nothing; `boxes: "last"` grades the last box and ignores
 * the rest (the spec's reading of the reference; hackable). Several answer blocks are invalid (G5, `answerBlock`).
 * The reference file was not available to check; this follows the spec's description of it.
 */
import { z } from "zod";
import type { RewardResult, RewardSpec } from "./types.js";
import { answerBlock } from "./text/region.js";
import type { Box } from "./boxes.js";

const NUM = String.raw`(\d{1,4}(?:\.\d{1,6})?)`;
const SP = "[ \\t]{0,3}";
// The last "(x1,y1),(x2,y2)" in the answer; bounded whitespace only, so the scan is linear.
const PAIR_BOX = new RegExp(
  String.raw`\(${SP}${NUM}${SP},${SP}${NUM}${SP}\)${SP},?${SP}\(${SP}${NUM}${SP},${SP}${NUM}${SP}\)`,
  "g",
);

const GRID = 1000;

/** How the boxes of an answer are read: exactly one box and no other number, or the last box (hackable). */
export type GroundingPolicy = "single" | "last";

const toGrid = (m: RegExpMatchArray): Box | null => {
  const b = [1, 2, 3, 4].map((i) => Math.min(GRID, Math.max(0, Number(m[i])))) as Box;
  return b.every(Number.isFinite) && b[0] < b[2] && b[1] < b[3] ? b : null;
};

/**
 * The box of the answer, clamped to the 0–1000 grid; null when absent or degenerate. "single" (default): exactly one
 * `(x1,y1),(x2,y2)` and no digit outside it; "last": the last such box, ignoring the rest.
 */
export function parseGroundingBox(text: string, policy: GroundingPolicy = "single"): Box | null {
  if (text.length > 20_000) return null;
  const hits = [...text.matchAll(PAIR_BOX)];
  if (hits.length === 0) return null;
  if (policy === "last") return toGrid(hits[hits.length - 1]!);
  if (hits.length !== 1) return null;
  const m = hits[0]!;
  if (/\d/.test(text.slice(0, m.index) + text.slice(m.index + m[0].length))) return null;
  return toGrid(m);
}

/** Generalised IoU: IoU − (|C| − |A∪B|)/|C|, with C the smallest box enclosing both; in [−1, 1]. */
export function generalizedIou(a: Box, b: Box): number {
  const iw = Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0]));
  const ih = Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
  const inter = iw * ih;
  const union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
  const hull = (Math.max(a[2], b[2]) - Math.min(a[0], b[0])) * (Math.max(a[3], b[3]) - Math.min(a[1], b[1]));
  return inter / union - (hull - union) / hull;
}

/** Options of the grounding reward. */
export const groundingOptions = z.object({
  region: z
    .enum(["answerTag", "all"])
    .default("answerTag")
    .describe("read the box from the single <answer> block, or from the whole completion"),
  boxes: z
    .enum(["single", "last"])
    .default("single")
    .describe("single: exactly one box and no other number; last: the last box (hackable)"),
});

/** "box-grounding": GIoU + 1 of the predicted box against the gold box (0–1000 grid). */
export const boxGroundingReward: RewardSpec<z.output<typeof groundingOptions>, { box: number[] }> = {
  name: "box-grounding",
  description:
    "Visual-RFT grounding: GIoU + 1 in [0,2] of the (x1,y1),(x2,y2) box (0-1000 grid) in <answer> against the gold box",
  options: groundingOptions,
  exampleGold: { box: [120, 80, 460, 390] },
  maxScore: 2,
  score({ completion, gold }, o): RewardResult {
    const g = gold.box;
    if (!(g.length === 4 && g.every(Number.isFinite) && g[0]! < g[2]! && g[1]! < g[3]!))
      return { score: null, terms: {}, info: { reason: "degenerate or invalid gold box" } };
    const text = o.region === "answerTag" ? answerBlock(completion).text : completion;
    const box = text === null ? null : parseGroundingBox(text, o.boxes);
    const grounding = box ? generalizedIou(g as Box, box) + 1 : 0;
    return { score: grounding, terms: { grounding }, info: { box } };
  },
  goldCompletion: (g) =>
    `<think>\nIt is there.\n</think>\n<answer>(${g.box[0]},${g.box[1]}),(${g.box[2]},${g.box[3]})</answer>`,
};
