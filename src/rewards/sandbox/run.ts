/**
 * `runInSandbox`: runs one piece of model-written JavaScript in a fresh V8 isolate (isolated-vm) inside a reward
 * worker process, with a time and heap limit, and returns its JSON-copied result (rewards spec §12).
 *
 * `runInIsolate` is the part that runs inside the worker process (and inside other worker jobs, such as the solver
 * check). It tells the pool each phase's deadline, so a program that V8 cannot interrupt is killed with its process
 * at `timeoutMs + KILL_GRACE_MS`; `runInSandbox` sends it to the shared pool, so a direct call always returns.
 *
 * The program is the body of a function that receives `input` and `return`s a value; a trusted `prelude` (e.g. the
 * model-building API of the solver reward) runs first in the same context. Each call gets its own isolate, so no
 * state survives between calls. The result crosses the boundary only as a JSON string made inside the isolate, so
 * no object, getter or proxy of the program ever reaches the host. Never `node:vm` (not a security boundary).
 */
import ivm from "isolated-vm";
import { setJobDeadline } from "./deadline.js";
import { sharedPool } from "./pool.js";
import { realmScript, type SandboxAllow } from "./realm.js";

/** One program to run. */
export interface SandboxRequest {
  /** Function body: model-written JavaScript that `return`s the result. */
  code: string;
  /** Trusted source run first in the same context (e.g. a model-building API). */
  prelude?: string;
  /** JSON value handed to the program as `input`. */
  input?: unknown;
  /** Limit on the program's run time (ms): isolated-vm stops it then, or the pool kills its process just after. */
  timeoutMs: number;
  /** Isolate heap limit (MB, at least 8); also the cap on WebAssembly memory when `allow.wasm`. */
  memoryMb: number;
  /** Seed of `Math.random` inside the isolate. */
  seed: number;
  /** Grants (WebAssembly, shared memory); none by default. */
  allow?: SandboxAllow;
  /** Cap on the JSON result (chars); default 1,000,000 (spec §9.3 D-S7). */
  maxOutputChars?: number;
}

/**
 * Why a run failed. `crashed`: the program took its worker process down in a way that is not a known memory abort;
 * `infrastructure`: the pool could not run it at all (not the program's fault; rewards give `null`).
 */
export type SandboxFailure = "timeout" | "memory" | "crashed" | "error" | "invalid-output" | "infrastructure";

/** The outcome of one run. */
export type SandboxResult =
  { ok: true; value: unknown; cpuMs: number } | { ok: false; kind: SandboxFailure; error: string };

const DEFAULT_MAX_OUTPUT = 1_000_000;
/** How long past `timeoutMs` the pool waits for isolated-vm's own timeout before it kills the process. */
export const KILL_GRACE_MS = 100;
/** Deadline for the host-side work after the program (parse the result, dispose the isolate). */
const AFTER_MS = 2000;

/** Wraps the program so it runs as a strict function body and its result leaves as a JSON string. */
function wrapProgram(code: string): string {
  // The input arrives as a JSON string in a global that is deleted before the program starts.
  return `(() => {
    const __inputJson = globalThis.__sandboxInput; delete globalThis.__sandboxInput;
    const __program = function (input) { "use strict";\n${code}\n};
    let __value = __program(__inputJson === undefined ? undefined : JSON.parse(__inputJson));
    if (__value !== null && typeof __value === "object" && typeof __value.then === "function")
      throw new TypeError("the program returned a promise; it must return its result synchronously");
    if (typeof globalThis.__sandboxFinish === "function") __value = globalThis.__sandboxFinish(__value);
    return JSON.stringify(__value === undefined ? null : __value);
  })()`;
}

function classify(err: unknown, isolate: ivm.Isolate): { kind: SandboxFailure; error: string } {
  const message = err instanceof Error ? err.message : String(err);
  if (isolate.isDisposed || /memory limit|out of memory|allocation failed/i.test(message)) {
    return { kind: "memory", error: `memory limit exceeded: ${message}` };
  }
  if (/timed out/i.test(message)) return { kind: "timeout", error: `time limit exceeded: ${message}` };
  return { kind: "error", error: message };
}

/**
 * Runs one program in a fresh isolate in a reward worker process (the shared pool); never throws for anything the
 * program does, and returns by `timeoutMs` plus the kill grace whatever the program does.
 */
export function runInSandbox(req: SandboxRequest): Promise<SandboxResult> {
  validate(req);
  return sharedPool().runSandbox(req);
}

function validate(req: SandboxRequest): void {
  if (!(req.timeoutMs > 0)) throw new RangeError(`runInSandbox: timeoutMs must be > 0, got ${req.timeoutMs}`);
  if (!(req.memoryMb >= 8)) throw new RangeError(`runInSandbox: memoryMb must be >= 8, got ${req.memoryMb}`);
}

/**
 * Runs one program in a fresh isolate in *this* process. Meant for a pool worker process (pool jobs call it):
 * there, the deadlines it sets let the pool kill a program that V8 cannot stop. Called anywhere else, such a
 * program hangs the caller; use `runInSandbox`.
 */
export async function runInIsolate(req: SandboxRequest): Promise<SandboxResult> {
  validate(req);
  const maxOut = req.maxOutputChars ?? DEFAULT_MAX_OUTPUT;
  const isolate = new ivm.Isolate({ memoryLimit: req.memoryMb });
  try {
    const context = await isolate.createContext();
    const realm = realmScript({ seed: req.seed, clock: "fixed", allow: req.allow, wasmMemoryMb: req.memoryMb });
    await context.eval(realm, { timeout: req.timeoutMs });
    if (req.prelude) await context.eval(req.prelude, { timeout: req.timeoutMs });
    if (req.input !== undefined) await context.global.set("__sandboxInput", JSON.stringify(req.input));
    const script = await isolate.compileScript(wrapProgram(req.code));
    const started = isolate.cpuTime;
    // From here the program's own limit holds; the pool kills the process just after it if V8 cannot stop it.
    setJobDeadline(req.timeoutMs + KILL_GRACE_MS);
    const out: unknown = await script.run(context, { timeout: req.timeoutMs }).finally(() => setJobDeadline(AFTER_MS));
    const cpuMs = Number(isolate.cpuTime - started) / 1e6;
    if (cpuMs > req.timeoutMs)
      return { ok: false, kind: "timeout", error: `CPU time ${cpuMs.toFixed(0)} ms > ${req.timeoutMs} ms` };
    if (typeof out !== "string")
      return { ok: false, kind: "invalid-output", error: "the result is not JSON-serialisable" };
    if (out.length > maxOut)
      return { ok: false, kind: "invalid-output", error: `result is ${out.length} chars > cap ${maxOut}` };
    try {
      return { ok: true, value: JSON.parse(out), cpuMs };
    } catch {
      return { ok: false, kind: "invalid-output", error: "the result is not valid JSON" };
    }
  } catch (err) {
    return { ok: false, ...classify(err, isolate) };
  } finally {
    if (!isolate.isDisposed) isolate.dispose();
  }
}

let trustedIsolate: ivm.Isolate | null = null;
let trustedIsolates = 0;

/** How many trusted isolates have been replaced for their heap size (for tests). */
export function trustedIsolatesRecycled(): number {
  return trustedIsolates;
}

/** The trusted isolate's memory limit, and the heap size past which it is replaced before its next context. */
export const TRUSTED_LIMIT_MB = 128;
export const TRUSTED_RECYCLE_MB = 48;

/**
 * Runs trusted code (e.g. a task generator's gold program) synchronously, in a fresh context with the same realm as
 * `runInSandbox`, and returns its JSON-copied value; throws on any failure. The contexts share one long-lived
 * isolate (creating an isolate costs ~20 ms, a context ~1 ms). Blocks the thread: never use it for model-written code.
 *
 * A released context's memory is not reclaimed by the isolate's own collector before isolated-vm's memory limit
 * disposes the isolate: with the optimisation task's prelude the heap grew by about 150 KB per call and the isolate
 * died after about 800 gold programs (bench:seeds sirl's 4,000 training problems never got past generation). So
 * the isolate is replaced once its heap passes `TRUSTED_RECYCLE_MB`.
 */
export function runTrustedSync(req: Omit<SandboxRequest, "maxOutputChars" | "allow" | "memoryMb">): unknown {
  if (trustedIsolate && !trustedIsolate.isDisposed) {
    if (trustedIsolate.getHeapStatisticsSync().used_heap_size > TRUSTED_RECYCLE_MB * 2 ** 20) {
      trustedIsolate.dispose();
      trustedIsolates++;
    }
  }
  if (!trustedIsolate || trustedIsolate.isDisposed) trustedIsolate = new ivm.Isolate({ memoryLimit: TRUSTED_LIMIT_MB });
  const context = trustedIsolate.createContextSync();
  try {
    context.evalSync(realmScript({ seed: req.seed, clock: "fixed" }), { timeout: req.timeoutMs });
    if (req.prelude) context.evalSync(req.prelude, { timeout: req.timeoutMs });
    if (req.input !== undefined) context.global.setSync("__sandboxInput", JSON.stringify(req.input));
    const out: unknown = context.evalSync(wrapProgram(req.code), { timeout: req.timeoutMs });
    if (typeof out !== "string") throw new Error("runTrustedSync: the result is not JSON-serialisable");
    return JSON.parse(out);
  } finally {
    context.release();
  }
}
