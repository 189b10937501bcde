/**
 * A heap budget for a long-running service process: when the JS heap's old generation has grown by more than
 * `budgetMb` since the last full collection, run one. `rlvr serve-rewards` starts it (`--heap-budget-mb`).
 *
 * Why: under a steady stream of score requests, a request's items and results live as long as the request (tens to
 * hundreds of ms), long enough to be promoted to the old generation, where V8 lets them pile up until its heap limit
 * heuristics call a mark-compact. The server's RSS then climbs by tens of MB over 100,000 items and drops back: no
 * leak, but a sawtooth as tall as V8 likes, and a memory figure an operator cannot plan around. Collecting at a fixed
 * growth keeps the RSS within about the budget of the live heap. (V8's own `--heap-growing-percent` does the same
 * only as a command-line flag, and at 10% it cost a third of the throughput in bench:serve; setting it at run time
 * has no effect: docs/reward-service.md.)
 *
 * Cost control: a collection is skipped while the time since the last one is under `maxShare`⁻¹ times the last one's
 * duration, so however fast garbage arrives, collections take at most about `maxShare` of the process's time (the
 * budget is then exceeded rather than the CPU spent).
 *
 * The full collection is V8's `gc()`: taken from the process when node runs with `--expose-gc`, else exposed for a
 * moment with `v8.setFlagsFromString` and read from a fresh context (the flag is turned off again at once, so other
 * code does not see a `gc` global).
 */
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** What `startHeapBudget` takes; `heapUsed` and `collect` are for tests. */
export interface HeapBudgetOptions {
  /** Old-generation growth (MB) since the last full collection that triggers the next one; 0 turns it off. */
  budgetMb: number;
  /** How often the heap is read (ms). */
  checkMs?: number;
  /** Largest share of the process's time the collections may take (0 < share <= 1). */
  maxShare?: number;
  /** Bytes in the old generation now (default: V8's old and large-object spaces). */
  heapUsed?: () => number;
  /** Runs a full collection (default: V8's gc()). */
  collect?: () => void;
  /** Called after each collection with its duration (s) and the old generation's bytes before and after. */
  onCollect?(seconds: number, before: number, after: number): void;
  /** Milliseconds now (tests). */
  now?: () => number;
}

/** A running heap budget. */
export interface HeapBudget {
  /** Reads the heap once and collects if the budget is exceeded (the timer calls this); true when it collected. */
  check(): boolean;
  /** Full collections run so far. */
  collections(): number;
  stop(): void;
}

/** Default heap read interval (ms). */
export const HEAP_CHECK_MS = 200;
/** Default largest share of the process's time spent in budget collections. */
export const HEAP_MAX_SHARE = 0.1;

/** Old-generation bytes: V8's old space plus its large-object space (where big strings and arrays live). */
export function oldGenerationBytes(): number {
  let bytes = 0;
  for (const s of getHeapSpaceStatistics())
    if (s.space_name === "old_space" || s.space_name === "large_object_space") bytes += s.space_used_size;
  return bytes;
}

let gcFunction: (() => void) | null = null;

/** V8's full collection, exposed once per process (see the file comment). */
export function fullCollection(): () => void {
  if (gcFunction) return gcFunction;
  const own = (globalThis as { gc?: unknown }).gc;
  if (typeof own === "function") return (gcFunction = own as () => void);
  setFlagsFromString("--expose-gc");
  try {
    gcFunction = runInNewContext("gc") as () => void;
  } finally {
    setFlagsFromString("--no-expose-gc");
  }
  if (typeof gcFunction !== "function") throw new Error("heap budget: V8's gc() could not be exposed");
  return gcFunction;
}

/**
 * Starts the budget: a timer (unref'd, so it never keeps the process alive) reads the old generation every `checkMs`
 * and collects once it has grown by `budgetMb` over the lowest size read since the last collection (V8's own
 * collections lower that mark too). `budgetMb` 0 returns a budget that never
 * collects.
 */
export function startHeapBudget(options: HeapBudgetOptions): HeapBudget {
  const {
    budgetMb,
    checkMs = HEAP_CHECK_MS,
    maxShare = HEAP_MAX_SHARE,
    heapUsed = oldGenerationBytes,
    now = () => performance.now(),
    onCollect,
  } = options;
  if (!(budgetMb >= 0) || !Number.isFinite(budgetMb)) throw new RangeError(`heap budget: budgetMb ${budgetMb}`);
  if (!(maxShare > 0 && maxShare <= 1)) throw new RangeError(`heap budget: maxShare ${maxShare} not in (0, 1]`);
  let count = 0;
  if (budgetMb === 0) return { check: () => false, collections: () => 0, stop() {} };
  const collect = options.collect ?? fullCollection();
  const budget = budgetMb * 1024 * 1024;
  let floor = heapUsed();
  let lastEnd = -Infinity;
  let lastMs = 0;
  const check = () => {
    const before = heapUsed();
    // Growth counts from the lowest point since the last collection: V8's own collections lower it too.
    floor = Math.min(floor, before);
    if (before - floor <= budget) return false;
    const t0 = now();
    if (t0 - lastEnd < lastMs / maxShare) return false;
    collect();
    lastEnd = now();
    lastMs = lastEnd - t0;
    floor = heapUsed();
    count++;
    onCollect?.(lastMs / 1000, before, floor);
    return true;
  };
  const timer = setInterval(check, checkMs);
  timer.unref();
  return { check, collections: () => count, stop: () => clearInterval(timer) };
}
