/**
 * "world-goal": the SIMA 2 verifier reward of a room-world episode (./goal.ts). It replays the episode's model
 * turns, one command each, under the episode rules (./episode.ts: the same code the environment runs), and scores
 * the end state: `successWeight · success + shapedWeight · progress`. `success` is the task's verifier (1 or 0);
 * `progress` (an optional shaped reward, weight 0 by default) is 1 − d(end) / d(start), where d is the solver's
 * shortest remaining command count (./solve.ts), clipped to [0, 1], and 0 when the end state cannot reach the goal.
 *
 * Without `turns` (a caller that has only the completion text), the completion is read as a transcript: its first
 * line and every line that starts with the `> ` prompt are the commands; observation lines are skipped.
 * A gold that is not a world task scores null. Hacks earn nothing: `done` or an answer at once ends the episode
 * unverified, commands past the end are never applied, a giant or unparsable command is an invalid step, and only
 * the first answer counts.
 */
import { z } from "zod";
import type { RewardResult, RewardSpec } from "../types.js";
import { replay, type EpisodeRules } from "./episode.js";
import { GOAL_KINDS, type Goal } from "./goal.js";
import { solve } from "./solve.js";
import type { WorldState } from "./world.js";

/** Options of "world-goal". */
export const worldGoalOptions = z.object({
  successWeight: z.number().min(0).default(1).describe("weight of the verifier's 1/0"),
  shapedWeight: z
    .number()
    .min(0)
    .default(0)
    .describe("weight of the shaped progress term (1 - remaining/initial solver distance); 0 = sparse reward"),
});
/** Parsed "world-goal" options. */
export type WorldGoalOptions = z.output<typeof worldGoalOptions>;

/** Gold of a world task: the initial state, the goal and the episode rules. */
export interface WorldGold {
  world: WorldState;
  goal: Goal;
  rules: EpisodeRules;
}

/** Why a gold is not a world task, or null when it is one. */
export function worldGoldProblem(g: unknown): string | null {
  const x = g as Partial<WorldGold> | null;
  if (!x || typeof x !== "object") return "gold is not an object";
  const w = x.world;
  if (!w || !Array.isArray(w.rooms) || !Array.isArray(w.doors) || !Array.isArray(w.objects)) return "gold.world";
  if (!Number.isInteger(w.agent) || w.agent < 0 || w.agent >= w.rooms.length) return "gold.world.agent";
  if (!x.goal || !(GOAL_KINDS as readonly string[]).includes(x.goal.kind)) return "gold.goal";
  const r = x.rules;
  if (!r || !(Number.isInteger(r.maxSteps) && r.maxSteps > 0 && Number.isInteger(r.maxInvalid) && r.maxInvalid > 0))
    return "gold.rules";
  return null;
}

/** The commands of a transcript (no turn list): the first line and each line after a `> ` prompt. */
export function transcriptCommands(completion: string): string[] {
  const lines = completion.split("\n");
  return [
    lines[0]!,
    ...lines
      .slice(1)
      .filter((l) => l.startsWith("> "))
      .map((l) => l.slice(2)),
  ];
}

export const worldGoalReward: RewardSpec<WorldGoalOptions, WorldGold> = {
  name: "world-goal",
  description: "SIMA 2 room-world verifier: replays the model's commands and checks the task's end state",
  options: worldGoalOptions,
  exampleGold: {
    world: {
      cols: 2,
      rows: 1,
      rooms: ["red", "blue"],
      doors: [{ a: 0, b: 1, state: "closed" }],
      objects: [{ name: "green ball", kind: "ball", colour: "green", at: { room: 1 } }],
      agent: 0,
    },
    goal: { kind: "fetch", object: "green ball" },
    rules: { maxSteps: 8, maxInvalid: 3 },
  },
  maxScore: 1,
  score({ completion, gold, turns }, o): RewardResult {
    const problem = worldGoldProblem(gold);
    if (problem) return { score: null, terms: {}, info: { reason: `not a world task: ${problem}` } };
    const ep = replay(gold.world, gold.goal, gold.rules, turns ?? transcriptCommands(completion));
    const success = ep.success ? 1 : 0;
    let progress = success;
    if (o.shapedWeight > 0 && !success) {
      const d0 = solve(gold.world, gold.goal, gold.rules.maxSteps)?.length;
      const d1 = solve(ep.state, gold.goal, gold.rules.maxSteps)?.length;
      progress = d0 && d1 !== undefined ? Math.min(1, Math.max(0, 1 - d1 / d0)) : 0;
    }
    return {
      score: o.successWeight * success + o.shapedWeight * progress,
      terms: { success, progress },
      info: { end: ep.end ?? "open", steps: ep.steps, invalid: ep.invalid, noops: ep.noops, answer: ep.answer },
    };
  },
  goldCompletion: (g) => (solve(g.world, g.goal, g.rules.maxSteps) ?? []).join("\n> "),
};
