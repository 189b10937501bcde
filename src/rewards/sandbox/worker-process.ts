/**
 * Forks one reward pool worker process (worker.ts) and watches it: the pool's only way to start, measure and kill a
 * worker. A process, not a thread, because V8 aborts the whole process on some out-of-memory paths
 * (`new Array(1e8).fill(0)` under a small heap limit) and cannot interrupt some built-ins; a thread would take the
 * trainer down with it or spin for ever. isolated-vm's documentation recommends the same process boundary.
 *
 * - Under tsx (tests, `npm run bench:*`) the worker is TypeScript and is forked with `--import <tsx loader>`, given
 *   as a file URL so it resolves wherever the caller's working directory is. From `dist/` it is plain `worker.js`.
 * - The child gets `TZ=UTC`, so the fixed clock of the realm reads the same local time on every machine.
 * - Its stderr is kept (the last 4 KB) to explain a crash; nothing of it reaches the trainer's terminal.
 * - Everything is `unref`ed: an idle worker never keeps the parent alive (the pool's job timers do while busy).
 */
import { fork, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = import.meta.url;
/** ".ts" when this package runs from its TypeScript sources (under tsx), ".js" from `dist/`. */
export const SOURCE_EXT = HERE.endsWith(".ts") ? ".ts" : ".js";
const STDERR_TAIL = 4096;

/** A forked worker and what the pool needs to know about it. */
export interface WorkerProcess {
  child: ChildProcess;
  pid: number;
  /** The last few KB of the child's stderr (V8's fatal-error report lands here). */
  stderrTail(): string;
}

function execArgv(): string[] {
  if (SOURCE_EXT !== ".ts") return [];
  const loader = join(dirname(createRequire(HERE).resolve("tsx/package.json")), "dist/loader.mjs");
  return ["--import", pathToFileURL(loader).href];
}

/** Forks a worker process; `onExit` runs once when it has exited (for any reason), been reaped and its stderr read. */
export function forkWorker(onExit: (why: string) => void): WorkerProcess {
  const child = fork(fileURLToPath(new URL(`./worker${SOURCE_EXT}`, HERE)), [], {
    execArgv: execArgv(),
    env: { ...process.env, TZ: "UTC" },
    serialization: "advanced",
    stdio: ["ignore", "ignore", "pipe", "ipc"],
  });
  let tail = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (s: string) => {
    tail = (tail + s).slice(-STDERR_TAIL);
  });
  let exited = false;
  const done = (why: string) => {
    if (exited) return;
    exited = true;
    onExit(why);
  };
  // "close", not "exit": it comes after stderr has been read to its end, so the crash report is complete.
  child.on("close", (code, signal) => done(signal ? `signal ${signal}` : `exit code ${code}`));
  child.on("error", (err) => {
    // A failed fork never emits "exit"; a failed kill or send does not end the process, so only a missing pid counts.
    if (child.pid === undefined) done(`could not start: ${err.message}`);
  });
  child.unref();
  child.channel?.unref();
  (child.stderr as { unref?: () => void } | null)?.unref?.();
  return { child, pid: child.pid ?? -1, stderrTail: () => tail };
}

/** Resident set size of a live process in MB (Linux `/proc`); null where it cannot be read. */
export function residentMb(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** True while a process with this pid exists (signal 0 probes without sending anything). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
