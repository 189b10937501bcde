/**
 * envs layer entry: the environment contract, the registry, and the built-in environments, which register
 * themselves when this module is imported (SAKE's knowledge-graph tools, "kg-tools").
 */
import { hasEnvironment, registerEnvironment } from "./registry.js";
import { createKgTools } from "./kg/env.js";

export * from "./types.js";
export * from "./registry.js";
export { createKgTools, kgToolsOptions, type KgToolsOptions } from "./kg/env.js";
export { parseCall, entitiesTool, groupsTool, type KgCall, type CallLimits, type ToolAnswer } from "./kg/tools.js";

if (!hasEnvironment("kg-tools"))
  registerEnvironment({
    name: "kg-tools",
    description: "SAKE knowledge-graph tools: entities → similar groups, kept groups → linking triplets",
    create: createKgTools,
  });
