/**
 * Scores one batch of validated items, in order, each to a result or an item error; nothing an item does can fail
 * the batch. A reward item goes through the same steps as `RewardRegistry.score` (options parsed by the reward's
 * schema, then `spec.score`), so the numbers equal in-process scoring; where the registry turns a throwing checker
 * into `score: null`, the service answers an explicit `reward-failed` error so the caller sees why. A task item is
 * scored by the task's own `score` (its weighted terms, algorithms spec §8.1).
 *
 * Time: each asynchronous item is raced against `itemTimeoutMs`. Code-running rewards run in the sandbox pool (their
 * own deadlines kill runaway programs); a synchronous checker cannot be interrupted, so the timeout bounds waiting,
 * not computing, and a synchronous result is taken as it is, without a timer or a promise per item. A batch yields
 * to the event loop whenever it has run for `SLICE_MS` since it last did, so a large batch of quick checks leaves
 * room for other requests and for /healthz. (Yielding after every item, as it once
 * did, cost a whole event-loop turn per item: about 30 µs, as much as scoring a maths answer; bench:serve's
 * `cpu_ms_per_item` figures show it.)
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import type { RewardRegistry, RewardResult } from "../rewards/index.js";
import type { Task, TaskRegistry } from "../tasks/index.js";
import type { ItemErrorCode, ItemResult, RewardItem, ScoreItem, Scored, TaskItem } from "./schemas.js";

/** What scoring needs: the registries, the per-item time limit and an observer for metrics. */
export interface ScoringContext {
  rewards: RewardRegistry;
  tasks: TaskRegistry;
  itemTimeoutMs: number;
  /** How long the batch may score before it yields to the event loop (ms); default SLICE_MS. */
  sliceMs?: number;
  /** Called once per item with its metrics label (reward name, `task:<name>`, or `(unknown)`) and outcome. */
  observe?(label: string, result: ItemResult, seconds: number): void;
  /** Called once per item, as soon as it is scored, with its index in the batch (a worker saves these as it goes). */
  onItem?(index: number, result: ItemResult): void;
}

/** How long a batch may score before it yields to the event loop (ms). */
export const SLICE_MS = 2;

/** Built tasks by name and options, so a batch of one task does not rebuild it per item (bounded). */
const TASK_CACHE_MAX = 64;

/** An item error result. */
export function itemError(code: ItemErrorCode, message: string): ItemResult {
  return { error: { code, message } };
}

/** Scores `items` in order; see the file comment. */
export async function scoreItems(items: readonly ScoreItem[], ctx: ScoringContext): Promise<ItemResult[]> {
  const cache = new Map<string, Task>();
  const pending: (ItemResult | Promise<ItemResult>)[] = [];
  let sliceStart = performance.now();
  for (let index = 0; index < items.length; index++) {
    pending.push(scoreOne(items[index]!, index, ctx, cache)); // a synchronous checker runs here, before scoreOne returns
    if (performance.now() - sliceStart >= (ctx.sliceMs ?? SLICE_MS)) {
      await nextTurn();
      sliceStart = performance.now();
    }
  }
  return Promise.all(pending);
}

function scoreOne(
  item: ScoreItem,
  index: number,
  ctx: ScoringContext,
  cache: Map<string, Task>,
): ItemResult | Promise<ItemResult> {
  const started = performance.now();
  const done = (result: ItemResult) => {
    ctx.observe?.(labelOf(item, ctx), result, (performance.now() - started) / 1000);
    ctx.onItem?.(index, result);
    return result;
  };
  const work = "reward" in item ? scoreReward(item, ctx.rewards) : scoreTask(item as TaskItem, ctx.tasks, cache);
  // A synchronous checker has already finished: no timer could have fired, so there is nothing to race.
  if (!(work instanceof Promise)) return done(work);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<ItemResult>((resolve) => {
    const what = "reward" in item ? `reward ${item.reward}` : `task ${item.task}`;
    timer = setTimeout(
      () => resolve(itemError("timeout", `${what} took longer than itemTimeoutMs (${ctx.itemTimeoutMs} ms)`)),
      ctx.itemTimeoutMs,
    );
  });
  return Promise.race([work, timeout])
    .finally(() => clearTimeout(timer))
    .then(done);
}

/** The metrics label: known names only, so a client cannot grow the label set with made-up names. */
function labelOf(item: ScoreItem, ctx: ScoringContext): string {
  if ("reward" in item) return ctx.rewards.has(item.reward) ? item.reward : "(unknown)";
  return ctx.tasks.has(item.task) ? `task:${item.task}` : "(unknown)";
}

/** A reward item's result: synchronous when the reward's checker is (most are), a promise when it is async. */
function scoreReward(item: RewardItem, registry: RewardRegistry): ItemResult | Promise<ItemResult> {
  if (!registry.has(item.reward)) {
    const known = registry.list().map((s) => s.name);
    return itemError("unknown-reward", `unknown reward "${item.reward}"; known: ${known.join(", ")}`);
  }
  const spec = registry.get(item.reward);
  const parsed = spec.options.safeParse(item.options ?? {});
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(options)"}: ${i.message}`);
    return itemError("invalid-options", `options of ${item.reward}: ${issues.join("; ")}`);
  }
  const { completion, example } = item;
  const input = {
    completion,
    gold: example.gold,
    ...(example.prompt !== undefined ? { prompt: example.prompt } : {}),
    ...(example.tokens ? { tokens: example.tokens } : {}),
    ...(example.turns ? { turns: example.turns } : {}),
  };
  const failed = (err: unknown) => itemError("reward-failed", `${item.reward} threw: ${messageOf(err)}`);
  const scored = (r: RewardResult) => {
    try {
      return toScored(r);
    } catch (err) {
      return failed(err); // e.g. a checker that returned nothing
    }
  };
  let out: RewardResult | PromiseLike<RewardResult>;
  try {
    out = spec.score(input, parsed.data);
  } catch (err) {
    return failed(err);
  }
  return isThenable(out) ? Promise.resolve(out).then(scored, failed) : scored(out);
}

const isThenable = (v: unknown): v is PromiseLike<RewardResult> =>
  v !== null && typeof v === "object" && typeof (v as { then?: unknown }).then === "function";

async function scoreTask(item: TaskItem, registry: TaskRegistry, cache: Map<string, Task>): Promise<ItemResult> {
  const served = registry.names().filter((n) => !registry.definition(n).localOnly);
  if (!served.includes(item.task)) {
    // A localOnly task (its options name files, modules, models or URLs) is never built from a request.
    return itemError("unknown-task", `unknown task "${item.task}"; known: ${served.join(", ")}`);
  }
  const key = `${item.task}\u0000${JSON.stringify(item.taskOptions ?? {})}`;
  let task = cache.get(key);
  if (!task) {
    try {
      task = registry.get(item.task, item.taskOptions ?? {});
    } catch (err) {
      return itemError("invalid-options", messageOf(err));
    }
    if (cache.size < TASK_CACHE_MAX) cache.set(key, task);
  }
  const { completion, example } = item;
  const ex = { id: "request", prompt: example.prompt ?? "", gold: example.gold, goldCompletion: "" };
  try {
    return toScored(await task.score(ex, completion, example.tokens));
  } catch (err) {
    return itemError("reward-failed", `task ${item.task} threw: ${messageOf(err)}`);
  }
}

/**
 * The wire form of a reward result. A non-finite score becomes null (JSON has no NaN; the contract's "not
 * scorable"); non-finite terms are dropped; `info` that JSON cannot hold (a BigInt, a cycle) is replaced by a note.
 */
export function toScored(r: RewardResult): Scored {
  const score = typeof r.score === "number" && Number.isFinite(r.score) ? r.score : null;
  const terms: Record<string, number> = {};
  for (const [k, v] of Object.entries(r.terms ?? {})) if (Number.isFinite(v)) terms[k] = v;
  const out: Scored = { score, terms };
  if (r.info !== undefined) {
    if (isPlainJson(r.info, 0)) out.info = r.info;
    else
      try {
        out.info = JSON.parse(JSON.stringify(r.info)) as Record<string, unknown>;
      } catch (err) {
        out.info = { unserialisable: `info could not be written as JSON: ${messageOf(err)}` };
      }
  }
  if (r.firstErrorEnd !== undefined && Number.isFinite(r.firstErrorEnd)) out.firstErrorEnd = r.firstErrorEnd;
  return out;
}

/** Deepest `info` the fast path walks; deeper (or cyclic) values take the JSON round trip. */
const PLAIN_DEPTH = 8;

/**
 * Whether a JSON round trip would give `v` back unchanged: null, booleans, finite numbers, strings, and arrays and
 * plain objects of those (no undefined, no toJSON, no class instances). Such an `info` is passed as it is; a
 * reward's usual small `info` then costs a walk instead of a stringify and a parse (a V8 profile of bench:serve's
 * worker put the round trip at about 5 µs per maths item; the worker's measured CPU per item hardly moved).
 */
function isPlainJson(v: unknown, depth: number): boolean {
  if (v === null || typeof v === "string" || typeof v === "boolean") return true;
  if (typeof v === "number") return Number.isFinite(v) && !Object.is(v, -0);
  if (typeof v !== "object" || depth >= PLAIN_DEPTH) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!isPlainJson(v[i], depth + 1)) return false;
    return true;
  }
  if (Object.getPrototypeOf(v) !== Object.prototype) return false;
  if ("toJSON" in v) return false;
  for (const k in v) if (!isPlainJson((v as Record<string, unknown>)[k], depth + 1)) return false;
  return true;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
