/**
 * "vision-correct": the 0/1 correctness term of the vision tasks (their pass@k term, weight 0). Visual-RFT's rewards
 * are graded (IoU, GIoU) or add a format point (class-match gives 1 for a well-formed wrong class), so pass@k needs its
 * own verdict. Detection: 1 iff the answer lists exactly as many boxes as the gold and greedy matching pairs every
 * gold box at IoU >= 0.5. Grounding: 1 iff the answer's one box (0-1000 grid) has IoU >= 0.5 with the gold box.
 * Class: 1 iff the answer is the gold class (class-match's accuracy rule). Video: span (one time span, tIoU >= 0.5),
 * track (exactly N boxes, mean IoU over frames 1..N-1 >= 0.5, frame 0 being given), choice (the gold option),
 * grounded (the gold option and <glue> spans with IoU >= 0.5). Unparsed answers earn 0.
 * Departure: a task-level reward registered here, beside its tasks, rather than in src/rewards/ (the lead may move it).
 */
import { z } from "zod";
import { rewards } from "../../rewards/registry.js";
import type { RewardSpec } from "../../rewards/types.js";
import { answerBlock } from "../../rewards/text/region.js";
import { boxIou, classAccuracy, greedyMatch, parseBoxList, type Box } from "../../rewards/boxes.js";
import { parseGroundingBox } from "../../rewards/grounding.js";
import { parseChoice, parseGlue } from "../../rewards/video.js";
import { readSpans, spansIou, temporalIou } from "../../rewards/text/time-spans.js";

const options = z.object({
  mode: z
    .enum(["detection", "grounding", "class", "span", "track", "choice", "grounded"])
    .default("detection")
    .describe("a JSON box list (pixels), one (x1,y1),(x2,y2) box (0-1000 grid), or a class name"),
  iouThreshold: z.number().min(0).max(1).default(0.5).describe("a gold box is found at IoU >= this"),
});

/** Gold: the boxes (detection, tracking), the box (grounding), the class, the time segment, the choice and glue. */
export interface VisionCorrectGold {
  boxes?: number[][];
  box?: number[];
  label?: string;
  segment?: [number, number];
  answer?: string;
  options?: string[];
  glue?: [number, number][];
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
    const verdict = videoVerdict(text, completion, gold, o.mode, o.iouThreshold);
    if (verdict !== null) return { score: verdict, terms: { found: verdict } };
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
    if (o.mode === "span") return `<answer>${gold.segment?.[0]} to ${gold.segment?.[1]}</answer>`;
    if (o.mode === "track") return `<answer>${JSON.stringify(gold.boxes ?? [])}</answer>`;
    if (o.mode === "choice") return `<answer>${gold.answer ?? ""}</answer>`;
    if (o.mode === "grounded")
      return `<answer>${gold.answer ?? ""}</answer>\n<glue>[${(gold.glue ?? []).map((g) => `(${g[0]},${g[1]})`).join(",")}]</glue>`;
    return `<answer>${JSON.stringify((gold.boxes ?? []).map((x) => ({ Position: x, Confidence: 1 })))}</answer>`;
  },
};

/** The verdict of the video modes (null for the image modes). */
function videoVerdict(
  text: string,
  completion: string,
  gold: VisionCorrectGold,
  mode: z.output<typeof options>["mode"],
  threshold: number,
): number | null {
  if (mode === "span") {
    const read = readSpans(text, "single");
    return gold.segment && "spans" in read && temporalIou(gold.segment, read.spans[0]!) >= threshold ? 1 : 0;
  }
  if (mode === "track") {
    const g = gold.boxes ?? [];
    let list: unknown;
    try {
      list = JSON.parse(text);
    } catch {
      return 0;
    }
    const ok = (b: unknown): b is Box => Array.isArray(b) && b.length === 4 && b.every(Number.isFinite);
    if (!Array.isArray(list) || list.length !== g.length || g.length < 2 || !list.every(ok)) return 0;
    const mean = g.slice(1).reduce((s, b, i) => s + boxIou(list[i + 1] as Box, b as Box), 0) / (g.length - 1);
    return mean >= threshold ? 1 : 0;
  }
  if (mode === "choice" || mode === "grounded") {
    const right = gold.answer !== undefined && parseChoice(text, gold.options ?? []) === gold.answer;
    if (mode === "choice") return right ? 1 : 0;
    const glueText = answerBlock(completion, { tag: "glue" }).text;
    const glue = glueText === null ? null : parseGlue(glueText);
    return right && glue && gold.glue && spansIou(gold.glue, glue) >= threshold ? 1 : 0;
  }
  return null;
}

if (!rewards.has(visionCorrectReward.name)) rewards.register(visionCorrectReward);
