/**
 * `rlvr dashboard` and `rlvr train --dashboard` through the real CLI in child processes (from source under tsx):
 * the dashboard prints its URL, serves the folder's runs and exits 0 on SIGTERM; a run started with --dashboard is
 * visible, step by step, at the URL it printed while it trains (the test stops it long before its last step). Bad
 * flags and folders (in process, through the same `main`) are one `rlvr:` line, exit status 1.
 */
import { afterAll, describe, expect, it, vi } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { main } from "../../src/cli/index.js";
import { writeRun } from "./fixture.js";

const ROOT = resolve(__dirname, "..", "..");
const CLI = ["--import", "tsx", join(ROOT, "test/cli/run-cli.ts")];
const dir = mkdtempSync(join(tmpdir(), "rlvr-dash-cli-"));
/** Every child started, killed at the end even when a test timed out before its own cleanup. */
const children = new Set<ChildProcess>();
afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

/** Starts the CLI and resolves with the child and the first URL matching `pattern` in its output. */
function launch(args: string[], pattern: RegExp): Promise<{ child: ChildProcess; url: string; out: () => string }> {
  const child = spawn(process.execPath, [...CLI, ...args], { cwd: ROOT });
  children.add(child);
  let out = "";
  child.stderr!.on("data", (d) => (out += String(d)));
  return new Promise((resolveUrl, reject) => {
    child.stdout!.on("data", (d) => {
      out += String(d);
      const m = pattern.exec(out);
      if (m) resolveUrl({ child, url: m[1]!, out: () => out });
    });
    child.once("exit", (code) => reject(new Error(`exited ${code} before printing a URL:\n${out}`)));
  });
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((r) => (child.exitCode !== null ? r(child.exitCode) : child.once("exit", (code) => r(code))));
}

describe("rlvr dashboard", () => {
  it("serves a folder's runs on loopback and exits 0 on SIGTERM", async () => {
    writeRun(join(dir, "runs"), "one", 2);
    const { child, url } = await launch(["dashboard", join(dir, "runs"), "--port", "0"], /dashboard on (\S+) /);
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const body = (await (await fetch(`${url}/api/runs`)).json()) as { runs: { name: string; lastStep: number }[] };
      expect(body.runs).toEqual([expect.objectContaining({ name: "one", lastStep: 2 })]);
      expect((await fetch(url)).status).toBe(200);
      child.kill("SIGTERM");
      expect(await exited(child)).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
  }, 30_000);

  it("refuses a bad port and a missing folder with one rlvr: line, exit status 1", async () => {
    for (const [args, message] of [
      [["dashboard", dir, "--port", "99999"], 'rlvr: --port must be an integer from 0 to 65535, got "99999"'],
      [["dashboard", dir, "--port", "x"], 'rlvr: --port must be an integer from 0 to 65535, got "x"'],
      [["dashboard", join(dir, "missing")], `rlvr: dashboard: folder ${join(dir, "missing")} does not exist`],
    ] as const) {
      const errors: string[] = [];
      const spy = vi.spyOn(console, "error").mockImplementation((...a: unknown[]) => void errors.push(a.join(" ")));
      try {
        await main(["node", "rlvr", ...args]);
        expect(process.exitCode, args.join(" ")).toBe(1);
        expect(errors, args.join(" ")).toEqual([expect.stringContaining(message)]);
      } finally {
        spy.mockRestore();
        process.exitCode = undefined;
      }
    }
  });
});

describe("rlvr train --dashboard", () => {
  it("prints a URL that shows the run while it trains", async () => {
    const recipe = join(dir, "tiny.yaml");
    writeFileSync(
      recipe,
      `
name: watched
outDir: ${join(dir, "train-runs")}
seed: 1
model: { type: new, dModel: 16, nLayers: 1, nHeads: 2, maxSeqLen: 24 }
task: { name: addition, options: { maxDigits: 1 }, trainExamples: 20, testExamples: 4 }
algorithm: { kl: { beta: 0 } }
train: { steps: 3000, promptsPerStep: 2, groupSize: 2, maxCompletionTokens: 6, lr: 0.003 }
eval: { every: 0, examples: 4 }
checkpoint: { every: 0, keepBest: false }
log: { progress: false }
`,
    );
    const { child, url } = await launch(["train", recipe, "--dashboard"], /dashboard: (\S+)\n/);
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#run=watched$/);
      const base = url.replace(/\/#.*$/, "");
      let steps = 0;
      for (let i = 0; i < 200 && steps < 2; i++) {
        // A time limit per request: a dashboard that shared the training thread would never answer.
        const res = await fetch(`${base}/api/runs/watched/metrics`, { signal: AbortSignal.timeout(5000) });
        if (res.ok) steps = ((await res.json()) as { records: unknown[] }).records.length;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(steps).toBeGreaterThanOrEqual(2);
    } finally {
      child.kill("SIGKILL");
      await exited(child);
    }
  }, 60_000);
});
