/**
 * Benchmark jobs as child processes: one script run per job (`tsx <script> '<spec as JSON>'`) with one engine thread
 * (`RLVR_THREADS=1`) at a lower priority (`nice`), its result read back from a JSON file the script writes, and a
 * pool that runs a list of such jobs a few at a time. bench/learn.ts has its own copy of the spawn (with its queue
 * that adds jobs as others finish); the seed-system benches (bench/seeds/) use this one.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..", "..");

/** Runs `script` (a path under the repository) with `spec` as its JSON argument (and `env` added to the environment); resolves to the parsed result file. */
export function runChildJob<T>(
  script: string,
  spec: unknown,
  resultPath: string,
  label: string,
  env: Record<string, string> = {},
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
