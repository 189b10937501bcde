/**
 * Runs an async job to completion from synchronous code: a worker thread does the work while this thread waits on a
 * shared flag (`Atomics.wait`), then takes the result off a message port (`receiveMessageOnPort`). This is the
 * pattern of the `synckit` package, in a few lines.
 *
 * Why: a task is built synchronously (`getTask`, used by the recipe loader, the trainer and every command), but
 * Parquet reading (hyparquet) and loading a user's reward module are async. The job is plain JavaScript run in the
 * worker (no TypeScript loader there), which imports packages by absolute file URL (`packageUrl`).
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { MessageChannel, Worker, receiveMessageOnPort } from "node:worker_threads";

// The worker: runs `body` as an async function of `data`, posts {ok, value} or {ok: false, error}, raises the flag.
const WORKER = `
const { workerData } = require("node:worker_threads");
const { flag, port, body, data } = workerData;
const AsyncFunction = (async () => {}).constructor;
new AsyncFunction("data", body)(data).then(
  (value) => port.postMessage({ ok: true, value }),
  (err) => port.postMessage({ ok: false, error: err && err.message ? err.message : String(err) }),
).finally(() => { Atomics.store(flag, 0, 1); Atomics.notify(flag, 0); });
`;

/** Runs `body` (the text of an async JavaScript function of `data`) in a worker and returns its result; throws its error. */
export function callSync<T>(body: string, data: unknown, timeoutMs = 120_000): T {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: { flag, port: port2, body, data },
    transferList: [port2],
    execArgv: [],
  });
  try {
    if (Atomics.wait(flag, 0, 0, timeoutMs) === "timed-out") throw new Error(`gave no answer within ${timeoutMs} ms`);
    const msg = receiveMessageOnPort(port1)?.message as { ok: boolean; value?: T; error?: string } | undefined;
    if (!msg) throw new Error("the worker ended without an answer");
    if (!msg.ok) throw new Error(msg.error);
    return msg.value as T;
  } finally {
    port1.close();
    void worker.terminate();
  }
}

/** File URL of `rel` inside the installed package `name`, found by walking up from this file's node_modules. */
export function packageUrl(name: string, rel: string): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const p = join(dir, "node_modules", name, rel);
    if (existsSync(p)) return pathToFileURL(p).href;
    const up = dirname(dir);
    if (up === dir) throw new Error(`package ${name} is not installed (looked for node_modules/${name}/${rel})`);
    dir = up;
  }
}
