/**
 * "sima": verifier-checked tasks in an interactive room world (the concept card's SIMA 2 part, in miniature;
 * docs/multi-turn.md). The prompt is an instruction and the first observation; the policy then writes one command
 * per turn (ended by a newline), the "grid-world" environment answers each with the next observation, and the
 * episode ends when the goal holds, on `answer`/`done`, or by the rules of src/rewards/world/episode.ts (step limit,
 * invalid commands, a repeated no-op). The reward is the task's verifier on the end state ("world-goal"), with an
 * optional shaped progress term.
 *
 *   task: put the red ball in the green box
 *   @red hold:none
 *   see: red ball, green box(closed)
 *   exits: east blue open
 *   > open green box                     ← model turn
 *   @red hold:none                       ← observation (inserted, loss mask 0)
 *   see: red ball, green box(open)
 *   exits: east blue open
 *   > take red ball
 *   ...
 *
 * Held out: whole layouts (a layout's rooms, doors and objects hash to the test split, `testPercent`) and
 * compositions of instructions (`heldOutCompositions`, e.g. "place:ball": put a ball in a box, never asked in
 * training, though training places keys and fetches balls). Each example's gold records its composition. Gold
 * trajectories (for SFT) are the solver's commands with the environment's exact observations between them, cut into
 * segments so SFT trains the commands and masks the observations.
 */
import { z } from "zod";
import { ConfigError } from "../util/errors.js";
import { Rng } from "../util/rng.js";
import { GOAL_KINDS, WorldEpisode, compositionOf, observe, type WorldGold } from "../rewards/world/index.js";
import { defineTask } from "./define-task.js";
import { splitOf } from "./generate.js";
import type { TaskDefinition } from "./registry.js";
import type { Example, GoldSegment, Task } from "./types.js";
import { drawTask, layoutKey, worldPrompt, type WorldGenSettings } from "./world-gen.js";

/** Options of "sima". */
export const simaOptions = z
  .object({
    kinds: z
      .array(z.enum(GOAL_KINDS))
      .min(1)
      .default([...GOAL_KINDS])
      .describe("goal kinds drawn (an SFT start on a subset: a second task with fewer kinds)"),
    maxRooms: z.number().int().min(2).max(6).default(4).describe("most rooms in a layout"),
    closedShare: z.number().min(0).max(1).default(0.25).describe("share of doors that start closed"),
    lockedShare: z.number().min(0).max(1).default(0.15).describe("share of doors that start locked (a key exists)"),
    extraObjects: z
      .number()
      .int()
      .min(0)
      .max(6)
      .default(3)
      .describe("most loose keys, balls and boxes besides locks' keys"),
    maxSteps: z.number().int().min(1).max(30).default(12).describe("commands per episode (the step limit)"),
    minSteps: z.number().int().min(1).max(30).default(3).describe("fewest commands a kept task needs (its solver's)"),
    maxInvalid: z.number().int().min(1).max(30).default(3).describe("the episode ends at this many invalid commands"),
    maxTokensPerTurn: z.number().int().min(4).max(200).default(24).describe("tokens in one command turn"),
    heldOutCompositions: z
      .array(z.string())
      .default(["place:ball", "answer:colour"])
      .describe('compositions only in the test split ("kind:object", see compositionOf)'),
    testPercent: z.number().int().min(1).max(99).default(20).describe("share of layouts held out, in percent"),
    shapedWeight: z.number().min(0).default(0).describe("weight of the shaped progress term (0: verifier only)"),
  })
  .strict();
/** Parsed "sima" options. */
export type SimaOptions = z.output<typeof simaOptions>;

/** Gold of a "sima" example: the world task plus where it comes from. */
export interface SimaGold extends WorldGold {
  /** "kind:object" of the goal (per-kind tables). */
  composition: string;
  /** True when the composition never appears in training. */
  heldOutComposition: boolean;
}

/** The gold trajectory: each solver command (a model turn) and the environment's observation after it. */
export function simaGoldSegments(gold: WorldGold, solution: readonly string[]): GoldSegment[] {
  const ep = new WorldEpisode(gold.world, gold.goal, gold.rules);
  const out: GoldSegment[] = [];
  for (const cmd of solution) {
    out.push({ kind: "model", text: `${cmd}\n` });
    const reply = ep.step(cmd);
    if (reply.end) break;
    out.push({ kind: "inserted", text: `${reply.text}> ` });
  }
  return out;
}

/** Consecutive draws (of up to 20 worlds each) without a new task after which the settings count as exhausted. */
const STALL_DRAWS = 500;

const sima = defineTask<SimaGold, SimaOptions>({
  name: "sima",
  summary: "SIMA 2 room world: multi-step commands, observations from the grid-world env, a verifier per task",
  options: simaOptions,
  build: (o) => {
    const settings: WorldGenSettings = { ...o };
    const held = new Set(o.heldOutCompositions);
    return {
      description: `room-world tasks (${o.kinds.join(", ")}; up to ${o.maxRooms} rooms, ${o.maxSteps} steps)`,
      terms: [
        { name: "success", reward: "world-goal", weight: 1, options: { successWeight: 1, shapedWeight: 0 } },
        ...(o.shapedWeight > 0
          ? [
              {
                name: "progress",
                reward: "world-goal",
                weight: o.shapedWeight,
                options: { successWeight: 0, shapedWeight: 1 },
              },
            ]
          : []),
      ],
      correctTerm: "success",
      stop: ["\n"],
      maxNewTokens: o.maxSteps * (o.maxTokensPerTurn + 90),
      environment: {
        name: "grid-world",
        options: { maxSteps: o.maxSteps, maxTokensPerTurn: o.maxTokensPerTurn },
      },
      generate(split, count, seed) {
        const rng = new Rng(seed).split("sima").split(split);
        const seen = new Set<string>();
        const out: Example<SimaGold>[] = [];
        for (let stall = 0; out.length < count; stall++) {
          if (stall >= STALL_DRAWS)
            throw new ConfigError(
              `sima: found ${out.length} of ${count} ${split} tasks (no new one in ${STALL_DRAWS} draws); ` +
                "widen maxRooms, kinds or maxSteps",
            );
          const t = drawTask(rng, settings, 20);
          if (!t) continue;
          const composition = compositionOf(t.goal);
          if (splitOf(layoutKey(t.world), o.testPercent) !== split) continue;
          if (split === "train" && held.has(composition)) continue;
          const key = `${layoutKey(t.world)}|${t.world.agent}|${JSON.stringify(t.goal)}`;
          if (seen.has(key)) continue;
          seen.add(key);
          stall = -1;
          const gold: SimaGold = {
            world: t.world,
            goal: t.goal,
            rules: { maxSteps: o.maxSteps, maxInvalid: o.maxInvalid },
            composition,
            heldOutComposition: held.has(composition),
          };
          const goldSegments = simaGoldSegments(gold, t.solution);
          out.push({
            id: `sima/${split}/${out.length}`,
            prompt: worldPrompt(t.goal, observe(t.world)),
            gold,
            goldCompletion: goldSegments.map((s) => s.text).join(""),
            goldSegments,
          });
        }
        return out;
      },
    };
  },
});

/** Builds the "sima" task. */
export const createSimaTask: (options?: Partial<SimaOptions>) => Task<SimaGold> = sima.create;

/** Registry definition of "sima". */
export const simaTask: TaskDefinition<SimaOptions> = sima.definition;
