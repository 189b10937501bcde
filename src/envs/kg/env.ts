/**
 * "kg-tools": SAKE's knowledge-graph tool set as an environment (docs/multi-turn.md). Three model turns and two
 * tool calls: `<entities>` (tool 1) → the groups, `<groups>` (tool 2) → the linking triplets, then `<think>` and
 * `<answer>`, which ends the episode for the task's `kg-answer` reward. The graph is the task's (same options, same
 * seed: src/tasks/sake-graph.ts).
 *
 * Bad input is answered, counted, and never crashes the run: an unknown tool, a malformed turn (no call, no answer)
 * or an oversized argument ends the episode with `badInputReward` (0: what kg-answer gives a turn with neither
 * format nor answer); an unknown entity or group is answered as text and counted; a model that keeps calling after
 * `maxTurns` turns gets `loopReward`. Departure from SAKE: tools are called by tag, not by a JSON function call.
 * `filterTurn: false` is the paper's ablation without the filtering turn: tool 1's answer also carries the
 * triplets linking all the returned groups, and a `<groups>` call is an unknown tool.
 */
import { z } from "zod";
import { ConfigError } from "../../util/errors.js";
import { buildGraph, kgGraphOptions } from "../../tasks/sake-graph.js";
import type { Environment, EnvEpisode, EnvReply } from "../types.js";
import { entitiesTool, groupsTool, parseCall } from "./tools.js";

/** Options of "kg-tools": the graph's, then budgets, limits and the rewards of bad input. */
export const kgToolsOptions = z
  .object({
    graph: kgGraphOptions.prefault({}),
    maxTurns: z.number().int().min(1).max(10).default(3).describe("model turns (SAKE: 3)"),
    filterTurn: z
      .boolean()
      .default(true)
      .describe(
        "false: SAKE's ablation without the filtering turn (tool 1 also returns the triplets linking all groups)",
      ),
    maxTokensPerTurn: z.number().int().min(1).default(96).describe("tokens in one model turn"),
    maxArgChars: z.number().int().min(1).default(80).describe("characters inside one call's tags"),
    maxArgs: z.number().int().min(1).default(4).describe("names in one call"),
    timeoutMs: z.number().int().min(1).default(2000).describe("milliseconds per tool call"),
    badInputReward: z.number().default(0).describe("reward of an episode ended by bad input"),
    loopReward: z.number().default(0).describe("reward of an episode still calling after maxTurns"),
  })
  .strict();
/** Parsed "kg-tools" options. */
export type KgToolsOptions = z.output<typeof kgToolsOptions>;

/** Builds the "kg-tools" environment. */
export function createKgTools(options: unknown = {}): Environment {
  const parsed = kgToolsOptions.safeParse(options ?? {});
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(options)"}: ${i.message}`).join("; ");
    throw new ConfigError(`environment "kg-tools" options: ${issues}`);
  }
  const o = parsed.data;
  const graph = buildGraph(o.graph);
  const limits = { maxArgChars: o.maxArgChars, maxArgs: o.maxArgs };
  return {
    name: "kg-tools",
    stop: ["</entities>", "</groups>", "</answer>"],
    budgets: { maxTurns: o.maxTurns, maxTokensPerTurn: o.maxTokensPerTurn },
    timeoutMs: o.timeoutMs,
    onError: "end",
    errorReward: o.badInputReward,
    loopReward: o.loopReward,
    start(): EnvEpisode {
      let groups: Map<string, string[]> | null = null;
      return {
        step(text): EnvReply {
          const call = parseCall(text, limits);
          if (call.kind === "answer") return { kind: "end" };
          if (call.kind === "bad")
            return { kind: "end", reward: o.badInputReward, error: `${call.error}: ${call.detail}` };
          if (call.kind === "groups" && !o.filterTurn)
            return {
              kind: "end",
              reward: o.badInputReward,
              error: "unknown tool: no <groups> tool without the filtering turn",
            };
          const answer =
            call.kind === "entities" ? entitiesTool(graph, call.args) : groupsTool(graph, groups, call.args);
          if (call.kind === "entities") groups = (answer as ReturnType<typeof entitiesTool>).groups;
          if (call.kind === "entities" && !o.filterTurn) {
            // No filtering turn: the linking triplets of every group tool 1 returned come with the groups.
            const all = groupsTool(graph, groups, [...groups!.keys()]);
            const errors = [...answer.errors, ...(groups!.size >= 2 ? all.errors : [])];
            return {
              kind: "observation",
              text: answer.text + (groups!.size >= 2 ? all.text : ""),
              ...(errors.length ? { error: errors.join("; ") } : {}),
            };
          }
          return {
            kind: "observation",
            text: answer.text,
            ...(answer.errors.length ? { error: answer.errors.join("; ") } : {}),
          };
        },
      };
    },
  };
}
