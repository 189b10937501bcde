/**
 * The reward catalog: every registered reward with its description and option schema, in the shape that both
 * `rlvr rewards --json` and the reward service's `GET /v1/rewards` print (one implementation, two surfaces).
 * Option types, defaults and descriptions come from each reward's zod schema, so they are documented once.
 */
import { z } from "zod";
import { rewards as defaultRegistry, type RewardRegistry, type RewardSpec } from "../rewards/index.js";

/** One option of a reward: name, JSON type (or the enum's values), default and description. */
export interface OptionDoc {
  name: string;
  type: string;
  default?: unknown;
  description?: string;
}

/** One catalog entry. */
export interface RewardDoc {
  name: string;
  description: string;
  modelJudged: boolean;
  options: OptionDoc[];
}

/** The options of a reward as name, type, default and description (from its zod schema). */
export function describeOptions(spec: RewardSpec<any, any>): OptionDoc[] {
  let schema: {
    properties?: Record<string, { type?: string; enum?: unknown[]; default?: unknown; description?: string }>;
  };
  try {
    schema = z.toJSONSchema(spec.options, { io: "input", unrepresentable: "any" }) as typeof schema;
  } catch {
    return [];
  }
  return Object.entries(schema.properties ?? {}).map(([name, p]) => ({
    name,
    type: p.enum ? p.enum.map((v) => JSON.stringify(v)).join("|") : (p.type ?? "any"),
    ...(p.default !== undefined ? { default: p.default } : {}),
    ...(p.description ? { description: p.description } : {}),
  }));
}

/** Every reward of `registry` (the process-wide one by default), sorted by name. */
export function rewardCatalog(registry: RewardRegistry = defaultRegistry): RewardDoc[] {
  return registry.list().map((s) => ({
    name: s.name,
    description: s.description,
    modelJudged: s.modelJudged ?? false,
    options: describeOptions(s),
  }));
}
