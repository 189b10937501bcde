/**
 * `npm run bench:vision` (issue 15), first part: Visual-RFT's claim that few-shot RL beats few-shot SFT, in miniature,
 * on the shared harness (bench/harness/, docs/benchmarks.md). A SKELETON: the arms and metrics are wired and a smoke
 * run checks the plumbing; the settings are not tuned and no figure has been measured (docs/vision.md).
 *
 * Per seed and k in 1, 2, 4, 8 (examples per class of vision-classify, `shotsPerClass`):
 * - base: the seed's pretrained policy (BENCH_VISION_PRETRAIN: SFT on coarse questions, whose choices differ in colour
 *   or shape, by default) with a short SFT warm start on the k shots; the few-shot questions' choices differ in
 *   texture (BENCH_VISION_FEWSHOT_VARY), which the pretraining never asked about;
 * - SFT: the base, more SFT on the same k shots, as many sequences as the RL arm trains on (steps x prompts x G);
 * - RL: the base, GRPO with the class reward plus the format reward (class-match) on the same k shots;
 * - control: the RL arm with rewards permuted inside each group (withinGroupControl).
 * Every arm is evaluated on the same held-out scenes at every decoding; gains are taken at the base's best decoding.
 * Prints vision.rft_minus_sft.k1 ... .k8 (RL gain minus SFT gain, points) and vision.control_gain (points). Target
 * (issue 15): RL >= SFT + 10 points at k <= 4.
 *
 * Detection: per seed, an SFT start on fresh vision-detection scenes, GRPO from it and its control; held-out COCO
 * mAP@[.5:.95] (src/rewards/map.ts) of greedy answers, each listed box scored by its Confidence. Prints
 * vision.detection_map_gain and vision.detection_control_map_gain (points; target: gain >= 10).
 *
 * Video (./vision-video.ts): joint RL on the video mix against RL on temporal grounding alone, and the joint arm's
 * shuffled-reward control, from one SFT start per seed; prints vision.grounding_miou_gain (target ≥ 10),
 * vision.joint_minus_single_miou, vision.video_control_miou_gain, vision.tracking_overlap_gain, vision.grounded_qa_gain.
 *
 * Environment: BENCH_SEED_LIST (default 0,1,2), BENCH_SPLIT (final | tune), BENCH_VISION_OUT (default
 * runs/bench-vision), BENCH_VISION_PARTS (default fewshot,detection,video: which parts run), BENCH_VISION_SHOTS
 * (default 1,2,4,8), BENCH_VISION_PRETRAIN (coarse | detection | none; see PRETRAIN),
 * BENCH_VISION_FEWSHOT_VARY (default texture), BENCH_VISION_PRETRAIN_VARY (default colour,shape), the few-shot RL
 * arms' BENCH_VISION_RL_LR (2e-4), BENCH_VISION_RL_STEPS (60), BENCH_VISION_RL_PROMPTS (8) and BENCH_VISION_RL_BETA
 * (KL weight, 0), BENCH_VISION_SMOKE=1
 * (one seed, k = 1, tiny runs: the figures mean nothing).
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { loadModel } from "../src/models/checkpoint.js";
import type { Example } from "../src/tasks/types.js";
import { detectionMap } from "../src/tasks/vision/detection-map.js";
import type { DetectionGold } from "../src/tasks/vision/tasks.js";
import { getTask } from "../src/tasks/index.js";
import { evaluate } from "../src/trainer/evaluate.js";
import { train } from "../src/trainer/train.js";
import { visionRecipe } from "./vision-recipe.js";
import { videoEffect } from "./vision-video.js";
import {
  DECODINGS,
  benchLine,
  gainOverBest,
  heldOutExamples,
  countFromEnv,
  seedsFromEnv,
  splitFromEnv,
  summarize,
  withinGroupControl,
  type PassByDecoding,
} from "./harness/index.js";

const ROOT = resolve(import.meta.dirname, "..");
const SMOKE = process.env.BENCH_VISION_SMOKE === "1";
const OUT = resolve(process.env.BENCH_VISION_OUT ?? join(ROOT, "runs", SMOKE ? "bench-vision-smoke" : "bench-vision"));
const SEEDS = seedsFromEnv(process.env.BENCH_SEED_LIST, SMOKE ? [0] : [0, 1, 2]);
const SPLIT = splitFromEnv(process.env.BENCH_SPLIT);
const SHOTS = SMOKE ? [1] : shotsFromEnv(process.env.BENCH_VISION_SHOTS);
/**
 * What the few-shot arms start from (BENCH_VISION_PRETRAIN), playing the part of Qwen2-VL's pretraining:
 * - `coarse` (default): SFT on fresh vision-classify questions whose choices differ in colour or shape, never in
 *   texture (`vary: [colour, shape]`). The base then knows the answer format, the class names, colours and shapes,
 *   and nothing that tells textures apart: the few-shot questions (FEWSHOT_VARY, texture by default) are new to it.
 * - `detection`: the detection part's SFT start (fresh vision-detection scenes, whose prompts name colours and
 *   shapes and which never answers with a class name). A first probe put its k = 4 base at 0.5% (docs/vision.md).
 * - `none`: a fresh policy (its k = 4 base stayed at chance).
 */
const PRETRAIN = process.env.BENCH_VISION_PRETRAIN ?? "coarse";
if (!["coarse", "detection", "none"].includes(PRETRAIN))
  throw new Error(`BENCH_VISION_PRETRAIN: "coarse", "detection" or "none", not "${PRETRAIN}"`);
/** The attributes the few-shot questions' choices differ in (BENCH_VISION_FEWSHOT_VARY, comma-separated). */
const FEWSHOT_VARY = (process.env.BENCH_VISION_FEWSHOT_VARY ?? "texture").split(",").map((v) => v.trim());
/** The few-shot RL arms' learning rate (BENCH_VISION_RL_LR; tune it on BENCH_SPLIT=tune). */
const FEWSHOT_RL_LR = Number(process.env.BENCH_VISION_RL_LR ?? 2e-4);
if (!(FEWSHOT_RL_LR > 0 && FEWSHOT_RL_LR < 1))
  throw new Error(`BENCH_VISION_RL_LR: a learning rate in (0, 1), not ${process.env.BENCH_VISION_RL_LR}`);
/**
 * The few-shot RL arms' steps and prompts per step (BENCH_VISION_RL_STEPS, BENCH_VISION_RL_PROMPTS; group 8). The SFT
 * arm trains on as many sequences (steps × prompts × group / 16).
 */
const FEWSHOT_RL = {
  steps: countFromEnv("BENCH_VISION_RL_STEPS", SMOKE ? 1 : 60),
  prompts: countFromEnv("BENCH_VISION_RL_PROMPTS", SMOKE ? 2 : 8),
};
/**
 * The few-shot RL arms' KL weight to their start (BENCH_VISION_RL_BETA, default 0; Visual-RFT keeps a KL term,
 * arXiv 2503.01785 §3.1).
 */
const FEWSHOT_RL_BETA = Number(process.env.BENCH_VISION_RL_BETA ?? 0);
if (!(FEWSHOT_RL_BETA >= 0))
  throw new Error(`BENCH_VISION_RL_BETA: a weight ≥ 0, not ${process.env.BENCH_VISION_RL_BETA}`);
/** The attributes the coarse pretraining's questions differ in (BENCH_VISION_PRETRAIN_VARY; default colour,shape). */
const PRETRAIN_VARY = (process.env.BENCH_VISION_PRETRAIN_VARY ?? "colour,shape").split(",").map((v) => v.trim());
/** SFT steps of the coarse pretraining (fresh questions, batch 16). */
const PRETRAIN_STEPS = SMOKE ? 2 : 400;

function shotsFromEnv(v: string | undefined): number[] {
  if (v === undefined) return [1, 2, 4, 8];
  const ks = v.split(",").map((x) => Number(x.trim()));
  if (ks.some((k) => !Number.isInteger(k) || k < 1))
    throw new Error(`BENCH_VISION_SHOTS: a comma-separated list of shots per class (integers ≥ 1), not "${v}"`);
  return ks;
}
const PART_NAMES = ["fewshot", "detection", "video"] as const;
const PARTS = new Set(
  (process.env.BENCH_VISION_PARTS ?? PART_NAMES.join(",")).split(",").map((p) => {
    const name = p.trim();
    if (!(PART_NAMES as readonly string[]).includes(name))
      throw new Error(`BENCH_VISION_PARTS: unknown part "${name}" (known: ${PART_NAMES.join(", ")})`);
    return name;
  }),
);

const S = SMOKE
  ? { baseSteps: 2, rlSteps: 1, prompts: 2, group: 2, evalExamples: 4, maxTokens: 40 }
  : { baseSteps: 60, rlSteps: 60, prompts: 8, group: 8, evalExamples: 200, maxTokens: 40 };
const SFT_BATCH = 16;
const MODEL = {
  type: "new",
  arch: "llama",
  maxSeqLen: 192,
  ...(SMOKE ? { dModel: 32, nLayers: 1, nHeads: 2 } : { dModel: 96, nLayers: 3, nHeads: 4, nKvHeads: 2 }),
  vision: { imageSize: 40, patchSize: 4, mergeSize: 2, dModel: SMOKE ? 16 : 64, nLayers: SMOKE ? 1 : 2, nHeads: 4 },
};

/**
 * A run of a task from `model` (new, or a checkpoint), with `sftSteps` of SFT first (0 = none); `rl` overrides the
 * RL arm's steps and prompts (default S's), lr (the recipe's 2e-4) and KL weight (0).
 */
function taskRecipe(
  name: string,
  task: object,
  seed: number,
  model: object,
  sftSteps: number,
  maxTokens: number,
  rl: { steps?: number; prompts?: number; lr?: number; beta?: number } = {},
) {
  return visionRecipe({
    name,
    seed,
    outDir: OUT,
    model,
    task,
    sft: { enabled: sftSteps > 0, steps: Math.max(1, sftSteps), batchSize: SFT_BATCH },
    rl: {
      steps: Math.max(1, rl.steps ?? S.rlSteps),
      prompts: rl.prompts ?? S.prompts,
      group: S.group,
      maxTokens,
      ...(rl.lr !== undefined ? { lr: rl.lr } : {}),
      ...(rl.beta !== undefined ? { beta: rl.beta } : {}),
    },
  });
}

/** A run on k-shot vision-classify. */
function recipe(name: string, k: number, seed: number, model: object, sftSteps: number) {
  const task = {
    name: "vision-classify",
    options: { shotsPerClass: k, vary: FEWSHOT_VARY },
    trainExamples: 36 * k,
    testExamples: 50,
    seed: 0,
  };
  return taskRecipe(name, task, seed, model, sftSteps, S.maxTokens, {
    ...FEWSHOT_RL,
    lr: FEWSHOT_RL_LR,
    beta: FEWSHOT_RL_BETA,
  });
}

/** Held-out accuracy of a saved model at every decoding. */
async function passAt(dir: string, seed: number): Promise<PassByDecoding> {
  const { model, tokenizer } = loadModel(dir);
  const task = getTask("vision-classify", { vary: FEWSHOT_VARY });
  const examples = heldOutExamples(task, SPLIT, S.evalExamples);
  const pass: PassByDecoding = {};
  for (const d of DECODINGS) {
    const res = await evaluate(model, tokenizer, task, examples, {
      temperature: d.temperature,
      k: [1],
      maxNewTokens: S.maxTokens,
      seed,
    });
    pass[d.label] = res.metrics["eval/vision-classify/pass@1"]!;
  }
  return pass;
}

/** SFT only (stopAfter 0): the model saved as checkpoints/start. */
async function sftOnly(name: string, k: number, seed: number, model: object, steps: number): Promise<string> {
  const res = await train(recipe(name, k, seed, model, steps), {
    resume: false,
    overwrite: true,
    stopAfter: 0,
    reporters: [],
  });
  return join(res.runDir, "checkpoints", "start");
}

/** GRPO from `start` (with the shuffled-reward control when asked): the final checkpoint. */
async function rl(name: string, k: number, seed: number, start: string, control: boolean): Promise<string> {
  const config = recipe(name, k, seed, { type: "checkpoint", path: start }, 0);
  const res = await train(config, {
    resume: false,
    overwrite: true,
    reporters: [],
    ...(control ? { transformGroups: withinGroupControl(seed) } : {}),
  });
  return join(res.runDir, "checkpoints", `step-${res.step}`);
}

const DETECTION = { name: "vision-detection", options: {}, trainExamples: 3000, testExamples: 50, seed: 0 };
const DET = SMOKE ? { sftSteps: 2, maxTokens: 40 } : { sftSteps: 400, maxTokens: 160 };
const DET_MODEL = { ...MODEL, maxSeqLen: 256 };

/** COCO mAP@[.5:.95] of a saved model's greedy detections on held-out scenes (each box scored by its Confidence). */
async function detectionMapOf(dir: string, seed: number): Promise<number> {
  const { model, tokenizer } = loadModel(dir);
  const task = getTask("vision-detection", {});
  const examples = heldOutExamples(task, SPLIT, S.evalExamples) as Example<DetectionGold>[];
  const res = await evaluate(model, tokenizer, task, examples, {
    temperature: 0,
    k: [1],
    maxNewTokens: DET.maxTokens,
    seed,
  });
  const texts = new Map(res.groups.map((g) => [g.exampleId, g.rollouts[0]!.text]));
  return detectionMap(
    examples,
    examples.map((e) => texts.get(e.id) ?? ""),
  ).map;
}

/** A detection run: SFT only (`stopAfter` 0, the start checkpoint) or RL (the last checkpoint). */
async function detectionRun(
  name: string,
  seed: number,
  model: object,
  sftSteps: number,
  stopAfter?: number,
  control = false,
) {
  const config = taskRecipe(name, DETECTION, seed, model, sftSteps, DET.maxTokens);
  const res = await train(config, {
    resume: false,
    overwrite: true,
    reporters: [],
    ...(stopAfter === 0 ? { stopAfter: 0 } : {}),
    ...(control ? { transformGroups: withinGroupControl(seed) } : {}),
  });
  return join(res.runDir, "checkpoints", stopAfter === 0 ? "start" : `step-${res.step}`);
}

/** `make` memoised per seed: each seed's result is made once per process and shared by the parts that need it. */
function oncePerSeed<T>(make: (seed: number) => Promise<T>): (seed: number) => Promise<T> {
  const made = new Map<number, Promise<T>>();
  return (seed) => made.get(seed) ?? made.set(seed, make(seed)).get(seed)!;
}

/** The detection SFT start of a seed: the detection part's start and the few-shot `detection` pretraining. */
const detectionStart = oncePerSeed((seed) => detectionRun(`det-start-${seed}`, seed, DET_MODEL, DET.sftSteps, 0));

/** The detection effect: SFT start, RL and control per seed; prints the mAP gains. */
async function detection(): Promise<void> {
  const gains: number[] = [];
  const controls: number[] = [];
  for (const seed of SEEDS) {
    const run = (name: string, model: object, sftSteps: number, stopAfter?: number, control = false) =>
      detectionRun(name, seed, model, sftSteps, stopAfter, control);
    const start = await detectionStart(seed);
    const from = { type: "checkpoint", path: start };
    const [s, r, c] = [
      await detectionMapOf(start, seed),
      await detectionMapOf(await run(`det-rl-${seed}`, from, 0), seed),
      await detectionMapOf(await run(`det-control-${seed}`, from, 0, undefined, true), seed),
    ];
    gains.push(r - s);
    controls.push(c - s);
    console.error(
      `detection seed ${seed}: mAP start ${(100 * s).toFixed(1)}, RL ${(100 * r).toFixed(1)}, control ${(100 * c).toFixed(1)}`,
    );
  }
  line("vision.detection_map_gain", 100 * summarize(gains).mean, "points");
  line("vision.detection_control_map_gain", 100 * summarize(controls).mean, "points");
}

const line = (metric: string, value: number, unit: string) => console.log(benchLine("vision", metric, value, unit));
const fmt = (p: PassByDecoding) => DECODINGS.map((d) => `${d.label} ${(100 * p[d.label]!).toFixed(1)}`).join(", ");

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  console.error(
    `bench:vision seeds ${SEEDS.join(",")} split ${SPLIT}${SMOKE ? " (smoke: the figures mean nothing)" : ""}`,
  );
  if (PARTS.has("fewshot")) await fewShot();
  if (PARTS.has("detection")) await detection();
  if (PARTS.has("video")) await videoEffect({ seeds: SEEDS, split: SPLIT, outDir: OUT, smoke: SMOKE });
}

/** The coarse pretraining of a seed (see PRETRAIN): SFT only, on fresh questions. */
const coarseStart = oncePerSeed(async (seed) => {
  const task = {
    name: "vision-classify",
    options: { vary: PRETRAIN_VARY },
    trainExamples: PRETRAIN_STEPS * SFT_BATCH, // every sequence a fresh question
    testExamples: 50,
    seed: 0,
  };
  const config = taskRecipe(`pretrain-coarse-${seed}`, task, seed, MODEL, PRETRAIN_STEPS, S.maxTokens);
  const res = await train(config, { resume: false, overwrite: true, stopAfter: 0, reporters: [] });
  return join(res.runDir, "checkpoints", "start");
});

/** The model the few-shot bases of a seed start from (see PRETRAIN). */
async function pretrained(seed: number): Promise<object> {
  if (PRETRAIN === "none") return MODEL;
  const start = PRETRAIN === "detection" ? detectionStart : coarseStart;
  return { type: "checkpoint", path: await start(seed) };
}

/** Visual-RFT's few-shot effect: base, SFT, RL and control per k and seed; prints the RL − SFT margins. */
async function fewShot(): Promise<void> {
  const controls: number[] = [];
  for (const k of SHOTS) {
    const margins: number[] = [];
    for (const seed of SEEDS) {
      const from = await pretrained(seed);
      const base = await sftOnly(`k${k}-base-${seed}`, k, seed, from, S.baseSteps);
      const sftSteps = Math.ceil((FEWSHOT_RL.steps * FEWSHOT_RL.prompts * S.group) / SFT_BATCH); // RL's sequences
      const sft = await sftOnly(`k${k}-sft-${seed}`, k, seed, { type: "checkpoint", path: base }, sftSteps);
      const rlDir = await rl(`k${k}-rl-${seed}`, k, seed, base, false);
      const ctlDir = await rl(`k${k}-control-${seed}`, k, seed, base, true);
      const [b, s, r, c] = await Promise.all([base, sft, rlDir, ctlDir].map((d) => passAt(d, seed)));
      const gain = (a: PassByDecoding) => gainOverBest(b!, a).atStartBest;
      margins.push(gain(r!) - gain(s!));
      controls.push(gain(c!));
      console.error(
        `k ${k} seed ${seed}: base [${fmt(b!)}]\n  SFT [${fmt(s!)}]\n  RL [${fmt(r!)}]\n  control [${fmt(c!)}]`,
      );
    }
    line(`vision.rft_minus_sft.k${k}`, 100 * summarize(margins).mean, "points");
  }
  line("vision.control_gain", 100 * summarize(controls).mean, "points");
}

await main();
