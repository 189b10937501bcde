/**
 * The video part of `npm run bench:vision` (issue 15): VideoChat-R1's claim that joint RL on the video task mix beats
 * RL on temporal grounding alone, in miniature. Per seed, from one SFT start on gold answers of the mix
 * (recipes/videochat-r1.yaml's model and sizes):
 * - joint: GRPO on `video-mix` (temporal grounding, tracking, grounded QA in turn);
 * - single: GRPO on `video-temporal` alone, the same steps, prompts and group size;
 * - control: the joint arm with rewards permuted inside each group (withinGroupControl).
 * Each model (the start too) is scored greedily on held-out videos of three tasks: temporal-grounding mIoU (the mean
 * temporal IoU of the answer's span with the gold segment, 0 when it does not parse), tracking overlap (the mean box
 * IoU over frames 1..N-1, the tracking-iou reward's term) and grounded-QA accuracy (the `correct` verdict).
 *
 * Metrics: vision.grounding_constant_miou (percent: the best single span given as every answer, the blind baseline a
 * policy that stops looking converges to; RL arms of 2026-12-07 did), then, in points, mean over seeds:
 * vision.grounding_miou_gain (joint − start; target ≥ 10),
 * vision.joint_minus_single_miou, vision.video_control_miou_gain (control − start), vision.tracking_overlap_gain and
 * vision.grounded_qa_gain (joint − start). Greedy only: the mIoU is a mean over answers, not a pass rate, so the
 * harness's best-decoding baseline does not apply; the control shows whether the reward, not extra decoding
 * practice, moves it.
 */
import { join } from "node:path";
import { loadModel } from "../src/models/checkpoint.js";
import { temporalIouReward, trackingIouReward } from "../src/rewards/video.js";
import { getTask } from "../src/tasks/index.js";
import type { Example } from "../src/tasks/types.js";
import type { VideoGold } from "../src/tasks/vision/video-tasks.js";
import { evaluate } from "../src/trainer/evaluate.js";
import { train } from "../src/trainer/train.js";
import { visionRecipe } from "./vision-recipe.js";
import { benchLine, countFromEnv, heldOutExamples, summarize, withinGroupControl } from "./harness/index.js";

/**
 * Sizes of the video part: recipes/videochat-r1.yaml's, or a plumbing size. Tuning knobs (BENCH_SPLIT=tune):
 * BENCH_VISION_VIDEO_SFT_STEPS (the start's SFT steps, 200), BENCH_VISION_VIDEO_TRAIN (distinct training videos, 600),
 * BENCH_VISION_VIDEO_RL_STEPS (60), BENCH_VISION_VIDEO_RL_LR (2e-4), and the data's BENCH_VISION_VIDEO_FRAMES (8) and
 * BENCH_VISION_VIDEO_MAX_SPAN (unset), see `videoData`.
 */
export function videoSizes(smoke: boolean) {
  const base = smoke
    ? { sftSteps: 2, rlSteps: 1, prompts: 2, group: 2, evalExamples: 3, dModel: 32, layers: 1 }
    : { sftSteps: 200, rlSteps: 60, prompts: 6, group: 6, evalExamples: 100, dModel: 96, layers: 3 };
  const lr = Number(process.env.BENCH_VISION_VIDEO_RL_LR ?? 2e-4);
  if (!(lr > 0 && lr < 1)) throw new Error(`BENCH_VISION_VIDEO_RL_LR: a learning rate in (0, 1), not ${lr}`);
  return {
    ...base,
    sftSteps: countFromEnv("BENCH_VISION_VIDEO_SFT_STEPS", base.sftSteps),
    rlSteps: countFromEnv("BENCH_VISION_VIDEO_RL_STEPS", base.rlSteps),
    trainExamples: countFromEnv("BENCH_VISION_VIDEO_TRAIN", 600),
    maxTokens: answerTokens(VIDEO.maxFrames),
    lr,
  };
}

/**
 * The videos of every task here: 24 px frames, BENCH_VISION_VIDEO_FRAMES of them (default 8, as in
 * recipes/videochat-r1.yaml), and with BENCH_VISION_VIDEO_MAX_SPAN the most frames a late or early object stays on
 * screen (unset: any span; see `VideoOptions.maxSpan` and docs/vision.md, "the blind answer").
 */
export function videoData(): {
  size: number;
  minFrames: number;
  maxFrames: number;
  minSize: number;
  maxSize: number;
  maxSpan?: number;
} {
  const frames = countFromEnv("BENCH_VISION_VIDEO_FRAMES", 8);
  if (frames < 4 || frames > 32) throw new Error(`BENCH_VISION_VIDEO_FRAMES: 4 to 32 frames, not ${frames}`);
  const span = process.env.BENCH_VISION_VIDEO_MAX_SPAN;
  const data = { size: 24, minFrames: frames, maxFrames: frames, minSize: 5, maxSize: 8 };
  return span === undefined || span.trim() === ""
    ? data
    : { ...data, maxSpan: Math.max(2, countFromEnv("BENCH_VISION_VIDEO_MAX_SPAN", 2)) };
}
export const VIDEO = videoData();
/**
 * Token budgets for VIDEO's frame count: the sequence (the longest prompt, the grounded-QA one, is about 17 tokens a
 * frame plus 120; the longest answer, tracking's, about 15 a frame plus 10) and the RL completions. 384 and 140 at 8
 * frames, as before; 640 and 260 at 16.
 */
export const seqLen = (frames: number) => 128 + 32 * frames;
export const answerTokens = (frames: number) => 20 + 15 * frames;

/** One model's held-out figures (shares in [0, 1]). */
export interface VideoFigures {
  miou: number;
  tracking: number;
  qa: number;
}

/** Runs the video part for `seeds` under `outDir`; prints its JSON lines and a readable line per seed. */
export async function videoEffect(opts: {
  seeds: readonly number[];
  split: "tune" | "final";
  outDir: string;
  smoke: boolean;
}): Promise<void> {
  const V = videoSizes(opts.smoke);
  const model = {
    type: "new",
    arch: "llama",
    dModel: V.dModel,
    nLayers: V.layers,
    nHeads: 4,
    nKvHeads: 2,
    maxSeqLen: seqLen(VIDEO.maxFrames),
    vision: { imageSize: 24, patchSize: 4, mergeSize: 2, dModel: 64, nLayers: opts.smoke ? 1 : 2, nHeads: 4, dFf: 128 },
  };
  const recipe = (name: string, task: string, seed: number, from: object, sft: boolean) =>
    visionRecipe({
      name,
      seed,
      outDir: opts.outDir,
      model: from,
      task: { name: task, options: VIDEO, trainExamples: V.trainExamples, testExamples: 8, seed: 0 },
      sft: { enabled: sft, steps: V.sftSteps, batchSize: 8 },
      rl: { steps: V.rlSteps, prompts: V.prompts, group: V.group, maxTokens: V.maxTokens, lr: V.lr },
    });
  const rows: {
    seed: number;
    start: VideoFigures;
    joint: VideoFigures;
    single: VideoFigures;
    control: VideoFigures;
  }[] = [];
  const temporal = getTask("video-temporal", VIDEO);
  const blind = await bestConstantSpan(heldOutExamples(temporal, opts.split, V.evalExamples) as Example<VideoGold>[]);
  console.error(
    `video: the best constant answer, "${blind.span[0]} to ${blind.span[1]}" for every question, scores grounding ` +
      `mIoU ${pts(blind.miou)} on these held-out videos (the blind baseline)`,
  );
  console.log(benchLine("vision", "vision.grounding_constant_miou", 100 * blind.miou, "percent"));
  for (const seed of opts.seeds) {
    const startRun = await train(recipe(`video-start-${seed}`, "video-mix", seed, model, true), {
      resume: false,
      overwrite: true,
      stopAfter: 0,
      reporters: [],
    });
    const start = join(startRun.runDir, "checkpoints", "start");
    const arm = async (name: string, task: string, control: boolean) => {
      const res = await train(recipe(`video-${name}-${seed}`, task, seed, { type: "checkpoint", path: start }, false), {
        resume: false,
        overwrite: true,
        reporters: [],
        ...(control ? { transformGroups: withinGroupControl(seed) } : {}),
      });
      return join(res.runDir, "checkpoints", `step-${res.step}`);
    };
    const figures = (dir: string) => videoFigures(dir, seed, opts.split, V.evalExamples);
    const row = {
      seed,
      start: await figures(start),
      joint: await figures(await arm("joint", "video-mix", false)),
      single: await figures(await arm("single", "video-temporal", false)),
      control: await figures(await arm("control", "video-mix", true)),
    };
    rows.push(row);
    const f = (x: VideoFigures) => `mIoU ${pts(x.miou)}, tracking ${pts(x.tracking)}, QA ${pts(x.qa)}`;
    console.error(
      `video seed ${seed}: start [${f(row.start)}]\n  joint [${f(row.joint)}]\n  single [${f(row.single)}]\n  control [${f(row.control)}]`,
    );
  }
  type Row = (typeof rows)[number];
  const figures: [string, (r: Row) => number][] = [
    ["grounding_miou_gain", (r) => r.joint.miou - r.start.miou],
    ["joint_minus_single_miou", (r) => r.joint.miou - r.single.miou],
    ["video_control_miou_gain", (r) => r.control.miou - r.start.miou],
    ["tracking_overlap_gain", (r) => r.joint.tracking - r.start.tracking],
    ["grounded_qa_gain", (r) => r.joint.qa - r.start.qa],
  ];
  for (const [metric, f] of figures) line(`vision.${metric}`, 100 * summarize(rows.map(f)).mean);
}

/** Greedy held-out figures of a saved model on the three tasks. */
export async function videoFigures(
  dir: string,
  seed: number,
  split: "tune" | "final",
  n: number,
): Promise<VideoFigures> {
  const { model, tokenizer } = loadModel(dir);
  const run = async (task: string) => {
    const t = getTask(task, VIDEO);
    const examples = heldOutExamples(t, split, n) as Example<VideoGold>[];
    const maxNewTokens = Math.max(200, t.maxNewTokens ?? 0);
    const res = await evaluate(model, tokenizer, t, examples, { temperature: 0, k: [1], maxNewTokens, seed });
    const text = new Map(res.groups.map((g) => [g.exampleId, g.rollouts[0]!.text]));
    return { examples, text, pass: res.metrics[`eval/${task}/pass@1`]! };
  };
  const temporal = await run("video-temporal");
  const tracking = await run("video-tracking");
  const qa = await run("video-grounded-qa");
  return {
    miou: await groundingMiou(temporal.examples, temporal.text),
    tracking: await trackingOverlap(tracking.examples, tracking.text),
    qa: qa.pass,
  };
}

/**
 * The blind baseline of temporal grounding: the one span, on the frames' 0.5 s grid, that scores the best mIoU when
 * given as the answer to every question, with that mIoU. A policy that stops looking at the video converges to it,
 * so a grounding gain means something only above it.
 */
export async function bestConstantSpan(
  examples: Example<VideoGold>[],
): Promise<{ span: [number, number]; miou: number }> {
  const end = Math.max(...examples.map((e) => e.gold.duration ?? 0));
  let best = { span: [0, end] as [number, number], miou: -1 };
  for (let a = 0; a < end; a += 0.5)
    for (let b = a + 0.5; b <= end; b += 0.5) {
      const miou = await groundingMiou(examples, new Map(examples.map((e) => [e.id, `<answer>${a} to ${b}</answer>`])));
      if (miou > best.miou) best = { span: [a, b], miou };
    }
  return best;
}

/** Mean temporal IoU of each answer's span with its gold segment (0 when the answer does not parse). */
export function groundingMiou(examples: Example<VideoGold>[], text: Map<string, string>): Promise<number> {
  return meanTerm(examples, text, async (e, c) => {
    const r = await temporalIouReward.score({ completion: c, gold: { segment: e.gold.segment! } }, tOptions);
    return r.terms.tiou ?? 0;
  });
}

/** Mean box IoU over frames 1..N-1 of each tracking answer (the tracking-iou reward's term; 0 unparsed). */
export function trackingOverlap(examples: Example<VideoGold>[], text: Map<string, string>): Promise<number> {
  return meanTerm(examples, text, async (e, c) => {
    const r = await trackingIouReward.score({ completion: c, gold: { boxes: e.gold.boxes! } }, kOptions);
    return r.terms.trackIou ?? 0;
  });
}

const tOptions = temporalIouReward.options.parse({ requireThink: false });
const kOptions = trackingIouReward.options.parse({ requireThink: false });

/** The mean of a per-answer figure over the examples (a missing answer counts 0). */
async function meanTerm(
  examples: Example<VideoGold>[],
  text: Map<string, string>,
  f: (e: Example<VideoGold>, completion: string) => Promise<number>,
): Promise<number> {
  let sum = 0;
  for (const e of examples) sum += await f(e, text.get(e.id) ?? "");
  return sum / examples.length;
}

const pts = (x: number) => (100 * x).toFixed(1);
const line = (metric: string, value: number) => console.log(benchLine("vision", metric, value, "points"));
