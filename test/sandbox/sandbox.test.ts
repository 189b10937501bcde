/**
 * Sandbox properties, one per test (rewards spec §12): each adversarial program is stopped or blocked, the host
 * survives, and the next check in the same pool still works.
 */
import { afterAll, describe, expect, it } from "vitest";
import { WorkerPool } from "../../src/rewards/sandbox/pool.js";
import { FIXED_TIME_MS } from "../../src/rewards/sandbox/realm.js";
import { runInSandbox, type SandboxRequest, type SandboxResult } from "../../src/rewards/sandbox/run.js";

const pool = new WorkerPool({ size: 2 });
afterAll(() => pool.close());

// Limits are wall-clock (isolated-vm); healthy programs get 5 s so a busy shared machine cannot fail them.
const base = { timeoutMs: 5000, memoryMb: 32, seed: 7 };
const req = (code: string, extra: Partial<SandboxRequest> = {}): SandboxRequest => ({ ...base, code, ...extra });

/** Runs `code` in the pool, then checks the same pool still answers a healthy program. */
async function runThenHealthy(code: string, extra: Partial<SandboxRequest> = {}): Promise<SandboxResult> {
  const [bad, good] = await pool.runAllSandboxed([req(code, extra), req("return input.a + 1;", { input: { a: 41 } })]);
  expect(good).toMatchObject({ ok: true, value: 42 });
  const after = await pool.runSandbox(req("return [1, 2].map((x) => x * 2);"));
  expect(after).toMatchObject({ ok: true, value: [2, 4] });
  return bad!;
}

describe("sandbox", () => {
  it("returns the JSON-copied value and the input", async () => {
    const r = await runInSandbox(
      req("return { sum: input.xs.reduce((a, b) => a + b, 0), s: 'x' };", { input: { xs: [1, 2, 3] } }),
    );
    expect(r).toMatchObject({ ok: true, value: { sum: 6, s: "x" } });
  });

  it("stops an infinite loop", async () => {
    const r = await runThenHealthy("while (true) {}", { timeoutMs: 300 });
    expect(r).toMatchObject({ ok: false, kind: "timeout" });
  });

  it("stops a memory bomb", async () => {
    const r = await runThenHealthy("const a = []; while (true) a.push(new Array(1e6).fill(1.5));", { timeoutMs: 5000 });
    expect(r).toMatchObject({ ok: false, kind: "memory" });
  });

  it("stops a deep recursion", async () => {
    const r = await runThenHealthy("const f = (n) => f(n + 1) + 1; return f(0);");
    expect(r).toMatchObject({ ok: false, kind: "error" });
    expect((r as { error: string }).error).toMatch(/call stack/);
  });

  it("has no require", async () => {
    const r = await runThenHealthy("return require('fs').readFileSync('/etc/passwd', 'utf8');");
    expect(r).toMatchObject({ ok: false, kind: "error" });
    expect((r as { error: string }).error).toMatch(/require is not defined/);
  });

  it("has no dynamic import", async () => {
    const r = await runThenHealthy("return import('node:fs');");
    expect(r.ok).toBe(false);
  });

  it("has no process", async () => {
    const r = await runThenHealthy("return process.env;");
    expect(r).toMatchObject({ ok: false, kind: "error" });
    expect((r as { error: string }).error).toMatch(/process is not defined/);
  });

  it("has no fetch, timers or workers", async () => {
    const r = await runThenHealthy(
      "return [typeof fetch, typeof setTimeout, typeof Worker, typeof XMLHttpRequest, typeof WebSocket, typeof queueMicrotask === 'function' ? 'q' : 'none'];",
    );
    expect(r).toMatchObject({
      ok: true,
      value: ["undefined", "undefined", "undefined", "undefined", "undefined", "none"],
    });
  });

  it("has no file access through any global", async () => {
    const r = await runThenHealthy(
      "const names = Object.getOwnPropertyNames(globalThis); return names.filter((n) => /^(fs|Buffer)$|file|process|require|module|fetch|performance|SharedArrayBuffer|Atomics|WebAssembly/i.test(n));",
    );
    expect(r).toMatchObject({ ok: true, value: [] });
  });

  it("keeps prototype pollution inside the isolate", async () => {
    const r = await runThenHealthy(
      "Object.prototype.polluted = 'yes'; Array.prototype.map = () => 'hacked'; JSON.parse = () => 'hacked'; return ({}).polluted;",
    );
    expect(r).toMatchObject({ ok: true, value: "yes" });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect([1].map((x) => x + 1)).toEqual([2]);
    expect(JSON.parse("1")).toBe(1);
  });

  it("fixes Date and seeds Math.random", async () => {
    const code = "return [Date.now(), new Date().getTime(), Math.random(), Math.random()];";
    const a = await runInSandbox(req(code));
    const b = await runInSandbox(req(code));
    const c = await runInSandbox(req(code, { seed: 8 }));
    expect(a.ok && (a.value as number[])[0]).toBe(FIXED_TIME_MS);
    expect(a.ok && (a.value as number[])[1]).toBe(FIXED_TIME_MS);
    expect(a).toEqual(expect.objectContaining({ value: (b as { value: unknown }).value }));
    expect((a as { value: number[] }).value[2]).not.toBe((c as { value: number[] }).value[2]);
  });

  it("rejects an oversized result", async () => {
    const r = await runInSandbox(req("return 'x'.repeat(2000);", { maxOutputChars: 1000 }));
    expect(r).toMatchObject({ ok: false, kind: "invalid-output" });
  });

  it("reports a worker killed by the wall watchdog and replaces it", async () => {
    const small = new WorkerPool({ size: 1 });
    try {
      const [stuck, next] = await small.runAll([
        { module: new URL("./fixtures/block.ts", import.meta.url).href, fn: "blockFor", args: 5000, wallMs: 300 },
        { module: new URL("./fixtures/block.ts", import.meta.url).href, fn: "blockFor", args: 1, wallMs: 3000 },
      ]);
      expect(stuck).toMatchObject({ ok: false, kind: "timeout" });
      expect(next).toMatchObject({ ok: true, value: "done" });
    } finally {
      await small.close();
    }
  });

  it("reports a worker process that dies during its job as crashed and replaces it", async () => {
    const small = new WorkerPool({ size: 1 });
    try {
      const [dead, next] = await small.runAll([
        { module: new URL("./fixtures/block.ts", import.meta.url).href, fn: "die", args: null, wallMs: 3000 },
        { module: new URL("./fixtures/block.ts", import.meta.url).href, fn: "blockFor", args: 1, wallMs: 3000 },
      ]);
      expect(dead).toMatchObject({ ok: false, kind: "crashed" });
      expect(small.stats.crashed).toBe(1);
      expect(next).toMatchObject({ ok: true, value: "done" });
    } finally {
      await small.close();
    }
  });
});
