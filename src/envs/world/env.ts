/**
 * "grid-world": the SIMA 2 room world (src/rewards/world/) as an environment (docs/multi-turn.md). Each model turn
 * is one command, ended by a newline; the environment applies it with the episode rules the reward replays
 * (src/rewards/world/episode.ts) and answers with the next observation and the `> ` prompt, or ends the episode
 * (goal reached, answer, done, step limit, too many invalid commands, a repeated no-op). It never sets the reward:
 * the task's "world-goal" verifier scores the recorded turns, so evaluation and training read the same verdict.
 * An invalid command is answered as text ("invalid: <reason>" then the unchanged observation) and counted; the
 * episode that ends on invalid commands or on a repeated no-op is counted as an error too.
 */
import { z } from "zod";
import { ConfigError } from "../../util/errors.js";
import { WorldEpisode, worldGoldProblem, type WorldGold } from "../../rewards/world/index.js";
import type { Environment, EnvEpisode, EnvReply } from "../types.js";

/** Options of "grid-world". */
export const gridWorldOptions = z
  .object({
    maxSteps: z.number().int().min(1).max(30).default(12).describe("commands per episode (the loop's turn budget)"),
    maxTokensPerTurn: z.number().int().min(4).max(200).default(24).describe("tokens in one command turn"),
    timeoutMs: z.number().int().min(1).default(2000).describe("milliseconds per step"),
  })
  .strict();
/** Parsed "grid-world" options. */
export type GridWorldOptions = z.output<typeof gridWorldOptions>;

/** Builds the "grid-world" environment. */
export function createGridWorld(options: unknown = {}): Environment<WorldGold> {
  const parsed = gridWorldOptions.safeParse(options ?? {});
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(options)"}: ${i.message}`).join("; ");
    throw new ConfigError(`environment "grid-world" options: ${issues}`);
  }
  const o = parsed.data;
  return {
    name: "grid-world",
    stop: ["\n"],
    // One more turn than the world allows, so the world's own step limit (not the loop's) ends an episode.
    budgets: { maxTurns: o.maxSteps + 1, maxTokensPerTurn: o.maxTokensPerTurn },
    timeoutMs: o.timeoutMs,
    onError: "end",
    errorReward: 0,
    loopReward: 0,
    start(example): EnvEpisode {
      const problem = worldGoldProblem(example.gold);
      if (problem) throw new ConfigError(`grid-world: example ${example.id} is not a world task (${problem})`);
      const ep = new WorldEpisode(example.gold.world, example.gold.goal, example.gold.rules);
      return {
        step(text): EnvReply {
          const reply = ep.step(text.endsWith("\n") ? text.slice(0, -1) : text);
          if (reply.end) {
            const error =
              reply.end === "invalid"
                ? `invalid: ${reply.invalid ?? "too many invalid commands"}`
                : reply.end === "stuck"
                  ? "stuck: a no-op right after a no-op"
                  : reply.invalid !== undefined
                    ? `invalid: ${reply.invalid}`
                    : undefined;
            // No reward here: the task's verifier replays the turns. An error still counts it.
            return error ? { kind: "end", error } : { kind: "end" };
          }
          return {
            kind: "observation",
            text: `${reply.text}> `,
            ...(reply.invalid !== undefined ? { error: `invalid: ${reply.invalid}` } : {}),
          };
        },
      };
    },
  };
}
