/**
 * A pool of worker *processes* that runs reward jobs (sandboxed programs, solver checks, kernel timings) in parallel
 * and off the training loop's thread (rewards spec §12; DESIGN.md "Scale-out"; docs/sandbox.md "Process model").
 *
 * - `runAll(jobs)` returns one outcome per job in input order; a failing job never affects its neighbours.
 * - Each job has a deadline: its `wallMs` from the moment the worker has loaded its module, re-armed by the job
 *   itself through `setJobDeadline` (deadline.ts) phase by phase. Past it the process is killed (SIGKILL), so
 *   nothing it ran keeps a core busy, and the job is reported as `timeout`.
 * - A process whose resident memory passes `rssLimitMb` is killed and its job reported as `memory` (a backstop for
 *   memory that no isolate heap limit sees).
 * - A process that dies while running a job (V8's out-of-memory abort, say) has its job reported as `crashed`: the
 *   job's input caused it, so rewards give the completion the spec's failure score (`jobFault`). A process that dies
 *   before it has loaded the job is an infrastructure failure, `worker-died`. Either way a fresh one is forked.
 * - Jobs with the same `exclusive` key never run at the same time (the kernel timing lock, spec §10.2 #7).
 * - Idle workers are `unref`ed, so an open pool never keeps the process alive.
 */
import { availableParallelism } from "node:os";
import { setInterval } from "node:timers";
import type { SandboxRequest, SandboxResult } from "./run.js";
import { forkWorker, residentMb, SOURCE_EXT, type WorkerProcess } from "./worker-process.js";

/** One job: call the exported `fn` of `module` with `args` inside a worker process. */
export interface PoolJob {
  /** File URL of an ES module of this package (use `moduleUrl`). */
  module: string;
  /** Name of the exported (possibly async) function. */
  fn: string;
  /** Argument; anything the structured clone algorithm copies. */
  args: unknown;
  /** Deadline (ms) from the moment the module is loaded, until the job re-arms it with `setJobDeadline`. */
  wallMs: number;
  /** Jobs sharing this key run one at a time (e.g. "timing"). */
  exclusive?: string;
}

/** Why a job failed: its own fault (`timeout`, `memory`, `crashed`: see `jobFault`) or not (`worker-died`, `error`). */
export type PoolFailureKind = "timeout" | "memory" | "crashed" | "worker-died" | "error";

/** The outcome of one job. */
export type PoolOutcome<T = unknown> = { ok: true; value: T } | { ok: false; kind: PoolFailureKind; error: string };

/** True when a failed job failed through its own input (overran, out of memory, crashed its process). */
export function jobFault(out: PoolOutcome): boolean {
  return !out.ok && (out.kind === "timeout" || out.kind === "memory" || out.kind === "crashed");
}

/** Options of a pool. */
export interface PoolOptions {
  /** Number of worker processes; default: available cores − 1, between 1 and 4. */
  size?: number;
  /** Resident-memory cap of a worker process (MB), checked every 100 ms while it runs a job; default 2048. */
  rssLimitMb?: number;
}

/** Counters of what happened to this pool's workers (every crash is counted, never silent). */
export interface PoolStats {
  spawned: number;
  timeouts: number;
  overMemory: number;
  crashed: number;
  workerDied: number;
}

interface Pending {
  job: PoolJob;
  resolve: (o: PoolOutcome) => void;
}

interface Slot {
  proc: WorkerProcess | null;
  busy: Pending | null;
  started: boolean;
  jobId: number;
  timer: NodeJS.Timeout | null;
  rssTimer: NodeJS.Timeout | null;
}

type WorkerMessage =
  | { hello: true }
  | { id: number; started: true }
  | { id: number; deadlineMs: number }
  | {
      id: number;
      ok: boolean;
      value?: unknown;
      error?: string;
    };

/** Grace for a fresh process to start and load a job's module (TypeScript compilation under tsx). */
const LOAD_MS = 30_000;
const RSS_POLL_MS = 100;
/** Set-up budget of a sandboxed program before its own limit starts (isolate, realm, prelude, compile). */
export const SANDBOX_SETUP_MS = 5000;

/** Resolves a module path of this package (relative to src/rewards/sandbox/, without extension) to a file URL. */
export function moduleUrl(relativeNoExt: string, base: string = import.meta.url): string {
  return new URL(relativeNoExt + SOURCE_EXT, base).href;
}

/** What a crashed worker's stderr (V8's fatal-error report) says, in one line, for the job's error. */
function crashLine(stderr: string): string {
  // V8's heap-limit abort prints "CALL_AND_RETRY_LAST" and "is_heap_oom = 1" rather than a sentence.
  const oom = /is_heap_oom = 1|CALL_AND_RETRY_LAST|heap out of memory|Reached heap limit/i;
  if (oom.test(stderr)) return "V8 ran out of memory";
  const lines = stderr.split("\n").map((l) => l.replace(/^#\s*/, "").trim());
  const fatal = /fatal|out of memory|invalid (array|table|size)|abort/i;
  return lines.find((l) => fatal.test(l)) ?? lines.find((l) => l) ?? "";
}

/** A pool of worker processes running reward jobs. */
export class WorkerPool {
  readonly size: number;
  readonly rssLimitMb: number;
  readonly stats: PoolStats = { spawned: 0, timeouts: 0, overMemory: 0, crashed: 0, workerDied: 0 };
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private readonly locks = new Set<string>();
  /** Every process not yet reaped (including killed ones on their way out), with its exit. */
  private readonly live = new Map<WorkerProcess, Promise<void>>();
  private nextId = 1;
  private closed = false;

  constructor(opts: PoolOptions = {}) {
    this.size = opts.size ?? Math.max(1, Math.min(4, availableParallelism() - 1));
    if (!(Number.isInteger(this.size) && this.size >= 1)) {
      throw new RangeError(`WorkerPool: size must be an integer >= 1, got ${opts.size}`);
    }
    this.rssLimitMb = opts.rssLimitMb ?? 2048;
    if (!(this.rssLimitMb > 0)) throw new RangeError(`WorkerPool: rssLimitMb must be > 0, got ${opts.rssLimitMb}`);
    for (let i = 0; i < this.size; i++) {
      const slot: Slot = { proc: null, busy: null, started: false, jobId: 0, timer: null, rssTimer: null };
      this.slots.push(slot);
      this.spawn(slot);
    }
  }

  /** Jobs waiting for a free worker. */
  get queued(): number {
    return this.queue.length;
  }

  /** Runs one job. */
  run<T = unknown>(job: PoolJob): Promise<PoolOutcome<T>> {
    if (this.closed) return Promise.resolve({ ok: false, kind: "error", error: "the worker pool is closed" });
    if (!(job.wallMs > 0)) {
      return Promise.resolve({ ok: false, kind: "error", error: `job wallMs must be > 0, got ${job.wallMs}` });
    }
    return new Promise((resolve) => {
      this.queue.push({ job, resolve: resolve as (o: PoolOutcome) => void });
      this.pump();
    });
  }

  /** Runs jobs in parallel; outcomes come back in input order. */
  runAll<T = unknown>(jobs: readonly PoolJob[]): Promise<PoolOutcome<T>[]> {
    return Promise.all(jobs.map((j) => this.run<T>(j)));
  }

  /**
   * Runs one sandboxed program in a worker process. The process is killed at the program's own `timeoutMs` (plus a
   * small grace, run.ts `KILL_GRACE_MS`) if isolated-vm's timeout cannot stop it.
   */
  async runSandbox(req: SandboxRequest): Promise<SandboxResult> {
    const job = { module: moduleUrl("./run"), fn: "runInIsolate", args: req, wallMs: SANDBOX_SETUP_MS };
    const out = await this.run<SandboxResult>(job);
    if (out.ok) return out.value;
    if (out.kind === "timeout" || out.kind === "memory") return { ok: false, kind: out.kind, error: out.error };
    if (out.kind === "crashed") {
      const oom = /out of memory|heap limit|allocation failed|invalid (array|table|size)/i.test(out.error);
      return { ok: false, kind: oom ? "memory" : "crashed", error: out.error };
    }
    return { ok: false, kind: "infrastructure", error: out.error };
  }

  /** Runs sandboxed programs in parallel; results in input order. */
  runAllSandboxed(reqs: readonly SandboxRequest[]): Promise<SandboxResult[]> {
    return Promise.all(reqs.map((r) => this.runSandbox(r)));
  }

  /** Pids of this pool's processes that have not yet been reaped (for liveness checks). */
  pids(): number[] {
    return [...this.live.keys()].map((p) => p.pid);
  }

  /** Kills every worker and waits until each has exited; pending jobs fail with an error. */
  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.queue.splice(0)) p.resolve({ ok: false, kind: "error", error: "the worker pool was closed" });
    for (const s of this.slots) this.finish(s, { ok: false, kind: "error", error: "the worker pool was closed" });
    for (const p of this.live.keys()) {
      p.child.ref(); // workers are unref'ed; without this an idle caller could exit before they are reaped
      p.child.kill("SIGKILL");
    }
    await Promise.all(this.live.values());
  }

  private spawn(slot: Slot): void {
    let markExited: () => void = () => undefined;
    const exited = new Promise<void>((res) => (markExited = res));
    const proc = forkWorker((why) => {
      this.live.delete(proc);
      markExited();
      this.onExit(slot, proc, why);
    });
    this.live.set(proc, exited);
    this.stats.spawned++;
    slot.proc = proc;
    proc.child.on("message", (msg: WorkerMessage) => this.onMessage(slot, proc, msg));
  }

  private onMessage(slot: Slot, proc: WorkerProcess, msg: WorkerMessage): void {
    if (slot.proc !== proc || "hello" in msg || !slot.busy || msg.id !== slot.jobId) return;
    if ("started" in msg) {
      slot.started = true;
      this.arm(slot, slot.busy.job.wallMs);
    } else if ("deadlineMs" in msg) {
      this.arm(slot, msg.deadlineMs);
    } else {
      const error = msg.error ?? "unknown error";
      this.finish(slot, msg.ok ? { ok: true, value: msg.value } : { ok: false, kind: "error", error });
      this.pump();
    }
  }

  private onExit(slot: Slot, proc: WorkerProcess, why: string): void {
    if (slot.proc !== proc) return; // already replaced after a kill
    slot.proc = null;
    if (this.closed) return;
    if (slot.busy) {
      const detail = crashLine(proc.stderrTail());
      const tail = detail ? `: ${detail}` : "";
      if (slot.started) {
        this.stats.crashed++;
        this.finish(slot, { ok: false, kind: "crashed", error: `the job crashed its worker process (${why})${tail}` });
      } else {
        this.stats.workerDied++;
        const error = `the reward worker died before the job started (${why})${tail}`;
        this.finish(slot, { ok: false, kind: "worker-died", error });
      }
      this.spawn(slot);
    }
    // An idle worker that died (a failed start) is forked again only when a job needs it, so a broken install
    // cannot fork in a loop.
    this.pump();
  }

  /** (Re-)arms the job's deadline to `ms` from now. */
  private arm(slot: Slot, ms: number): void {
    if (slot.timer) clearTimeout(slot.timer);
    const id = slot.jobId;
    slot.timer = setTimeout(() => {
      if (slot.jobId !== id || !slot.busy) return;
      if (slot.started) {
        this.stats.timeouts++;
        this.kill(slot, "timeout", `the job ran past its deadline of ${ms} ms; its worker process was killed`);
      } else {
        this.stats.workerDied++;
        this.kill(slot, "worker-died", `the reward worker did not load the job's module within ${ms} ms`);
      }
    }, ms);
  }

  private finish(slot: Slot, outcome: PoolOutcome): void {
    const p = slot.busy;
    if (!p) return;
    if (slot.timer) clearTimeout(slot.timer);
    if (slot.rssTimer) clearInterval(slot.rssTimer);
    slot.timer = slot.rssTimer = null;
    slot.busy = null;
    slot.started = false;
    if (p.job.exclusive) this.locks.delete(p.job.exclusive);
    p.resolve(outcome);
  }

  private pump(): void {
    if (this.closed) return;
    for (const slot of this.slots) {
      if (slot.busy) continue;
      const idx = this.queue.findIndex((p) => !p.job.exclusive || !this.locks.has(p.job.exclusive));
      if (idx < 0) return;
      if (!slot.proc) this.spawn(slot);
      const [p] = this.queue.splice(idx, 1) as [Pending];
      if (p.job.exclusive) this.locks.add(p.job.exclusive);
      slot.busy = p;
      slot.started = false;
      slot.jobId = this.nextId++;
      // Until the worker reports "started" (process up, module loaded), allow LOAD_MS on top of the job's limit.
      this.arm(slot, p.job.wallMs + LOAD_MS);
      this.watchMemory(slot);
      try {
        slot.proc!.child.send({ id: slot.jobId, module: p.job.module, fn: p.job.fn, args: p.job.args });
      } catch (err) {
        // Arguments the structured clone cannot copy (a function, say): the caller's error, reported as such.
        this.finish(slot, { ok: false, kind: "error", error: `the job could not be sent: ${(err as Error).message}` });
        queueMicrotask(() => this.pump()); // the slot is free again
      }
    }
  }

  /** Polls the busy worker's resident memory; past `rssLimitMb` it is killed and the job reported as `memory`. */
  private watchMemory(slot: Slot): void {
    const id = slot.jobId;
    slot.rssTimer = setInterval(() => {
      const pid = slot.proc?.pid;
      const mb = pid === undefined || slot.jobId !== id ? null : residentMb(pid);
      if (mb === null || mb <= this.rssLimitMb) return;
      this.stats.overMemory++;
      const error = `the worker process used ${mb.toFixed(0)} MB > its limit of ${this.rssLimitMb} MB; it was killed`;
      this.kill(slot, "memory", error);
    }, RSS_POLL_MS);
    slot.rssTimer.unref();
  }

  /** Kills the busy worker (SIGKILL: nothing it runs survives), reports its job and forks a replacement. */
  private kill(slot: Slot, kind: PoolFailureKind, error: string): void {
    const proc = slot.proc;
    slot.proc = null;
    proc?.child.kill("SIGKILL");
    this.finish(slot, { ok: false, kind, error });
    if (!this.closed) this.spawn(slot);
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

/** The process-wide pool's counters and queue length, or null when it was never started (this never starts it). */
export function sharedPoolStats(): (PoolStats & { queued: number; size: number }) | null {
  return shared ? { ...shared.stats, queued: shared.queued, size: shared.size } : null;
}

/** Closes the process-wide pool (tests, CLI shutdown). */
export async function closeSharedPool(): Promise<void> {
  const p = shared;
  shared = null;
  if (p) await p.close();
}
