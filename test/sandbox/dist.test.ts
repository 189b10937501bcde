/**
 * The sandbox runs from compiled JavaScript as it does under tsx: `npm run build` output forks `worker.js` with plain
 * `node` (no TypeScript loader). The test transpiles src/rewards/sandbox/ to a temporary folder, as tsc does for
 * dist/, and runs a healthy program and an uninterruptible one from a plain `node` process.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../../src/rewards/sandbox/", import.meta.url));
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "rlvr-sandbox-dist-"));
afterAll(() => {
  if (!process.env.KEEP) rmSync(dir, { recursive: true, force: true });
});

const SCRIPT = `import { WorkerPool } from "./pool.js";
const pool = new WorkerPool({ size: 1 });
const base = { memoryMb: 32, seed: 1 };
const ok = await pool.runSandbox({ ...base, code: "return [Date.now(), 6 * 7];", timeoutMs: 5000 });
const stuck = await pool.runSandbox({ ...base, code: "return new Array(2 ** 32 - 1).indexOf(1);", timeoutMs: 200 });
const after = await pool.runSandbox({ ...base, code: "return 'after';", timeoutMs: 5000 });
const pids = pool.pids();
await pool.close();
console.log(JSON.stringify({ ok, stuck, after, pids }));`;

describe("the sandbox from compiled JavaScript", () => {
  it("forks worker.js with plain node, runs a program and kills an uninterruptible one", async () => {
    for (const f of readdirSync(SRC).filter((n) => n.endsWith(".ts"))) {
      const out = ts.transpileModule(readFileSync(join(SRC, f), "utf8"), {
        compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
        fileName: f,
      });
      writeFileSync(join(dir, f.replace(/\.ts$/, ".js")), out.outputText);
    }
    writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
    symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
    writeFileSync(join(dir, "main.js"), SCRIPT);
    const run = promisify(execFile);
    const { stdout } = await run(process.execPath, [join(dir, "main.js")], { cwd: dir, timeout: 60_000 });
    const r = JSON.parse(stdout) as { ok: unknown; stuck: unknown; after: unknown; pids: number[] };
    expect(r.ok).toMatchObject({ ok: true, value: [1_704_067_200_000, 42] });
    expect(r.stuck).toMatchObject({ ok: false, kind: "timeout" });
    expect(r.after).toMatchObject({ ok: true, value: "after" });
    expect(r.pids).toHaveLength(1);
  });
});
