/**
 * SAKE's two knowledge-graph tools as calls a model makes in text (docs/multi-turn.md): parsing a model turn into
 * a call, validating its arguments, and answering it from the graph (src/tasks/sake-graph.ts holds the graph and the
 * two deterministic queries, so the task's gold trajectories use the same functions).
 *
 * A turn is one of: an answer (`</answer>` present: the episode ends and the task scores it), tool 1
 * `<entities>a; b</entities>` (each entity's group of most similar concepts), tool 2 `<groups>a; b</groups>` (the
 * triplets that link the kept groups, named by the entity labels tool 1 returned), or bad input: another tag (an
 * unknown tool), no complete call or answer (malformed, e.g. a `<think>` cut off by the turn budget), or arguments
 * over the size limits (oversized).
 */
import {
  linkingTriplets,
  renderGroups,
  renderTriplets,
  resolveEntity,
  similarGroup,
  type KnowledgeGraph,
} from "../../tasks/sake-graph.js";

/** A parsed model turn. */
export type KgCall =
  | { kind: "answer" }
  | { kind: "entities"; args: string[] }
  | { kind: "groups"; args: string[] }
  | { kind: "bad"; error: "malformed" | "unknown tool" | "oversized"; detail: string };

/** Size limits of a call's arguments. */
export interface CallLimits {
  /** Most characters between the call's tags. */
  maxArgChars: number;
  /** Most names in one call. */
  maxArgs: number;
}

/** Tags of the protocol (tools, reasoning, answer, tool output): an incomplete one is malformed, not unknown. */
const KNOWN_TAGS = new Set(["entities", "groups", "think", "answer", "info"]);

/** Parses one model turn into a call (see the file comment). */
export function parseCall(text: string, limits: CallLimits): KgCall {
  if (text.includes("</answer>")) return { kind: "answer" };
  const m = /<(entities|groups)>([\s\S]*?)<\/\1>/.exec(text);
  if (!m) {
    const other = [...text.matchAll(/<\/?([A-Za-z_][\w-]*)>/g)].find((t) => !KNOWN_TAGS.has(t[1]!));
    return other
      ? { kind: "bad", error: "unknown tool", detail: `unknown tool <${other[1]}>` }
      : { kind: "bad", error: "malformed", detail: "no complete <entities>, <groups> or <answer> call" };
  }
  const body = m[2]!;
  if (body.length > limits.maxArgChars)
    return { kind: "bad", error: "oversized", detail: `${body.length} characters > ${limits.maxArgChars}` };
  const args = body
    .split(/[;,\n]/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (args.length === 0) return { kind: "bad", error: "malformed", detail: `empty <${m[1]}> call` };
  if (args.length > limits.maxArgs)
    return { kind: "bad", error: "oversized", detail: `${args.length} names > ${limits.maxArgs}` };
  return { kind: m[1] as "entities" | "groups", args };
}

/** What a tool answered: the text to insert and the errors it counted (unknown names). */
export interface ToolAnswer {
  text: string;
  errors: string[];
}

/** Tool 1: each named entity's group; unknown names are answered `name: unknown` and counted. */
export function entitiesTool(
  graph: KnowledgeGraph,
  args: readonly string[],
): ToolAnswer & { groups: Map<string, string[]> } {
  const groups = new Map<string, string[]>();
  const errors: string[] = [];
  const lines: { entity: string; members: string[] }[] = [];
  for (const name of args) {
    const canonical = resolveEntity(graph, name);
    if (!canonical) {
      errors.push(`unknown entity "${name}"`);
      lines.push({ entity: name, members: ["unknown"] });
      continue;
    }
    const members = similarGroup(graph, canonical);
    groups.set(name, members);
    lines.push({ entity: name, members });
  }
  return { text: renderGroups(lines), errors, groups };
}

/** Tool 2: the triplets linking the kept groups (labels from tool 1); needs two known labels. */
export function groupsTool(
  graph: KnowledgeGraph,
  known: ReadonlyMap<string, string[]> | null,
  args: readonly string[],
): ToolAnswer {
  if (!known) return { text: "\nerror: call <entities> first\n", errors: ["groups before entities"] };
  const kept = args.filter((a) => known.has(a));
  const unknown = args.filter((a) => !known.has(a));
  const errors = unknown.map((a) => `unknown group "${a}"`);
  if (kept.length < 2)
    return { text: "\nerror: keep at least two groups\n", errors: [...errors, "fewer than two groups"] };
  return {
    text: renderTriplets(
      linkingTriplets(
        graph,
        kept.map((a) => known.get(a)!),
      ),
    ),
    errors,
  };
}
