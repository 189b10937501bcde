/**
 * Job deadlines: code running inside a reward pool worker process tells the pool when its next phase must end.
 *
 * The pool kills a worker process whose job overruns its deadline (pool.ts). A job starts with the deadline of its
 * `wallMs`; `setJobDeadline(ms)` replaces it with "`ms` from now", so a job made of phases (a program, then a solve)
 * can hold each phase to its own documented limit instead of one loose total. This matters because V8 cannot
 * interrupt some built-ins (`new Array(2 ** 32 - 1).indexOf(1)`, an `Error` whose `message` getter loops while the
 * host reads it): isolated-vm's own timeout never fires for them, and only killing the process stops them.
 *
 * Outside a worker process (a test calling a job function directly) these calls do nothing.
 */

/** The message a worker sends to re-arm its job's deadline. */
export interface DeadlineMessage {
  id: number;
  deadlineMs: number;
}

let currentJob: number | null = null;

/** Set by the worker entry (worker.ts) around each job; `null` between jobs. */
export function setCurrentJob(id: number | null): void {
  currentJob = id;
}

/**
 * Re-arms the running job's deadline to `ms` from now. The message is written to the IPC pipe synchronously when
 * the pipe is free (libuv tries the write at once), so it reaches the pool even if the caller then blocks its thread.
 */
export function setJobDeadline(ms: number): void {
  if (!(ms > 0) || !Number.isFinite(ms)) throw new RangeError(`setJobDeadline: ms must be finite and > 0, got ${ms}`);
  if (currentJob === null || typeof process.send !== "function") return;
  const msg: DeadlineMessage = { id: currentJob, deadlineMs: ms };
  process.send(msg);
}
