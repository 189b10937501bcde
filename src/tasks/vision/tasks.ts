/**
 * The image tasks over seeded scenes (./scene.ts), scored by Visual-RFT's rewards (arXiv 2503.01785 §3.2):
 *
 *   vision-detection  "<image> List every red triangle." → a JSON list of {Position: [x1,y1,x2,y2], Confidence} in
 *                     pixels (box-detection: IoU + confidence + format)
 *   vision-grounding  "<image> Box of the largest circle." → (x1,y1),(x2,y2) on the 0-1000 grid (box-grounding:
 *                     GIoU + 1)
 *   vision-classify   "<image> Which: red solid circle, red striped circle, red hollow circle?" → the class
 *                     (class-match: accuracy + format); the choices differ in one attribute (fine-grained).
 *
 * Each example carries its rendered image (`images`, ref = the example id) and its scene in the gold, so the image
 * can be rebuilt exactly. A weight-0 "correct" term (./vision-correct.ts) decides pass@k. `shotsPerClass` (classify)
 * makes the train split k examples per class, repeated: Visual-RFT's few-shot setting. Departures: answers come
 * without <think> by default (`requireThink: false`; a tiny model has nothing to think with), the canvas is 40 pixels
 * so that a pixel is exactly 25 grid units.
 */
import { z } from "zod";
import { Rng } from "../../util/rng.js";
import { defineTask } from "../define-task.js";
import { generateExamples, splitOf, type Drawn } from "../generate.js";
import type { Example } from "../types.js";
import {
  COLOURS,
  SHAPES,
  TEXTURES,
  className,
  drawObject,
  drawScene,
  objectBox,
  renderScene,
  type Scene,
  type SceneObject,
  type SceneOptions,
} from "./scene.js";
import "./vision-correct.js";

/** Options shared by the scene tasks. */
const sceneFields = {
  size: z.number().int().min(16).max(256).default(40).describe("canvas side in pixels"),
  minObjects: z.number().int().min(1).max(12).default(2).describe("fewest objects in a scene"),
  maxObjects: z.number().int().min(1).max(12).default(4).describe("most objects in a scene"),
  minSize: z.number().int().min(4).default(8).describe("smallest object side in pixels"),
  maxSize: z.number().int().min(4).default(16).describe("largest object side in pixels"),
  maxOverlap: z.number().min(0).max(1).default(0.2).describe("largest IoU between two objects' boxes"),
  requireThink: z.boolean().default(false).describe("the format term wants <think> before <answer>"),
};

/** Every class name, in a fixed order (colour × texture × shape). */
export const ALL_CLASSES: string[] = Object.keys(COLOURS).flatMap((colour) =>
  TEXTURES.flatMap((texture) => SHAPES.map((shape) => `${colour} ${texture} ${shape}`)),
);

/** An example with its rendered scene image (ref = its id). */
function withImage<G extends { scene: Scene }>(e: Example<G>): Example<G> {
  return { ...e, images: [renderScene(e.gold.scene, e.id)] };
}

const sceneKey = (s: Scene) => JSON.stringify(s.objects.map((o) => [o.shape, o.colour, o.texture, o.x, o.y, o.size]));

// ----------------------------------------------------------------------------------------------------- detection

const detectionOptions = z.strictObject(sceneFields);
/** Gold of vision-detection: the query's boxes (pixels) and the scene. */
export interface DetectionGold {
  scene: Scene;
  query: string;
  boxes: number[][];
}

const detection = defineTask<DetectionGold, z.output<typeof detectionOptions>>({
  name: "vision-detection",
  summary: "list every object of a colour and shape in a generated scene, with pixel boxes (Visual-RFT detection)",
  options: detectionOptions,
  build(o) {
    const draw = (rng: Rng): Drawn<DetectionGold> => {
      const scene = drawScene(rng, o);
      const pick = scene.objects[rng.int(scene.objects.length)]!;
      const query = `${pick.colour} ${pick.shape}`;
      const boxes = scene.objects.filter((x) => `${x.colour} ${x.shape}` === query).map((x) => [...x.box]);
      const answer = JSON.stringify(boxes.map((b) => ({ Position: b, Confidence: 1 })));
      return {
        key: `${sceneKey(scene)}|${query}`,
        prompt: `<image>\nList every ${query}.\n`,
        gold: { scene, query, boxes },
        goldCompletion: `${o.requireThink ? "<think>I look.</think>" : ""}<answer>${answer}</answer>`,
      };
    };
    return {
      description: `List every object of one colour and shape in a ${o.size}px scene of ${o.minObjects}-${o.maxObjects} objects`,
      terms: [
        { name: "detection", reward: "box-detection", weight: 1, options: { requireThink: o.requireThink } },
        { name: "correct", reward: "vision-correct", weight: 0, options: { mode: "detection" } },
      ],
      correctTerm: "correct",
      stop: ["</answer>"],
      maxNewTokens: 160,
      generate: (split, count, seed) => generateExamples("vision-detection", split, count, seed, draw).map(withImage),
    };
  },
});

// ----------------------------------------------------------------------------------------------------- grounding

const groundingOptions = z.strictObject(sceneFields);
/** Gold of vision-grounding: the box on the 0-1000 grid and the scene. */
export interface GroundingGold {
  scene: Scene;
  box: number[];
}

const grounding = defineTask<GroundingGold, z.output<typeof groundingOptions>>({
  name: "vision-grounding",
  summary: "the box of the largest object of a shape in a generated scene (Visual-RFT grounding, 0-1000 grid)",
  options: groundingOptions,
  build(o) {
    const grid = 1000 / o.size;
    const draw = (rng: Rng): Drawn<GroundingGold> => {
      for (;;) {
        const scene = drawScene(rng, o);
        const shape = scene.objects[rng.int(scene.objects.length)]!.shape;
        const area = (x: SceneObject) => (x.box[2] - x.box[0]) * (x.box[3] - x.box[1]);
        const same = scene.objects.filter((x) => x.shape === shape).sort((a, b) => area(b) - area(a));
        if (same.length > 1 && area(same[0]!) === area(same[1]!)) continue; // "the largest" must be one object
        const box = same[0]!.box.map((v) => Math.round(v * grid));
        return {
          key: `${sceneKey(scene)}|${shape}`,
          prompt: `<image>\nBox of the largest ${shape}.\n`,
          gold: { scene, box },
          goldCompletion: `${o.requireThink ? "<think>I look.</think>" : ""}<answer>(${box[0]},${box[1]}),(${box[2]},${box[3]})</answer>`,
        };
      }
    };
    return {
      description: `The box (0-1000 grid) of the largest object of a shape in a ${o.size}px scene`,
      terms: [
        { name: "grounding", reward: "box-grounding", weight: 1 },
        { name: "correct", reward: "vision-correct", weight: 0, options: { mode: "grounding" } },
      ],
      correctTerm: "correct",
      stop: ["</answer>"],
      maxNewTokens: 48,
      generate: (split, count, seed) => generateExamples("vision-grounding", split, count, seed, draw).map(withImage),
    };
  },
});

// -------------------------------------------------------------------------------------------- fine-grained classes

const classifyOptions = z.strictObject({
  ...sceneFields,
  minObjects: z.literal(1).default(1).describe("one object per image"),
  maxObjects: z.literal(1).default(1).describe("one object per image"),
  shotsPerClass: z
    .number()
    .int()
    .min(0)
    .default(0)
    .describe("few-shot: the train split is this many examples per class, repeated (0 = a fresh example each time)"),
  vary: z
    .array(z.enum(["colour", "texture", "shape"]))
    .min(1)
    .default(["colour", "texture", "shape"])
    .refine((v) => new Set(v).size === v.length, "no attribute twice")
    .describe("the attributes a question's choices may differ in (one per question, drawn uniformly)"),
});
/** Gold of vision-classify: the class, the choices and the scene. */
export interface ClassifyGold {
  scene: Scene;
  label: string;
  classList: string[];
}

const classify = defineTask<ClassifyGold, z.output<typeof classifyOptions>>({
  name: "vision-classify",
  summary: "which of 3-4 classes that differ in one attribute a generated object is (Visual-RFT fine-grained)",
  options: classifyOptions,
  build(o) {
    const drawOf = (rng: Rng, fixed: Partial<SceneObject> = {}): Drawn<ClassifyGold> => {
      const obj = drawObject(rng, o as SceneOptions, fixed);
      const scene: Scene = {
        width: o.size,
        height: o.size,
        objects: [{ ...obj, box: objectBox(obj, o.size, o.size)! }],
      };
      const vary = o.vary[rng.int(o.vary.length)]!;
      const values: readonly string[] =
        vary === "colour" ? Object.keys(COLOURS) : vary === "texture" ? TEXTURES : SHAPES;
      const classList = values.map((v) => className({ ...obj, [vary]: v }));
      const label = className(obj);
      return {
        key: `${sceneKey(scene)}|${vary}`,
        prompt: `<image>\nWhich: ${classList.join(", ")}?\n`,
        gold: { scene, label, classList },
        goldCompletion: `${o.requireThink ? "<think>I look.</think>" : ""}<answer>${label}</answer>`,
      };
    };
    const fewShot = (count: number, seed: number): Example<ClassifyGold>[] => {
      const rng = new Rng(seed).split("vision-classify/shots");
      const pool: Drawn<ClassifyGold>[] = [];
      for (const name of ALL_CLASSES) {
        const [colour, texture, shape] = name.split(" ") as [
          SceneObject["colour"],
          SceneObject["texture"],
          SceneObject["shape"],
        ];
        for (let k = 0; k < o.shotsPerClass;) {
          const d = drawOf(rng, { colour, texture, shape });
          if (splitOf(d.key) === "train") (pool.push(d), k++);
        }
      }
      return Array.from({ length: count }, (_, i) => {
        const d = pool[i % pool.length]!;
        return { id: `vision-classify/train/${i}`, prompt: d.prompt, gold: d.gold, goldCompletion: d.goldCompletion };
      });
    };
    return {
      description: `Fine-grained classification of one object among classes differing in one attribute${o.shotsPerClass ? ` (${o.shotsPerClass} shots per class)` : ""}`,
      terms: [
        { name: "class", reward: "class-match", weight: 1, options: { requireThink: o.requireThink } },
        { name: "correct", reward: "vision-correct", weight: 0, options: { mode: "class" } },
      ],
      correctTerm: "correct",
      stop: ["</answer>"],
      maxNewTokens: 40,
      generate: (split, count, seed) =>
        (split === "train" && o.shotsPerClass > 0
          ? fewShot(count, seed)
          : generateExamples("vision-classify", split, count, seed, (rng) => drawOf(rng))
        ).map(withImage),
    };
  },
});

/** The three image tasks' factories and registry definitions. */
export const visionDetectionTask = detection;
export const visionGroundingTask = grounding;
export const visionClassifyTask = classify;
/** Registry definitions of the image tasks. */
export const VISION_TASKS = [detection.definition, grounding.definition, classify.definition];
