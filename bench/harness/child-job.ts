/**
 * Benchmark jobs as child processes: one script run per job (`tsx <script> '<spec as JSON>'`) with one engine thread
 * (`RLVR_THREADS=1`) at a lower priority (`nice`), its result read back from a JSON file the script writes, and a
 * pool that runs a list of such jobs a few at a time. bench/learn.ts has its own copy of the spawn (with its queue
 * that adds jobs as others finish); the seed-system benches (bench/seeds/) and the multi-turn benches
 * (bench/harness/arms.ts) use this one.
 *
 * Resuming (BENCH_JOB_REUSE=1): every finished job leaves a stamp beside its result file, `<result>.stamp.json`,
 * holding the script, the spec and the source hash of the code it ran (src/, native/, recipes/, bench/harness/
 * and the script's folder), with the time and machine. With BENCH_JOB_REUSE=1 a job whose result file and stamp
 * are there and whose stamp matches (script, spec and source, as JSON) is not run again: its stored result is
 * returned. So a bench of many hour-long jobs, stopped part way (a session's end), goes on where it stopped, and
 * any change to the code or the settings reruns what it touches. Without the flag every job runs.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, resolve } from "node:path";
import { sourceHash } from "./source-hash.js";

const ROOT = resolve(import.meta.dirname, "..", "..");

/** What a job's stamp holds; `script`, `spec` and `source` are compared, `madeAt` and `machine` are recorded. */
export interface JobStamp {
  script: string;
  spec: unknown;
  source: string;
  madeAt: string;
  machine: string;
}

/** The source hash a job's stamp records: the library, the engine, the recipes, the harness and the job's folder. */
export function jobSource(script: string): string {
  return sourceHash(ROOT, ["src", "native", "recipes", "bench/harness", dirname(script)]);
}

/** The stored result of a job whose stamp matches (script, spec, source), else null. */
export function reusableResult<T>(script: string, spec: unknown, resultPath: string, source: string): T | null {
  const stampPath = `${resultPath}.stamp.json`;
  if (!existsSync(resultPath) || !existsSync(stampPath)) return null;
  const stamp = JSON.parse(readFileSync(stampPath, "utf8")) as JobStamp;
  const same = JSON.stringify([stamp.script, stamp.spec, stamp.source]) === JSON.stringify([script, spec, source]);
  return same ? (JSON.parse(readFileSync(resultPath, "utf8")) as T) : null;
}

/**
 * Runs `script` (a path under the repository) with `spec` as its JSON argument (and `env` added to the environment);
 * resolves to the parsed result file. With BENCH_JOB_REUSE=1, a stored result whose stamp matches is returned
 * instead (see the file comment).
 */
export async function runChildJob<T>(
  script: string,
  spec: unknown,
  resultPath: string,
  label: string,
  env: Record<string, string> = {},
): Promise<T> {
  const source = jobSource(script);
  if (process.env.BENCH_JOB_REUSE === "1") {
    const stored = reusableResult<T>(script, spec, resultPath, source);
    if (stored !== null) {
      console.error(`${label}: reused ${resultPath} (BENCH_JOB_REUSE=1; same spec and source)`);
      return stored;
    }
  }
  rmSync(`${resultPath}.stamp.json`, { force: true });
  const result = await spawnJob<T>(script, spec, resultPath, label, env);
  const stamp: JobStamp = {
    script,
    spec,
    source,
    madeAt: new Date().toISOString(),
    machine: cpus()[0]?.model ?? "?",
  };
  writeFileSync(`${resultPath}.stamp.json`, JSON.stringify(stamp, null, 1));
  return result;
}

/** One run of the job script in a child process. */
function spawnJob<T>(
  script: string,
  spec: unknown,
  resultPath: string,
  label: string,
  env: Record<string, string>,
): Promise<T> {
  rmSync(resultPath, { force: true });
  const nice = Number(process.env.BENCH_NICE ?? 5);
  const node = [process.execPath, "--import", "tsx", resolve(ROOT, script), JSON.stringify(spec)];
  const [cmd, ...args] = nice > 0 && process.platform !== "win32" ? ["nice", "-n", String(nice), ...node] : node;
  return new Promise((res, rej) => {
    const child = spawn(cmd!, args, {
      cwd: ROOT,
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, ...env, RLVR_THREADS: "1" },
    });
    child.on("error", rej);
    child.on("exit", (code, signal) => {
      if (code !== 0 || !existsSync(resultPath)) rej(new Error(`${label} failed (${signal ?? `exit ${code}`})`));
      else res(JSON.parse(readFileSync(resultPath, "utf8")) as T);
    });
  });
}

/** Runs `jobs` (thunks) at most `parallel` at a time, in order of start; resolves to their results in input order. */
export async function runPool<T>(jobs: (() => Promise<T>)[], parallel: number): Promise<T[]> {
  if (!(parallel >= 1)) throw new Error(`runPool: parallel must be >= 1, got ${parallel}`);
  const out: T[] = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      out[i] = await jobs[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, jobs.length) }, worker));
  return out;
}
