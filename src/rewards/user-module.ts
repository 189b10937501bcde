/**
 * User reward modules: `reward: { module: "./my-reward.ts", export: "score" }` in a dataset recipe registers the
 * module's function as a reward (docs/data.md "Your own reward").
 *
 * The function is called as `fn({ completion, gold, prompt, dataSource, extraInfo }, options)` and returns a
 * number, `{ score, terms?, info? }`, or null (not scorable); it may be async. If the module exports `options` (a zod
 * schema, or anything with `safeParse`), options are checked with it. A call that throws, returns anything else,
 * or passes `timeoutMs` gives null for that completion only, with the reason in `info.error`; the registry's
 * result is counted by the trainer like every null (`reward/nullFrac`) and here per reward (`userRewardStats`).
 *
 * In the main process (the default) a timeout bounds an async call; a synchronous infinite loop cannot be
 * interrupted there, so `sandbox: true` runs each call in the sandbox worker pool, whose processes are killed at the
 * deadline (src/rewards/sandbox/pool.ts). TypeScript modules load through tsx (`tsx/esm/api`) when Node cannot
 * import them itself.
 */
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { rewards, type RewardRegistry } from "./registry.js";
import type { RewardInput, RewardResult } from "./types.js";
import { moduleUrl, sharedPool } from "./sandbox/pool.js";

/** Where a user reward lives and how it runs. */
export interface UserRewardSource {
  /** Absolute path of the module. */
  file: string;
  /** Name of the exported function. */
  exportName: string;
  /** Run each call in the sandbox worker pool. */
  sandbox?: boolean;
  /** A call past this gives null (ms). */
  timeoutMs?: number;
}

/** What the user's function is called with. */
export interface UserRewardInput {
  completion: string;
  gold: unknown;
  prompt?: string;
  dataSource?: string;
  extraInfo?: unknown;
}

/** Counters of one user reward's failures (each one cost a single completion). */
export interface UserRewardStats {
  calls: number;
  errors: number;
  timeouts: number;
}

const stats = new Map<string, UserRewardStats>();

/** A call's time limit unless the recipe says (ms). */
export const DEFAULT_TIMEOUT_MS = 10_000;

/** The registry name of a user reward: `module:<file>#<export>`, with `?sandbox` and a non-default `timeoutMs=`. */
export function userRewardName(file: string, exportName: string, sandbox = false, timeoutMs?: number): string {
  const ms = timeoutMs !== undefined && timeoutMs !== DEFAULT_TIMEOUT_MS ? [`timeoutMs=${timeoutMs}`] : [];
  const mode = [...(sandbox ? ["sandbox"] : []), ...ms];
  return `module:${file}#${exportName}${mode.length ? `?${mode.join("&")}` : ""}`;
}

/** Failure counters of a registered user reward. */
export function userRewardStats(name: string): UserRewardStats {
  return stats.get(name) ?? { calls: 0, errors: 0, timeouts: 0 };
}

/** Imports a user module (TypeScript through tsx when Node cannot load it itself). */
export async function importUserModule(file: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(file).href;
  if (!/\.[mc]?ts$/.test(file)) return (await import(url)) as Record<string, unknown>;
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (err) {
    if ((err as { code?: string }).code !== "ERR_UNKNOWN_FILE_EXTENSION") throw err;
  }
  const api = (await import("tsx/esm/api").catch(() => null)) as {
    tsImport(u: string, parent: string): Promise<Record<string, unknown>>;
  } | null;
  if (!api)
    throw new Error(`${file}: loading TypeScript needs the tsx package (npm i tsx), or write the reward in JavaScript`);
  return api.tsImport(url, import.meta.url);
}

/** A function's result as a RewardResult; anything but a number, `{score}` or null throws. */
export function toRewardResult(value: unknown): RewardResult {
  if (value === null || value === undefined) return { score: null, terms: {} };
  if (typeof value === "number") return { score: Number.isFinite(value) ? value : null, terms: {} };
  if (typeof value === "object" && "score" in value) {
    const v = value as { score: unknown; terms?: unknown; info?: unknown };
    if (v.score !== null && typeof v.score !== "number") throw new Error(`returned score ${JSON.stringify(v.score)}`);
    const terms = v.terms && typeof v.terms === "object" ? (v.terms as Record<string, number>) : {};
    const info = v.info && typeof v.info === "object" ? (v.info as Record<string, unknown>) : undefined;
    return { score: v.score as number | null, terms, ...(info ? { info } : {}) };
  }
  throw new Error(`returned ${JSON.stringify(value)?.slice(0, 80)}; expected a number, {score} or null`);
}

/** The user's input from a reward input whose gold is a dataset gold (`{ answer, dataSource, extraInfo }`). */
function userInput(input: RewardInput): UserRewardInput {
  const g = input.gold as { answer?: unknown; dataSource?: string; extraInfo?: unknown } | null;
  const dataset = g !== null && typeof g === "object" && "answer" in g;
  return {
    completion: input.completion,
    gold: dataset ? g.answer : input.gold,
    ...(input.prompt !== undefined ? { prompt: input.prompt } : {}),
    ...(dataset && g.dataSource !== undefined ? { dataSource: g.dataSource } : {}),
    ...(dataset && g.extraInfo !== undefined ? { extraInfo: g.extraInfo } : {}),
  };
}

/** A schema error as `path: message; ...` (zod's issues), or its message. */
export function issuesText(error: unknown): string {
  const e = error as { issues?: { path?: PropertyKey[]; message: string }[]; message?: string } | undefined;
  if (Array.isArray(e?.issues))
    return e.issues.map((i) => `${i.path?.length ? `${i.path.map(String).join(".")}: ` : ""}${i.message}`).join("; ");
  return String(e?.message ?? error);
}

/** `p`, or a TimeoutError after `ms` (the timer is cleared as soon as `p` settles). */
async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

class TimeoutError extends Error {}

/** Registers (once per file, export and mode) the user reward of `src`; returns its registry name. */
export function registerUserReward(src: UserRewardSource, registry: RewardRegistry = rewards): string {
  const file = isAbsolute(src.file) ? src.file : resolve(src.file);
  const name = userRewardName(file, src.exportName, src.sandbox, src.timeoutMs);
  if (registry.has(name)) return name;
  const what = `reward module ${file} (export "${src.exportName}")`;
  const timeoutMs = src.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let loaded: Promise<{
    fn: (i: UserRewardInput, o: unknown) => unknown;
    schema: { safeParse?: Function } | null;
  }> | null = null;
  const load = () =>
    (loaded ??= importUserModule(file).then((mod) => {
      const fn = mod[src.exportName];
      if (typeof fn !== "function") throw new Error(`${what}: no exported function "${src.exportName}"`);
      const schema = mod.options as { safeParse?: Function } | undefined;
      return { fn: fn as (i: UserRewardInput, o: unknown) => unknown, schema: schema?.safeParse ? schema : null };
    }));
  const s: UserRewardStats = { calls: 0, errors: 0, timeouts: 0 };
  stats.set(name, s);
  registry.register({
    name,
    description: `user reward ${src.exportName} from ${file}`,
    options: z.record(z.string(), z.unknown()),
    async score(input, options) {
      s.calls++;
      try {
        if (src.sandbox) return await scoreInPool(file, src.exportName, userInput(input), options, timeoutMs);
        const { fn, schema } = await load();
        let opts: unknown = options;
        if (schema) {
          const parsed = schema.safeParse!(options) as {
            success: boolean;
            data?: unknown;
            error?: { message: string };
          };
          if (!parsed.success) throw new Error(`${what}: invalid options: ${issuesText(parsed.error)}`);
          opts = parsed.data;
        }
        const value = await withTimeout(
          Promise.resolve().then(() => fn(userInput(input), opts)),
          timeoutMs,
          what,
        );
        return toRewardResult(value);
      } catch (err) {
        if (err instanceof TimeoutError) s.timeouts++;
        else s.errors++;
        throw err;
      }
    },
  });
  return name;
}

/** One call in the sandbox pool; a process past the deadline is killed and the call reported as a timeout. */
async function scoreInPool(
  file: string,
  exportName: string,
  input: UserRewardInput,
  options: unknown,
  timeoutMs: number,
): Promise<RewardResult> {
  const [out] = await sharedPool().runAll([
    {
      module: moduleUrl("./user-module-job", import.meta.url),
      fn: "runUserReward",
      args: { file, exportName, input, options },
      wallMs: timeoutMs,
    },
  ]);
  if (!out!.ok) {
    if (out!.kind === "timeout") throw new TimeoutError(`reward module ${file}: no answer within ${timeoutMs} ms`);
    throw new Error(`reward module ${file} (export "${exportName}"): ${out!.kind}: ${out!.error}`);
  }
  return toRewardResult(out!.value);
}
