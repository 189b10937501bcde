/**
 * The recipe side of the "dataset" task: the short form `task: { type: dataset, path, reward, ... }` becomes
 * `task: { name: dataset, options: { path, reward, ... } }` (the run-size fields `trainExamples`, `testExamples` and
 * `seed` stay on the task), file paths (`path`, `testPath`, reward `module`s) are made absolute against the recipe's
 * folder, and `modelPath` is filled from a checkpoint model's `path`, for its chat template.
 */
import { isAbsolute, resolve } from "node:path";
import { resolveModulePaths } from "./terms.js";

const RUN_FIELDS = ["trainExamples", "testExamples", "seed"];

/** Rewrites a raw recipe's dataset task as above; any other recipe comes back unchanged. */
export function resolveDatasetRecipe(raw: unknown, base: string): unknown {
  if (typeof raw !== "object" || raw === null) return raw;
  const recipe = raw as Record<string, unknown>;
  let task = recipe.task as Record<string, unknown> | undefined;
  if (!task || typeof task !== "object") return raw;
  if (task.type === "dataset") {
    const { type: _type, ...rest } = task;
    const keep = Object.fromEntries(Object.entries(rest).filter(([k]) => RUN_FIELDS.includes(k)));
    const options = Object.fromEntries(Object.entries(rest).filter(([k]) => !RUN_FIELDS.includes(k)));
    task = { name: "dataset", ...keep, options };
  }
  if (task.name !== "dataset" || typeof task.options !== "object" || task.options === null) return raw;
  const o = { ...(task.options as Record<string, unknown>) };
  const abs = (p: unknown) => (typeof p === "string" && !isAbsolute(p) ? resolve(base, p) : p);
  if (o.path !== undefined) o.path = abs(o.path);
  if (o.testPath !== undefined) o.testPath = abs(o.testPath);
  if (o.reward !== undefined) o.reward = resolveModulePaths(o.reward, base);
  if (o.rewardBySource && typeof o.rewardBySource === "object")
    o.rewardBySource = Object.fromEntries(
      Object.entries(o.rewardBySource).map(([k, v]) => [k, resolveModulePaths(v, base)]),
    );
  const model = recipe.model as { type?: unknown; path?: unknown } | undefined;
  if (o.modelPath === undefined && model?.type === "checkpoint" && typeof model.path === "string")
    o.modelPath = abs(model.path);
  return { ...recipe, task: { ...task, options: o } };
}
