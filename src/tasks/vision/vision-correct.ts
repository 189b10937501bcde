/**
 * "vision-correct": the 0/1 correctness term of the vision tasks (their pass@k term, weight 0). Visual-RFT's rewards
 * are graded (IoU, GIoU) or add a format point (class-match gives 1 for a well-formed wrong class), so pass@k needs its
 * own verdict. Detection: 1 iff the answer lists exactly as many boxes as the gold and greedy matching pairs every
 * gold box at IoU >= 0.5. Grounding: 1 iff the answer's one box (0-1000 grid) has IoU >= 0.5 with the gold box.
 * Class: 1 iff the answer is the gold class (class-match's accuracy rule). Unparsed answers earn 0.
 * Departure: a task-level reward registered here, beside its tasks, rather than in src/rewards/ (the lead may move it).
 */
import { z } from "zod";
import { rewards } from "../../rewards/registry.js";
import type { RewardSpec } from "../../rewards/types.js";
import { answerBlock } from "../../rewards/text/region.js";
import { boxIou, classAccuracy, greedyMatch, parseBoxList, type Box } from "../../rewards/boxes.js";
import { parseGroundingBox } from "../../rewards/grounding.js";

const options = z.object({
  mode: z
    .enum(["detection", "grounding", "class"])
    .default("detection")
    .describe("a JSON box list (pixels), one (x1,y1),(x2,y2) box (0-1000 grid), or a class name"),
  iouThreshold: z.number().min(0).max(1).default(0.5).describe("a gold box is found at IoU >= this"),
});

/** Gold: the boxes (detection, pixels), the one box (grounding, 0-1000 grid) or the class label. */
export interface VisionCorrectGold {
  boxes?: number[][];
  box?: number[];
  label?: string;
}

/** The reward spec. */
export const visionCorrectReward: RewardSpec<z.output<typeof options>, VisionCorrectGold> = {
  name: "vision-correct",
  description:
    "vision tasks' 0/1 verdict: every gold box found at IoU >= 0.5 and no extra (detection), the box (grounding), the class",
  options,
  exampleGold: { boxes: [[10, 10, 50, 60]] },
  maxScore: 1,
  score({ completion, gold }, o) {
    const text = answerBlock(completion).text;
    if (text === null) return { score: 0, terms: { found: 0 } };
    if (o.mode === "class") {
      const found = gold.label ? classAccuracy(text, { label: gold.label }) : 0;
      return { score: found, terms: { found } };
    }
    if (o.mode === "grounding") {
      const box = parseGroundingBox(text, "single");
      const found = box && gold.box && boxIou(box, gold.box as Box) >= o.iouThreshold ? 1 : 0;
      return { score: found, terms: { found } };
    }
    const g = (gold.boxes ?? []) as Box[];
    const preds = parseBoxList(text, {
      positionKey: "Position",
      confidenceKey: "Confidence",
      maxItems: 100,
      coordSpace: "pixel",
    });
    const match = preds && preds.length === g.length ? greedyMatch(preds, g, o.iouThreshold, true) : null;
    const found = match && match.gold.every((j) => j >= 0) ? 1 : 0;
    return { score: found, terms: { found } };
  },
  goldCompletion(gold, o) {
    const b = gold.box ?? [];
    if (o.mode === "grounding") return `<answer>(${b[0]},${b[1]}),(${b[2]},${b[3]})</answer>`;
    if (o.mode === "class") return `<answer>${gold.label ?? ""}</answer>`;
    return `<answer>${JSON.stringify((gold.boxes ?? []).map((x) => ({ Position: x, Confidence: 1 })))}</answer>`;
  },
};

if (!rewards.has(visionCorrectReward.name)) rewards.register(visionCorrectReward);
