/**
 * The video tasks over seeded videos (./video.ts), scored by VideoChat-R1's rewards (arXiv 2504.06958 §3.2; spec §5):
 *
 *   video-temporal    "When is the blue square on screen?" → "1.5 to 4" seconds (temporal-iou: format + tIoU)
 *   video-tracking    "Track the red circle from [x1,y1,x2,y2]." → one pixel box per frame (tracking-iou)
 *   video-mcq         "Which way does the red circle first move? A. left B. right C. up D. down" (video-mcq)
 *   video-grounded-qa the same question, plus <glue> spans of when the object is on screen (grounded-qa)
 *
 * The prompt gives every frame as `t=0.5s <image>` lines (the frame-time tokens of a video; the models layer's
 * `videoPrompt` writes the same text). Each example carries its frames (`images`) and its video in the gold. A weight-0
 * "correct" term (./vision-correct.ts) decides pass@k. Departure: answers come without <think> (`requireThink`).
 * The time questions (temporal, grounded QA) ask only about objects that appear late or leave early, so "the whole
 * clip" is never the answer by default.
 */
import { z } from "zod";
import type { Rng } from "../../util/rng.js";
import { defineTask, type DefinedTask } from "../define-task.js";
import { generateExamples, type Drawn } from "../generate.js";
import type { Example, RewardTerm } from "../types.js";
import { drawVideo, frameTimes, onScreen, positionAt, renderVideo, track, type Video } from "./video.js";
import "./vision-correct.js";

/** Options of every video task. */
export const videoOptions = z.strictObject({
  size: z.number().int().min(16).max(128).default(32).describe("frame side in pixels"),
  minFrames: z.number().int().min(4).max(32).default(8).describe("fewest frames"),
  maxFrames: z.number().int().min(4).max(32).default(12).describe("most frames"),
  maxObjects: z.number().int().min(1).max(3).default(2).describe("most moving objects"),
  minSize: z.number().int().min(4).default(6).describe("smallest object side"),
  maxSize: z.number().int().min(4).default(10).describe("largest object side"),
  maxSpan: z
    .number()
    .int()
    .min(2)
    .optional()
    .describe("most frames an object that appears late or leaves early is on screen (unset: any span of 2 or more)"),
  requireThink: z.boolean().default(false).describe("the format term wants <think> before <answer>"),
});
type VideoTaskOptions = z.output<typeof videoOptions>;

/** Gold of every video task: the video and what its reward reads. */
export interface VideoGold {
  video: Video;
  /** The task that drew it (set by the joint mix). */
  task?: string;
  segment?: [number, number];
  duration?: number;
  boxes?: number[][];
  answer?: string;
  options?: string[];
  glue?: [number, number][];
}

const DIRECTIONS = ["left", "right", "up", "down"];
const LETTERS = "ABCD";

/** The prompt's frame lines: "t=0.0s <image>" per frame. */
function framesText(v: Video): string {
  return frameTimes(v)
    .map((t) => `t=${t.toFixed(1)}s <image>\n`)
    .join("");
}

const nameOf = (v: Video, i: number) => `${v.movers[i]!.colour} ${v.movers[i]!.shape}`;
const key = (v: Video, q: string) => `${JSON.stringify(v)}|${q}`;

/** The direction of mover i's first step, or null when it moves diagonally or not at all then. */
function firstMove(v: Video, i: number): string | null {
  const m = v.movers[i]!;
  const a = positionAt(m, v.size, m.from),
    b = positionAt(m, v.size, m.from + 1);
  const dx = b.x - a.x,
    dy = b.y - a.y;
  if (dx !== 0 && dy !== 0) return null;
  if (dx !== 0) return dx < 0 ? "left" : "right";
  if (dy !== 0) return dy < 0 ? "up" : "down";
  return null;
}

/** The budget's extra tokens for the reasoning before the answer when `requireThink` is set. */
const THINK_TOKENS = 128;

/** A video task: its question maker (null = draw again), reward term, answer budget (fixed, or from the options). */
function videoTask(
  name: string,
  summary: string,
  reward: string,
  mode: string,
  maxNewTokens: number | ((o: VideoTaskOptions) => number),
  ask: (v: Video, rng: Rng, o: VideoTaskOptions) => { question: string; gold: Omit<VideoGold, "video"> } | null,
): DefinedTask<VideoGold, VideoTaskOptions> {
  return defineTask<VideoGold, VideoTaskOptions>({
    name,
    summary,
    options: videoOptions,
    build(o) {
      const draw = (rng: Rng): Drawn<VideoGold> => {
        for (;;) {
          const video = drawVideo(rng, o);
          const q = ask(video, rng, o);
          if (!q) continue;
          const gold: VideoGold = { video, ...q.gold };
          const think = o.requireThink ? "<think>I watch.</think>" : "";
          return {
            key: key(video, q.question),
            prompt: `${framesText(video)}${q.question}\n`,
            gold,
            goldCompletion: think + goldAnswer(mode, gold),
          };
        }
      };
      const terms: RewardTerm[] = [
        { name: "reward", reward, weight: 1, options: { requireThink: o.requireThink } },
        { name: "correct", reward: "vision-correct", weight: 0, options: { mode } },
      ];
      return {
        description: summary,
        terms,
        correctTerm: "correct",
        stop: mode === "grounded" ? ["</glue>"] : ["</answer>"],
        maxNewTokens:
          (typeof maxNewTokens === "number" ? maxNewTokens : maxNewTokens(o)) + (o.requireThink ? THINK_TOKENS : 0),
        generate: (split, count, seed) =>
          generateExamples(name, split, count, seed, draw).map((e): Example<VideoGold> => ({
            ...e,
            images: renderVideo(e.gold.video, e.id),
          })),
      };
    },
  });
}

/** The gold completion's answer part (the rewards' own formats). */
function goldAnswer(mode: string, g: VideoGold): string {
  if (mode === "span") return `<answer>${g.segment![0]} to ${g.segment![1]}</answer>`;
  if (mode === "track") return `<answer>${JSON.stringify(g.boxes)}</answer>`;
  if (mode === "choice") return `<answer>${g.answer}</answer>`;
  return `<answer>${g.answer}</answer>\n<glue>[${g.glue!.map((s) => `(${s[0]},${s[1]})`).join(",")}]</glue>`;
}

/**
 * The movers whose on-screen span is not the whole clip: the ones a question about time can ask of. Mover 0 (the
 * tracked one) is on screen throughout, so a time question about it would have "the whole clip" as its answer
 * whatever the video shows; asked of every mover, that was 3 questions in 4 (with the default 1-2 objects), and a
 * policy that always answered the whole clip scored about 85% mIoU (docs/vision.md).
 */
function partialMovers(v: Video): number[] {
  return v.movers.flatMap((m, i) => (m.from > 0 || m.to < v.frames ? [i] : []));
}

/**
 * A "which way does it first move" question, its letter and options (null when the mover's first step is diagonal);
 * with `timed`, about a mover that is not on screen throughout (null when there is none).
 */
function directionQuestion(v: Video, rng: Rng, timed = false): { i: number; question: string; answer: string } | null {
  const candidates = timed ? partialMovers(v) : v.movers.map((_, i) => i);
  if (candidates.length === 0) return null;
  const i = candidates[rng.int(candidates.length)]!;
  const dir = firstMove(v, i);
  if (!dir) return null;
  const choices = DIRECTIONS.map((d, k) => `${LETTERS[k]}. ${d}`).join(" ");
  return {
    i,
    question: `Which way does the ${nameOf(v, i)} first move? ${choices}`,
    answer: LETTERS[DIRECTIONS.indexOf(dir)]!,
  };
}

const temporal = videoTask(
  "video-temporal",
  "temporal grounding in a generated video: when is an object on screen, as a time span (VideoChat-R1)",
  "temporal-iou",
  "span",
  32, // "<answer>10.5 to 11.5</answer>" is 29 (24 until 2026-12-07 cut answers such as "1.5 to 2.5" short)
  (v, rng) => {
    const candidates = partialMovers(v);
    if (candidates.length === 0) return null;
    const i = candidates[rng.int(candidates.length)]!;
    return {
      question: `When is the ${nameOf(v, i)} on screen?`,
      gold: { segment: onScreen(v, i), duration: v.frames * 0.5 },
    };
  },
);

const tracking = videoTask(
  "video-tracking",
  "tracking in a generated video: the object's pixel box in every frame, frame 0 given (VideoChat-R1)",
  "tracking-iou",
  "track",
  // one box of at most 15 characters per frame: 200 up to 12 frames (as before), 264 for 16
  (o) => Math.max(200, 24 + 15 * o.maxFrames),
  (v) => {
    const boxes = track(v, 0).map((b) => [...b!]);
    return { question: `Track the ${nameOf(v, 0)} from ${JSON.stringify(boxes[0])}.`, gold: { boxes } };
  },
);

const mcq = videoTask(
  "video-mcq",
  "multiple choice on a generated video: which way an object first moves (VideoChat-R1)",
  "video-mcq",
  "choice",
  24, // "<answer>B</answer>" is 18 (16 until 2026-12-07)
  (v, rng) => {
    const q = directionQuestion(v, rng);
    return q && { question: q.question, gold: { answer: q.answer, options: DIRECTIONS } };
  },
);

const groundedQa = videoTask(
  "video-grounded-qa",
  "grounded QA on a generated video: the direction, with <glue> spans of when the object is on screen (VideoChat-R1)",
  "grounded-qa",
  "grounded",
  56, // "<answer>B</answer>\n<glue>[(10.5,11.5)]</glue>" is 45 (40 until 2026-12-07)
  (v, rng) => {
    const q = directionQuestion(v, rng, true);
    if (!q) return null;
    const question = `${q.question} Give <glue> times it is on screen.`;
    return { question, gold: { answer: q.answer, options: DIRECTIONS, glue: [onScreen(v, q.i)] } };
  },
);

/** The video tasks' factories by name (for the joint mix, ./video-mix.ts). */
export const VIDEO_TASK_FACTORIES = {
  "video-temporal": temporal,
  "video-tracking": tracking,
  "video-mcq": mcq,
  "video-grounded-qa": groundedQa,
};
/** Registry definitions of the video tasks. */
export const VIDEO_TASKS = [temporal.definition, tracking.definition, mcq.definition, groundedQa.definition];
