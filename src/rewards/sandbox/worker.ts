/**
 * Entry point of a reward pool worker *process* (pool.ts forks it). It receives jobs `{ id, module, fn, args }` over
 * the IPC channel, imports `module` (a file URL inside this package, chosen by our code, never by model text), awaits
 * `fn(args)` and sends the result back. Jobs run one at a time per process; each job creates and disposes its own
 * isolates. A job that crashes V8 (an out-of-memory abort), overruns its deadline or loops inside a built-in takes
 * only this process down; the pool reports it and forks a fresh one.
 *
 * Messages to the pool: `{ hello }` once loaded, `{ id, started }` once the job's module is loaded (its deadline
 * starts then), `{ id, deadlineMs }` from `setJobDeadline`, and `{ id, ok, value | error }` at the end.
 */
import { setCurrentJob } from "./deadline.js";

interface JobMessage {
  id: number;
  module: string;
  fn: string;
  args: unknown;
}

if (typeof process.send !== "function") throw new Error("sandbox/worker must run as a forked child process");
const send = (msg: object): void => {
  process.send!(msg);
};

// The pool is gone (closed, or the trainer died): nothing is left to answer to.
process.on("disconnect", () => process.exit(0));

process.on("message", async (job: JobMessage) => {
  try {
    const mod = (await import(job.module)) as Record<string, unknown>;
    const fn = mod[job.fn];
    if (typeof fn !== "function") throw new Error(`${job.module} has no exported function "${job.fn}"`);
    // The job's own deadline starts now: loading (and, under tsx, compiling) its module is not its time.
    setCurrentJob(job.id);
    send({ id: job.id, started: true });
    const value: unknown = await (fn as (a: unknown) => unknown)(job.args);
    send({ id: job.id, ok: true, value });
  } catch (err) {
    send({ id: job.id, ok: false, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
  } finally {
    setCurrentJob(null);
  }
});

send({ hello: true });
