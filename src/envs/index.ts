/**
 * envs layer entry: the environment contract, the registry, and the built-in environments, which register
 * themselves when this module is imported (SAKE's knowledge-graph tools, "kg-tools"; SIMA 2's room world,
 * "grid-world").
 */
import { hasEnvironment, registerEnvironment } from "./registry.js";
import { createKgTools } from "./kg/env.js";
import { createGridWorld } from "./world/env.js";

export * from "./types.js";
export * from "./registry.js";
export { createKgTools, kgToolsOptions, type KgToolsOptions } from "./kg/env.js";
export { createGridWorld, gridWorldOptions, type GridWorldOptions } from "./world/env.js";
export { parseCall, entitiesTool, groupsTool, type KgCall, type CallLimits, type ToolAnswer } from "./kg/tools.js";

if (!hasEnvironment("kg-tools"))
  registerEnvironment({
    name: "kg-tools",
    description: "SAKE knowledge-graph tools: entities → similar groups, kept groups → linking triplets",
    create: createKgTools,
  });

if (!hasEnvironment("grid-world"))
  registerEnvironment({
    name: "grid-world",
    description: "SIMA 2 room world: one command per turn, observations between, the task's verifier at the end",
    create: createGridWorld,
  });
