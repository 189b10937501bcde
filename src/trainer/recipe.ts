/**
 * Recipes: JSON or YAML files that validate against `TrainConfigSchema`. Loading applies the named preset under
 * the recipe's own fields, fills defaults, checks cross-field rules, and turns every problem into a `ConfigError`
 * whose lines name the field (`algorithm.advantage.type`) and, where the set is closed, the allowed values.
 */
import { readFileSync, existsSync } from "node:fs";
import { basename, dirname, extname, isAbsolute, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import type { z } from "zod";
import { ConfigError } from "../util/index.js";
import { TrainConfigSchema, checkConfig, type TrainConfig } from "./config.js";
import { getTask, tasks } from "../tasks/index.js";
import "../rollout/conductor/index.js"; // registers the "conductor" task (its chains call worker models)
import { resolveDatasetRecipe } from "../tasks/dataset/index.js";
import { PRESETS, mergeRecipe, type PresetName } from "./presets.js";
import { memoryProblems } from "./memory-estimate.js";

/** Reads and validates a recipe file (.json, .yaml or .yml); `overrides` (e.g. from CLI flags) win over the file. */
export function loadRecipe(path: string, overrides: Record<string, unknown> = {}): TrainConfig {
  if (!existsSync(path)) throw new ConfigError(`recipe ${path}: file not found`);
  const text = readFileSync(path, "utf8");
  const ext = extname(path).toLowerCase();
  let raw: unknown;
  try {
    raw = ext === ".json" ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new ConfigError(`recipe ${path}: not valid ${ext === ".json" ? "JSON" : "YAML"}: ${(err as Error).message}`);
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new ConfigError(`recipe ${path}: expected a mapping of fields at the top level`);
  }
  const withName = resolvePaths({ name: basename(path, extname(path)), ...(raw as object) }, dirname(path));
  return resolveConfig(mergeRecipe(withName, overrides), path);
}

/** Relative `model.path`, `model.tokenizer.file` and `reference` in a recipe file are relative to the file's folder. */
function resolvePaths(raw: Record<string, unknown>, base: string): Record<string, unknown> {
  const out = { ...raw };
  const model = out.model as { type?: unknown; path?: unknown; tokenizer?: { file?: unknown } } | undefined;
  if (model && model.type === "checkpoint" && typeof model.path === "string" && !isAbsolute(model.path))
    out.model = { ...model, path: resolve(base, model.path) };
  const file = model?.tokenizer?.file;
  if (model && model.type === "new" && typeof file === "string" && !isAbsolute(file))
    out.model = { ...model, tokenizer: { ...model.tokenizer, file: resolve(base, file) } };
  if (typeof out.reference === "string" && !isAbsolute(out.reference)) out.reference = resolve(base, out.reference);
  return resolveDatasetRecipe(out, base) as Record<string, unknown>; // dataset paths and short form (docs/data.md)
}

/** Validates a recipe object: preset, defaults, cross-field rules. `source` names the recipe in errors. */
export function resolveConfig(raw: unknown, source = "recipe"): TrainConfig {
  raw = resolveDatasetRecipe(raw, process.cwd());
  let input = raw;
  const preset = (raw as { preset?: unknown } | null)?.preset;
  if (typeof preset === "string" && preset in PRESETS) input = mergeRecipe(PRESETS[preset as PresetName], raw);
  const parsed = TrainConfigSchema.safeParse(input);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${formatIssue(i, input)}`);
    throw new ConfigError(`${source}: invalid recipe\n${lines.join("\n")}`);
  }
  const problems = checkConfig(parsed.data);
  const t = parsed.data.task;
  if (!tasks.has(t.name))
    problems.push({
      path: "task.name",
      message: `${JSON.stringify(t.name)} is not a registered task; allowed: ${tasks
        .names()
        .map((n) => JSON.stringify(n))
        .join(" | ")}`,
    });
  else {
    try {
      getTask(t.name, t.options);
    } catch (err) {
      problems.push({ path: "task.options", message: (err as Error).message });
    }
  }
  if (problems.length === 0) problems.push(...memoryProblems(parsed.data)); // refuse what would abort the process
  if (problems.length > 0) {
    throw new ConfigError(`${source}: invalid recipe\n${problems.map((p) => `  ${p.path}: ${p.message}`).join("\n")}`);
  }
  return parsed.data;
}

/** One zod issue as `field: what is wrong; allowed: ...`. */
function formatIssue(issue: z.core.$ZodIssue, input: unknown): string {
  const path = issue.path.map(String).join(".") || "(top level)";
  const got = valueAt(input, issue.path);
  switch (issue.code) {
    case "invalid_value":
      return `${path}: ${JSON.stringify(got)} is not allowed; allowed: ${issue.values.map((v) => JSON.stringify(v)).join(" | ")}`;
    case "invalid_union": {
      const u = issue as { discriminator?: string; options?: unknown[] };
      if (u.discriminator && u.options) {
        return `${path}: ${JSON.stringify(got)} is not allowed; allowed: ${u.options.map((v) => JSON.stringify(v)).join(" | ")}`;
      }
      return `${path}: ${issue.message}`;
    }
    case "unrecognized_keys": {
      const allowed = allowedKeys(input, issue.path);
      const where = path === "(top level)" ? "" : `${path}.`;
      return issue.keys
        .map((k) => `${where}${k}: unknown field${allowed ? `; allowed: ${allowed.join(", ")}` : ""}`)
        .join("\n  ");
    }
    default:
      return `${path}: ${issue.message}${got !== undefined ? ` (got ${JSON.stringify(got)})` : ""}`;
  }
}

function valueAt(x: unknown, path: readonly PropertyKey[]): unknown {
  let cur = x;
  for (const k of path) {
    if (typeof cur !== "object" || cur === null) return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[k];
  }
  return cur;
}

/** The field names the schema accepts at `path` (following union members by their `type`). */
function allowedKeys(input: unknown, path: readonly PropertyKey[]): string[] | null {
  let schema: any = TrainConfigSchema;
  let value: unknown = input;
  const unwrap = (s: any): any => {
    for (;;) {
      const def = s?._zod?.def;
      if (!def) return s;
      if (
        def.type === "default" ||
        def.type === "prefault" ||
        def.type === "optional" ||
        def.type === "nullable" ||
        def.type === "pipe"
      ) {
        s = def.innerType ?? def.in;
      } else if (def.type === "union") {
        const t = (value as { type?: unknown } | null)?.type;
        const member = def.options.find((o: any) => o._zod.def.shape?.type?._zod.def.values?.includes(t));
        if (!member) return null;
        s = member;
      } else return s;
    }
  };
  schema = unwrap(schema);
  for (const k of path) {
    const shape = schema?._zod?.def?.shape;
    if (!shape || !(String(k) in shape)) return null;
    value = valueAt(value, [k]);
    schema = unwrap(shape[String(k)]);
  }
  const shape = schema?._zod?.def?.shape;
  return shape ? Object.keys(shape) : null;
}
