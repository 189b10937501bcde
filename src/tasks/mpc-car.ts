/**
 * "mpc-car": instruct-to-tune a racing car's MPC (RobotxR1, rewards spec §11). The prompt describes the controller's
 * parameters and asks for a behaviour (centerline, racingLine, reverse, refVelocity(v), smooth) in one of ≥ 20
 * paraphrases; the model answers `<reasoning>…</reasoning><answer>new_mpc_params = {…}</answer>`, and the answer is
 * scored by driving a simulated lap (src/rewards/car).
 *
 * Splits: train prompts are on the circle track and test prompts on the F track (as in the paper: train on a circle,
 * evaluate on another track), so no prompt is shared. With `heldOutParaphrases: n`, the last n paraphrases of each
 * behaviour are asked only in the test split (RobotxR1 evaluates on held-out paraphrases). `prompt: "brief"` drops
 * the parameter table from the prompt (about 1,100 → 200 characters) and shortens the gold reasoning to the
 * behaviour's name (gold answers of about 150 instead of 260 characters), for character-level models on CPU. Each split has (4 + #speeds) behaviours × ≥ 20 paraphrases
 * distinct prompts; a request for more cycles through them again in a new shuffled order (ids stay unique).
 * Gold completions carry the dictionaries tuned by scripts/tune-car.ts (mpc-car-gold.ts).
 */
import { z } from "zod";
import {
  carCompletion,
  DEFAULT_PARAMS,
  PARAM_NAMES,
  PARAM_RANGES,
  SIM_VERSION,
  type CarGold,
  type DrivingCase,
  type TrackName,
} from "../rewards/car/index.js";
import { Rng } from "../util/rng.js";
import { ConfigError } from "../util/errors.js";
import { CAR_GOLD, GOLD_SIM_VERSION } from "./mpc-car-gold.js";
import { CAR_PARAPHRASES } from "./mpc-car-paraphrases.js";
import { defineTask, type TaskParts } from "./define-task.js";
import type { TaskDefinition } from "./registry.js";
import type { Example, RewardTerm, Task } from "./types.js";

/** Options of "mpc-car". */
export const mpcCarOptions = z
  .object({
    trainTrack: z.enum(["circle", "F"]).default("circle").describe("track of the train split"),
    testTrack: z.enum(["circle", "F"]).default("F").describe("track of the test split"),
    speeds: z
      .array(z.number().min(0.5).max(5))
      .min(1)
      .default([1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5])
      .describe("speeds (m/s) asked for by refVelocity prompts"),
    preset: z
      .enum(["default", "robotxR1"])
      .default("default")
      .describe("reward preset (robotxR1 keeps the reference's quirks)"),
    outOfRange: z
      .enum(["reject", "clamp"])
      .default("reject")
      .describe("out-of-range parameter values: reject or clamp"),
    heldOutParaphrases: z
      .number()
      .int()
      .min(0)
      .max(10)
      .default(0)
      .describe("the last n paraphrases of each behaviour appear in the test split only (0: both splits use all)"),
    prompt: z
      .enum(["full", "brief"])
      .default("full")
      .describe(
        "full: the prompt lists every parameter with its range; brief: track and instruction only, short gold reasoning",
      ),
  })
  .strict()
  .refine((o) => o.trainTrack !== o.testTrack, {
    message: "trainTrack and testTrack must differ (prompts name the track)",
    path: ["testTrack"],
  });

/** Options after defaults. */
export type MpcCarOptions = z.infer<typeof mpcCarOptions>;

const TRACK_TEXT: Record<TrackName, string> = {
  circle: "a circular track (radius 6 m, 2.4 m wide)",
  F: "an F-shaped track (74 m racing line, 2.2 m wide, tight 2 m corners)",
};

const PARAM_TEXT: Record<string, string> = {
  qv: "weight on speed error to the racing line's target speed",
  qn: "weight on lateral distance to the racing line",
  qalpha: "weight on heading error",
  qac: "weight on acceleration",
  qddelta: "weight on steering rate",
  alat_max: "lateral acceleration limit (m/s²)",
  a_min: "minimum acceleration (m/s²)",
  a_max: "maximum acceleration (m/s²)",
  v_min: "minimum speed (m/s)",
  v_max: "maximum speed (m/s)",
  track_safety_margin: "distance kept from the walls (m)",
};

/** The reasoning of `prompt: "brief"` gold completions: the behaviour in a few words. */
const BRIEF_REASONING: Record<DrivingCase["kind"], string> = {
  centerline: "centre line",
  racingLine: "racing line",
  reverse: "reverse",
  refVelocity: "fixed speed",
  smooth: "smooth",
};

const REASONING: Record<DrivingCase["kind"], string> = {
  centerline:
    "To drive on the centre, stop pulling towards the racing line (small qn) and narrow the corridor with a large safety margin.",
  racingLine: "To track the racing line tightly, raise the lateral-error weight qn relative to the other weights.",
  reverse: "To drive backwards at 1 m/s, pin the speed bounds to -1 m/s and drop the speed-tracking weight.",
  refVelocity:
    "To hold the asked speed, pin v_min and v_max to it and drop the weight that pulls towards the racing line's speed.",
  smooth:
    "To drive smoothly, lower the lateral and longitudinal acceleration limits and the top speed, and penalise acceleration.",
};

function promptFor(track: TrackName, instruction: string, style: "full" | "brief" = "full"): string {
  if (style === "brief") {
    return (
      `Tune the MPC of a racing car on ${TRACK_TEXT[track]}.\nInstruction: ${instruction}\n` +
      `Answer <reasoning>...</reasoning><answer>new_mpc_params = {...}</answer>.`
    );
  }
  const params = PARAM_NAMES.map(
    (n) => `- ${n}: ${PARAM_TEXT[n]}; default ${DEFAULT_PARAMS[n]}, range [${PARAM_RANGES[n].join(", ")}]`,
  ).join("\n");
  return (
    `You tune the model-predictive controller of a small racing car driving on ${TRACK_TEXT[track]}.\n` +
    `Controller parameters:\n${params}\n` +
    `Instruction: ${instruction}\n` +
    `Think in <reasoning>...</reasoning>, then answer in <answer>new_mpc_params = {"name": value, ...}</answer> with only the parameters you change.`
  );
}

/** The gold dictionary for a behaviour on a track. */
export function goldParams(c: DrivingCase, track: TrackName): Record<string, number> {
  const table = CAR_GOLD[track];
  if (c.kind === "refVelocity") {
    const t = table["refVelocity(3)"]!.params;
    return { ...t, v_min: c.vRef, v_max: c.vRef } as Record<string, number>;
  }
  return { ...table[c.kind]!.params } as Record<string, number>;
}

interface Item {
  c: DrivingCase;
  caseText: string;
  instruction: string;
}

/** The split's items: with `heldOut` n > 0, train keeps all but the last n paraphrases of each kind, test only those. */
function itemsFor(speeds: readonly number[], heldOut: number, split: "train" | "test"): Item[] {
  const pick = (ps: readonly string[]) =>
    heldOut === 0 ? ps : split === "train" ? ps.slice(0, -heldOut) : ps.slice(-heldOut);
  const items: Item[] = [];
  for (const kind of ["centerline", "racingLine", "reverse", "smooth"] as const) {
    for (const p of pick(CAR_PARAPHRASES[kind])) items.push({ c: { kind }, caseText: kind, instruction: p });
  }
  for (const v of speeds) {
    for (const p of pick(CAR_PARAPHRASES.refVelocity)) {
      items.push({
        c: { kind: "refVelocity", vRef: v },
        caseText: `refVelocity(${v})`,
        instruction: p.replaceAll("{v}", String(v)),
      });
    }
  }
  return items;
}

const mpcCar = defineTask<CarGold, MpcCarOptions>({
  name: "mpc-car",
  summary: "MPC racing-car tuning (RobotxR1): instruction → parameter dict, scored by a simulated lap",
  options: mpcCarOptions as unknown as z.ZodType<MpcCarOptions>,
  build: (o) => buildMpcCar(o),
});

/** The parts of "mpc-car" for parsed options; its own generate (prompts cycle, no split hashing). */
function buildMpcCar(o: MpcCarOptions): TaskParts<CarGold> {
  const rewardOptions = { preset: o.preset, outOfRange: o.outOfRange };
  const terms: RewardTerm[] = [
    { name: "driving", reward: "mpc-car-driving", weight: 1, options: rewardOptions },
    { name: "format", reward: "mpc-car-format", weight: 1, options: rewardOptions },
    { name: "extraction", reward: "mpc-car-extraction", weight: 1, options: rewardOptions },
    { name: "names", reward: "mpc-car-names", weight: 1, options: rewardOptions },
    { name: "improved", reward: "mpc-car-improved", weight: 0, options: rewardOptions },
  ];
  const items = {
    train: itemsFor(o.speeds, o.heldOutParaphrases, "train"),
    test: itemsFor(o.speeds, o.heldOutParaphrases, "test"),
  };
  return {
    description: "tune a racing car's MPC parameters to an instructed driving behaviour; scored by a simulated lap",
    terms,
    correctTerm: "improved",
    stop: ["</answer>"],
    maxNewTokens: 256,
    generate(split, count, seed): Example<CarGold>[] {
      if (split !== "train" && split !== "test")
        throw new ConfigError(`mpc-car: split must be "train" or "test", got ${String(split)}`);
      if (!Number.isInteger(count) || count < 0)
        throw new ConfigError(`mpc-car: count must be a non-negative integer, got ${count}`);
      const track = split === "train" ? o.trainTrack : o.testTrack;
      const rng = new Rng(seed).split(`mpc-car/${split}`);
      const out: Example<CarGold>[] = [];
      let order: Item[] = [];
      for (let i = 0; i < count; i++) {
        if (order.length === 0) order = rng.shuffle(items[split].slice());
        const it = order.pop()!;
        const tuned = it.c.kind === "refVelocity" ? undefined : CAR_GOLD[track][it.c.kind];
        const gold: CarGold = { case: it.caseText, track };
        if (tuned && GOLD_SIM_VERSION === SIM_VERSION)
          Object.assign(gold, { baselineRmse: tuned.baseline, simVersion: SIM_VERSION });
        out.push({
          id: `mpc-car/${split}/${i}`,
          prompt: promptFor(track, it.instruction, o.prompt),
          gold,
          goldCompletion: carCompletion(
            (o.prompt === "brief" ? BRIEF_REASONING : REASONING)[it.c.kind],
            goldParams(it.c, track),
          ),
        });
      }
      return out;
    },
  };
}

/** Builds the "mpc-car" task. */
export const createMpcCarTask: (options?: Partial<MpcCarOptions>) => Task<CarGold> = mpcCar.create;

/** Registry definition of "mpc-car". */
export const mpcCarTask: TaskDefinition<MpcCarOptions> = mpcCar.definition;
