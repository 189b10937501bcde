/**
 * How the CLI reports a failure. rlvr's own errors (a bad recipe, a lying checkpoint, a run folder that must not be
 * deleted) and errors of the machine (a file system refusing a write, an allocation that failed) print as one
 * `rlvr: ...` line and exit with status 1; anything else is a bug in rlvr and keeps its stack trace.
 */
import { RlvrError } from "../util/index.js";

/** V8's messages for a buffer or typed array too large to allocate. */
const ALLOCATION = /Array buffer allocation failed|Invalid typed array length|Array buffer exceeds/i;

/** The one-line message for an error the user can act on, or null for a bug (which keeps its stack). */
export function userMessage(err: unknown): string | null {
  if (err instanceof RlvrError) return err.message;
  const e = err as NodeJS.ErrnoException | null;
  // Node's system errors (EACCES, ENOSPC, ENOTDIR, ...) carry the syscall and the path; they are about the machine.
  if (e instanceof Error && typeof e.code === "string" && typeof e.syscall === "string") {
    return `${e.message}${e.path ? "" : ` (${e.syscall})`}`;
  }
  // A typed array or buffer too large to allocate: a recipe or model bigger than the estimate allowed for.
  if (e instanceof RangeError && ALLOCATION.test(e.message)) {
    return (
      `out of memory: ${e.message}; reduce the model or the batch ` +
      "(train.promptsPerStep, train.groupSize, train.microBatchSize)"
    );
  }
  return null;
}

/**
 * Wraps a command action so that errors the user can act on print as one clear message and exit with
 * status 1, without a stack trace; anything else is a bug and keeps its stack.
 */
export function withErrors<A extends unknown[]>(
  fn: (...args: A) => Promise<void> | void,
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (err) {
      const msg = userMessage(err);
      if (msg === null) throw err;
      console.error(`rlvr: ${msg}`);
      process.exitCode = 1;
    }
  };
}
