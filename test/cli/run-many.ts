/**
 * Runs several `rlvr` command lines in one child process, for attack tables: each line goes through the same
 * `main` as bin/rlvr.js, and the runner prints one JSON report per line (exit status, what went to stderr, and the
 * stack of anything that escaped), plus whether `Object.prototype` was changed. Usage: run-many.ts <lines.json>.
 */
import { readFileSync } from "node:fs";
import { main } from "../../src/cli/index.js";

/** One command line's outcome. */
export interface RunReport {
  argv: string[];
  exitCode: number;
  stderr: string;
  stdout: string;
  /** The stack of an error that escaped the CLI's handler (a crash), if any. */
  escaped?: string;
}

const lines = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as string[][];
const reports: RunReport[] = [];
for (const argv of lines) {
  const err: string[] = [];
  const out: string[] = [];
  const [e, l, w] = [console.error, console.log, console.warn];
  console.error = (...a: unknown[]) => void err.push(a.join(" "));
  console.warn = console.error;
  console.log = (...a: unknown[]) => void out.push(a.join(" "));
  process.exitCode = undefined;
  let escaped: string | undefined;
  try {
    await main(["node", "rlvr", ...argv]);
  } catch (x) {
    escaped = x instanceof Error ? (x.stack ?? x.message) : String(x);
  } finally {
    [console.error, console.log, console.warn] = [e, l, w];
  }
  reports.push({
    argv,
    exitCode: Number(process.exitCode ?? 0),
    stderr: err.join("\n"),
    stdout: out.join("\n"),
    ...(escaped ? { escaped } : {}),
  });
}
process.exitCode = 0;
const prototypeKeys = Reflect.ownKeys(Object.prototype).map(String).sort();
process.stdout.write(JSON.stringify({ reports, prototypeKeys }) + "\n");
