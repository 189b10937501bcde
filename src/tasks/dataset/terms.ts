/**
 * A dataset's rewards: reward specs (options.ts) → the task's weighted terms, user modules registered and checked at
 * load, each term's gold in the shape its reward expects, and the check that every gold parses.
 *
 * Gold shapes: a user reward gets the stored ground truth plus `dataSource` and `extraInfo` (verl's compute_score
 * arguments); a registered reward whose example gold is text gets text, and one whose example gold is an object
 * gets the stored object (or a JSON string parsed). A gold "parses" when the reward scores its own full-credit
 * completion as non-null; rewards that answer asynchronously are not checked at load.
 */
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { ConfigError } from "../../util/errors.js";
import "../../rewards/index.js"; // a dataset may name any built-in reward
import { rewards } from "../../rewards/registry.js";
import { registerUserReward } from "../../rewards/user-module.js";
import type { RewardTerm } from "../types.js";
import type { ModuleReward, RewardRef, RewardSpecOption } from "./options.js";
import { callSync, packageUrl } from "./sync-worker.js";

/** A dataset's gold: the stored ground truth, with the row's data source and extra info. */
export interface DatasetGold {
  answer: unknown;
  dataSource?: string;
  extraInfo?: unknown;
}

/** A term with the reward reference it came from. */
export interface DatasetTerm extends RewardTerm {
  user: boolean;
}

/** The terms of one reward spec: a single reward is term "correct" with weight 1. */
export function termsOf(spec: RewardSpecOption): DatasetTerm[] {
  const list = Array.isArray(spec) ? spec : [{ term: "correct", weight: 1, reward: spec }];
  return list.map(({ term, weight, reward }) => {
    const ref = normalise(reward);
    if ("module" in ref) {
      const name = registerUserReward({
        file: ref.module,
        exportName: ref.export,
        sandbox: ref.sandbox,
        timeoutMs: ref.timeoutMs,
      });
      return { name: term, reward: name, weight, options: ref.options, user: true };
    }
    if (!rewards.has(ref.name))
      throw new ConfigError(`reward "${ref.name}" is not registered; see \`rlvr rewards\` for the names`);
    const parsed = rewards.get(ref.name).options.safeParse(ref.options);
    if (!parsed.success) throw new ConfigError(`reward "${ref.name}" options: ${parsed.error.message}`);
    return { name: term, reward: ref.name, weight, options: ref.options, user: false };
  });
}

function normalise(ref: RewardRef): { name: string; options: Record<string, unknown> } | ModuleReward {
  return typeof ref === "string" ? { name: ref, options: {} } : ref;
}

/** Module paths of a reward spec made absolute against `base` (the recipe's folder). */
export function resolveModulePaths(spec: unknown, base: string): unknown {
  if (Array.isArray(spec))
    return spec.map((t) => (t && typeof t === "object" ? { ...t, reward: resolveModulePaths(t.reward, base) } : t));
  if (spec && typeof spec === "object" && typeof (spec as { module?: unknown }).module === "string") {
    const m = (spec as { module: string }).module;
    return { ...spec, module: isAbsolute(m) ? m : resolve(base, m) };
  }
  return spec;
}

/** The gold term `t` is given for a row's gold. */
export function goldFor(t: DatasetTerm, gold: DatasetGold): unknown {
  if (t.user) return gold;
  const example = rewards.get(t.reward).exampleGold;
  const raw = gold.answer;
  if (example !== undefined && typeof example === "object" && typeof raw === "string") {
    try {
      return JSON.parse(raw);
    } catch {
      return raw;
    }
  }
  if (typeof example === "string" && (typeof raw === "number" || typeof raw === "boolean")) return String(raw);
  return raw;
}

/** A full-credit completion for term `t`, from its reward (or the gold as text). */
export function goldCompletionFor(t: DatasetTerm, gold: DatasetGold): string {
  const spec = t.user ? null : rewards.get(t.reward);
  if (spec?.goldCompletion) return spec.goldCompletion(goldFor(t, gold), spec.options.parse(t.options ?? {}));
  return typeof gold.answer === "string" ? gold.answer : JSON.stringify(gold.answer);
}

/** Whether term `t` can score this gold: true, false (its own gold completion scores null), or null (async, unchecked). */
export function goldParses(t: DatasetTerm, gold: DatasetGold, prompt: string): boolean | null {
  if (t.user) return null;
  const spec = rewards.get(t.reward);
  const options = spec.options.parse(t.options ?? {});
  let out: ReturnType<typeof spec.score>;
  try {
    out = spec.score({ completion: goldCompletionFor(t, gold), gold: goldFor(t, gold), prompt }, options);
  } catch {
    return false;
  }
  if (out instanceof Promise) {
    out.catch(() => {});
    return null;
  }
  return out.score !== null;
}

// Runs in a worker: loads the module, checks the export and its options, calls it on one row with a timeout.
const VALIDATE = `
let mod;
if (/\\.[mc]?ts$/.test(data.file)) {
  const { tsImport } = await import(data.tsx);
  mod = await tsImport(data.url, data.url);
} else mod = await import(data.url);
const fn = mod[data.exportName];
if (typeof fn !== "function")
  throw new Error("no exported function " + JSON.stringify(data.exportName) + "; exports: " + Object.keys(mod).join(", "));
let options = data.options;
if (mod.options && typeof mod.options.safeParse === "function") {
  const p = mod.options.safeParse(options);
  if (!p.success) {
    const issues = p.error && Array.isArray(p.error.issues)
      ? p.error.issues.map((i) => (i.path && i.path.length ? i.path.join(".") + ": " : "") + i.message).join("; ")
      : p.error && p.error.message;
    throw new Error("invalid options: " + issues);
  }
  options = p.data;
}
const value = await Promise.race([
  Promise.resolve().then(() => fn(data.input, options)),
  new Promise((_, no) => setTimeout(() => no(new Error("no answer within " + data.timeoutMs + " ms on the first row")), data.timeoutMs)),
]);
const ok = value === null || typeof value === "number" || (typeof value === "object" && value !== null && "score" in value &&
  (value.score === null || typeof value.score === "number"));
if (!ok) throw new Error("returned " + JSON.stringify(value) + " on the first row; expected a number, {score} or null");
return { hasSchema: Boolean(mod.options && mod.options.safeParse), value: JSON.parse(JSON.stringify(value ?? null)) };
`;

/**
 * Checks a user reward module once at load, in a worker: the export is a function, the options pass its `options`
 * schema, and on the first row (completion = the gold as text) it returns a number, `{score}` or null in time.
 */
export function validateUserModule(ref: ModuleReward, gold: DatasetGold, prompt: string): { hasSchema: boolean } {
  const input = {
    completion: typeof gold.answer === "string" ? gold.answer : JSON.stringify(gold.answer),
    gold: gold.answer,
    prompt,
    ...(gold.dataSource !== undefined ? { dataSource: gold.dataSource } : {}),
    ...(gold.extraInfo !== undefined ? { extraInfo: gold.extraInfo } : {}),
  };
  try {
    const url = pathToFileURL(ref.module).href;
    return callSync(
      VALIDATE,
      {
        file: ref.module,
        url,
        tsx: /\.[mc]?ts$/.test(ref.module) ? packageUrl("tsx", "dist/esm/api/index.mjs") : null,
        exportName: ref.export,
        options: ref.options,
        input,
        timeoutMs: ref.timeoutMs,
      },
      ref.timeoutMs + 30_000,
    );
  } catch (err) {
    throw new ConfigError(`reward module ${ref.module} (export "${ref.export}"): ${(err as Error).message}`);
  }
}

/** The module rewards a spec names (for validation at load). */
export function moduleRefs(spec: RewardSpecOption): ModuleReward[] {
  const refs = Array.isArray(spec) ? spec.map((t) => t.reward) : [spec];
  return refs.filter((r): r is ModuleReward => typeof r === "object" && "module" in r);
}
