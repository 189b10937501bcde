/**
 * A pool of worker threads that runs reward jobs (sandboxed programs, solver checks, kernel timings) in parallel and
 * off the training loop's thread (rewards spec §12; DESIGN.md "Scale-out").
 *
 * - `runAll(jobs)` returns one outcome per job in input order; a failing job never affects its neighbours.
 * - A wall-clock watchdog per job (2x the job's own limit for sandboxed programs), started once the worker has
 *   loaded the job's module, terminates a stuck worker; the worker is replaced and its job reported as `timeout`. A worker that dies is replaced and its job reported as
 *   `worker-died`.
 * - Jobs with the same `exclusive` key never run at the same time (the kernel timing lock, spec §10.2 #7).
 * - Idle workers are `unref`ed, so an open pool never keeps the process alive.
 * Under tsx/vitest the worker loads its TypeScript sources through `--import tsx`; from `dist/` it is plain JS.
 */
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { SandboxRequest, SandboxResult } from "./run.js";

/** One job: call the exported `fn` of `module` with `args` inside a worker. */
export interface PoolJob {
  /** File URL of an ES module of this package (use `moduleUrl`). */
  module: string;
  /** Name of the exported (possibly async) function. */
  fn: string;
  /** Structured-cloneable argument. */
  args: unknown;
  /** Wall-clock watchdog (ms): past it the worker is terminated and replaced. */
  wallMs: number;
  /** Jobs sharing this key run one at a time (e.g. "timing"). */
  exclusive?: string;
}

/** The outcome of one job. */
export type PoolOutcome<T = unknown> =
  | { ok: true; value: T }
  | { ok: false; kind: "timeout" | "worker-died" | "error"; error: string };

/** Options of a pool. */
export interface PoolOptions {
  /** Number of worker threads; default: available cores − 1, between 1 and 4. */
  size?: number;
}

interface Pending {
  job: PoolJob;
  resolve: (o: PoolOutcome) => void;
}

interface Slot {
  worker: Worker;
  busy: Pending | null;
  timer: NodeJS.Timeout | null;
  jobId: number;
}

const HERE = import.meta.url;
/** Grace for a worker to load a job's module (first use; TypeScript compilation under tsx) before its watchdog. */
const LOAD_MS = 30_000;
const EXT = HERE.endsWith(".ts") ? ".ts" : ".js";

/**
 * Under tsx (tests, `npm run bench:*`) the worker is a TypeScript file: a tiny bootstrap registers tsx's ESM hooks
 * inside the worker thread, then imports the real entry. (`execArgv: ["--import", "tsx"]` is not honoured for
 * worker threads on Node 20.)
 */
function tsBootstrap(): string {
  // The "import" condition of tsx's "./esm/api" export (createRequire would pick the CommonJS build).
  const tsxApi = join(dirname(createRequire(HERE).resolve("tsx/package.json")), "dist/esm/api/index.mjs");
  const entry = new URL("./worker.ts", HERE).href;
  return `import(${JSON.stringify(pathToFileURL(tsxApi).href)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
}

/** Resolves a module path of this package (relative to src/rewards/sandbox/, without extension) to a file URL. */
export function moduleUrl(relativeNoExt: string, base: string = HERE): string {
  return new URL(relativeNoExt + EXT, base).href;
}

/** A pool of worker threads running reward jobs. */
export class WorkerPool {
  readonly size: number;
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private readonly locks = new Set<string>();
  private nextId = 1;
  private closed = false;

  constructor(opts: PoolOptions = {}) {
    this.size = opts.size ?? Math.max(1, Math.min(4, availableParallelism() - 1));
    if (!(this.size >= 1)) throw new RangeError(`WorkerPool: size must be >= 1, got ${opts.size}`);
    for (let i = 0; i < this.size; i++) this.slots.push(this.spawn());
  }

  /** Runs one job. */
  run<T = unknown>(job: PoolJob): Promise<PoolOutcome<T>> {
    if (this.closed) return Promise.resolve({ ok: false, kind: "error", error: "the worker pool is closed" });
    return new Promise((resolve) => {
      this.queue.push({ job, resolve: resolve as (o: PoolOutcome) => void });
      this.pump();
    });
  }

  /** Runs jobs in parallel; outcomes come back in input order. */
  runAll<T = unknown>(jobs: readonly PoolJob[]): Promise<PoolOutcome<T>[]> {
    return Promise.all(jobs.map((j) => this.run<T>(j)));
  }

  /** Runs one sandboxed program in a worker, with the wall watchdog at 2x its time limit. */
  async runSandbox(req: SandboxRequest): Promise<SandboxResult> {
    const out = await this.run<SandboxResult>({
      module: moduleUrl("./run"),
      fn: "runInSandbox",
      args: req,
      wallMs: 2 * req.timeoutMs + 1000,
    });
    if (out.ok) return out.value;
    return { ok: false, kind: out.kind === "timeout" ? "timeout" : "error", error: out.error };
  }

  /** Runs sandboxed programs in parallel; results in input order. */
  runAllSandboxed(reqs: readonly SandboxRequest[]): Promise<SandboxResult[]> {
    return Promise.all(reqs.map((r) => this.runSandbox(r)));
  }

  /** Terminates every worker; pending jobs fail with an error. */
  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.queue.splice(0)) p.resolve({ ok: false, kind: "error", error: "the worker pool was closed" });
    await Promise.all(
      this.slots.map(async (s) => {
        this.finish(s, { ok: false, kind: "error", error: "the worker pool was closed" });
        await s.worker.terminate();
      }),
    );
  }

  private spawn(): Slot {
    const worker = EXT === ".ts" ? new Worker(tsBootstrap(), { eval: true }) : new Worker(new URL("./worker.js", HERE));
    worker.unref();
    const slot: Slot = { worker, busy: null, timer: null, jobId: 0 };
    worker.on("message", (msg: { id: number; started?: boolean; ok?: boolean; value?: unknown; error?: string }) => {
      if (!slot.busy || msg.id !== slot.jobId) return;
      if (msg.started) {
        if (slot.timer) clearTimeout(slot.timer);
        slot.timer = setTimeout(() => this.kill(slot), slot.busy.job.wallMs);
        return;
      }
      this.finish(slot, msg.ok ? { ok: true, value: msg.value } : { ok: false, kind: "error", error: msg.error ?? "unknown error" });
      this.pump();
    });
    const onDeath = (why: string) => {
      if (this.closed) return;
      const idx = this.slots.indexOf(slot);
      if (idx < 0) return;
      this.finish(slot, { ok: false, kind: "worker-died", error: `the reward worker died: ${why}` });
      this.slots[idx] = this.spawn();
      this.pump();
    };
    worker.on("error", (err) => onDeath(err.message));
    worker.on("exit", (code) => onDeath(`exit code ${code}`));
    return slot;
  }

  private finish(slot: Slot, outcome: PoolOutcome): void {
    const p = slot.busy;
    if (!p) return;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    slot.busy = null;
    if (p.job.exclusive) this.locks.delete(p.job.exclusive);
    slot.worker.unref();
    p.resolve(outcome);
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (slot.busy) continue;
      const idx = this.queue.findIndex((p) => !p.job.exclusive || !this.locks.has(p.job.exclusive));
      if (idx < 0) return;
      const [p] = this.queue.splice(idx, 1) as [Pending];
      if (p.job.exclusive) this.locks.add(p.job.exclusive);
      slot.busy = p;
      slot.jobId = this.nextId++;
      slot.worker.ref();
      // Until the worker reports "started" (module loaded), allow LOAD_MS on top of the job's own limit.
      slot.timer = setTimeout(() => this.kill(slot), p.job.wallMs + LOAD_MS);
      slot.worker.postMessage({ id: slot.jobId, module: p.job.module, fn: p.job.fn, args: p.job.args });
    }
  }

  /** Watchdog: the job overran its wall limit; replace the worker. */
  private kill(slot: Slot): void {
    const idx = this.slots.indexOf(slot);
    const p = slot.busy;
    if (idx < 0 || !p) return;
    slot.worker.removeAllListeners();
    slot.worker.on("error", () => undefined);
    void slot.worker.terminate();
    this.finish(slot, { ok: false, kind: "timeout", error: `wall-clock watchdog: the job ran past ${p.job.wallMs} ms` });
    this.slots[idx] = this.spawn();
    this.pump();
  }
}

let shared: WorkerPool | null = null;
let sharedOptions: PoolOptions = {};

/** Sets the options of the process-wide pool (e.g. its size); takes effect when it is next created. */
export function configureSharedPool(opts: PoolOptions): void {
  sharedOptions = { ...opts };
}

/** The process-wide reward pool, created on first use (size: `configureSharedPool`, else cores − 1, 1..4). */
export function sharedPool(): WorkerPool {
  if (!shared) shared = new WorkerPool(sharedOptions);
  return shared;
}

/** Closes the process-wide pool (tests, CLI shutdown). */
export async function closeSharedPool(): Promise<void> {
  const p = shared;
  shared = null;
  if (p) await p.close();
}
