/**
 * Entry point of a reward pool worker thread. It receives jobs `{ id, module, fn, args }`, imports `module` (a file
 * URL inside this package, chosen by our code, never by model text), awaits `fn(args)` and posts the result back.
 * Jobs run one at a time per worker; each job creates and disposes its own isolates.
 */
import { parentPort } from "node:worker_threads";

interface JobMessage {
  id: number;
  module: string;
  fn: string;
  args: unknown;
}

if (!parentPort) throw new Error("sandbox/worker.ts must run as a worker thread");
const port = parentPort;

port.on("message", async (job: JobMessage) => {
  try {
    const mod = (await import(job.module)) as Record<string, unknown>;
    const fn = mod[job.fn];
    if (typeof fn !== "function") throw new Error(`${job.module} has no exported function "${job.fn}"`);
    // The job's own watchdog starts now: loading (and, under tsx, compiling) its module is not its time.
    port.postMessage({ id: job.id, started: true });
    const value: unknown = await (fn as (a: unknown) => unknown)(job.args);
    port.postMessage({ id: job.id, ok: true, value });
  } catch (err) {
    port.postMessage({ id: job.id, ok: false, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
  }
});
