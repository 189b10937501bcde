/**
 * The dashboard on its own thread, for `rlvr train --dashboard`: a training step is synchronous work that can hold
 * the main thread for seconds, and a server on that thread would not answer until the step ends. A worker thread
 * has its own event loop, so the page stays live; it ends with the process, so nothing outlives the run.
 * Under tsx (tests) the worker runs thread-main.ts with tsx's loader; from dist/ it runs thread-main.js.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { DashboardOptions } from "./server.js";

const HERE = import.meta.url;
const SOURCE_EXT = HERE.endsWith(".ts") ? ".ts" : ".js";

/** A dashboard served from a worker thread. */
export interface DashboardThread {
  url: string;
  /** Ends open event streams, stops listening and ends the thread. */
  close(): Promise<void>;
}

/** An error the thread reported on start; `code` is Node's (EADDRINUSE when the port is taken). */
export class DashboardStartError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

/**
 * The worker's entry, as code: under tsx, registers tsx's loader in the worker first (a worker's `execArgv`
 * `--import` does not apply to its own entry module on Node 20), then imports thread-main.
 */
function workerSource(): string {
  const main = JSON.stringify(new URL(`./thread-main${SOURCE_EXT}`, HERE).href);
  if (SOURCE_EXT !== ".ts") return `import(${main});`;
  const api = pathToFileURL(join(dirname(createRequire(HERE).resolve("tsx/package.json")), "dist/esm/api/index.mjs"));
  return `import(${JSON.stringify(api.href)}).then((tsx) => { tsx.register(); return import(${main}); });`;
}

/** Starts the dashboard on a worker thread; resolves once it listens. */
export function startDashboardThread(
  options: DashboardOptions & { port?: number; host?: string },
): Promise<DashboardThread> {
  const worker = new Worker(workerSource(), { eval: true, workerData: options, execArgv: [] });
  const exited = new Promise<void>((r) => worker.once("exit", () => r()));
  return new Promise((resolve, reject) => {
    worker.once("error", reject);
    worker.once("message", (msg: { url?: string; error?: string; code?: string }) => {
      if (msg.url === undefined)
        return reject(new DashboardStartError(msg.error ?? "dashboard did not start", msg.code));
      resolve({
        url: msg.url,
        close: async () => {
          worker.postMessage("close");
          const timeout = setTimeout(() => void worker.terminate(), 5000);
          await exited;
          clearTimeout(timeout);
        },
      });
    });
  });
}
