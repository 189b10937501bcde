/**
 * The process boundary (docs/sandbox.md "Process model"): a program that makes V8 abort kills only its worker
 * process; the batch goes on, every other result arrives, the crash is counted and reported as the program's
 * failure, and no process is left behind. Also the RSS backstop and the pool's bookkeeping of dead workers.
 */
import { afterAll, describe, expect, it } from "vitest";
import { jobFault, WorkerPool } from "../../src/rewards/sandbox/pool.js";
import { expectGone, expectNoLeak, req } from "./helpers.js";

const pool = new WorkerPool({ size: 3 });
afterAll(() => pool.close());

// Each grows a structure until the isolate's heap is full. With a 16 MB heap, V8 aborts the process (SIGABRT) on
// several of these ("CALL_AND_RETRY_LAST"), as it did the whole trainer when workers were threads; isolated-vm
// catches the others as `memory`. Either way only the program fails.
const CRASHERS = [
  "const m = new Map(); for (let i = 0;; i++) m.set(i, i);",
  "const s = new Set(); for (let i = 0;; i++) s.add(i);",
  "return new Array(1e8).fill(0).length;",
  "return Array.from({ length: 1e8 }, () => 0).length;",
  "const o = {}; for (let i = 0;; i++) o['k' + i] = i;",
];

describe("worker processes", () => {
  it("a program that aborts V8 kills only its worker: every other result of the batch arrives", async () => {
    const seen = pool.pids();
    const healthy = CRASHERS.map((_, i) => req("return input.i * 2;", { input: { i } }));
    const crashing = CRASHERS.map((code) => req(code, { memoryMb: 16 }));
    // Interleaved: healthy programs queue behind, next to and after the crashing ones.
    const batch = crashing.flatMap((c, i) => [c, healthy[i]!]);
    const out = await pool.runAllSandboxed(batch);
    seen.push(...pool.pids());
    for (let i = 0; i < CRASHERS.length; i++) {
      expect(out[2 * i + 1]).toMatchObject({ ok: true, value: i * 2 });
      const bad = out[2 * i]!;
      expect(bad.ok).toBe(false);
      if (!bad.ok) expect(["memory", "crashed", "timeout"]).toContain(bad.kind);
    }
    // At least one of them really took its process down, and the pool counted it.
    expect(pool.stats.crashed).toBeGreaterThanOrEqual(1);
    expect(out.some((r) => !r.ok && /crashed its worker process/.test(r.error))).toBe(true);
    // The pool is whole again and answers.
    expect(await pool.runSandbox(req("return 'still here';"))).toMatchObject({ ok: true, value: "still here" });
    expect(pool.pids()).toHaveLength(3);
    await expectNoLeak(pool, seen);
  });

  it("a worker that dies while loading a job reports worker-died (not the job's fault) and is replaced", async () => {
    const small = new WorkerPool({ size: 1 });
    const fixture = (name: string) => new URL(`./fixtures/${name}.ts`, import.meta.url).href;
    try {
      const [lost, next] = await small.runAll([
        { module: fixture("exit-on-load"), fn: "never", args: null, wallMs: 5000 },
        { module: fixture("block"), fn: "blockFor", args: 1, wallMs: 30_000 },
      ]);
      expect(lost).toMatchObject({ ok: false, kind: "worker-died" });
      expect(jobFault(lost!)).toBe(false);
      expect(next).toMatchObject({ ok: true, value: "done" });
      expect(small.stats).toMatchObject({ workerDied: 1, crashed: 0 });
    } finally {
      await small.close();
    }
  });

  it("reports a crash as the job's fault, and a worker lost before its job started as infrastructure", () => {
    expect(jobFault({ ok: false, kind: "crashed", error: "" })).toBe(true);
    expect(jobFault({ ok: false, kind: "timeout", error: "" })).toBe(true);
    expect(jobFault({ ok: false, kind: "memory", error: "" })).toBe(true);
    expect(jobFault({ ok: false, kind: "worker-died", error: "" })).toBe(false);
    expect(jobFault({ ok: false, kind: "error", error: "" })).toBe(false);
    expect(jobFault({ ok: true, value: 1 })).toBe(false);
  });

  it("kills a worker whose resident memory passes the pool's RSS limit", async () => {
    const small = new WorkerPool({ size: 1, rssLimitMb: 400 });
    const fixture = new URL("./fixtures/block.ts", import.meta.url).href;
    try {
      const seen = small.pids();
      const [fat, next] = await small.runAll([
        { module: fixture, fn: "hog", args: { mb: 600, ms: 20_000 }, wallMs: 30_000 },
        { module: fixture, fn: "blockFor", args: 1, wallMs: 30_000 },
      ]);
      expect(fat).toMatchObject({ ok: false, kind: "memory" });
      expect((fat as { error: string }).error).toMatch(/limit of 400 MB/);
      expect(next).toMatchObject({ ok: true, value: "done" });
      expect(small.stats.overMemory).toBe(1);
      await expectNoLeak(small, [...seen, ...small.pids()]);
    } finally {
      await small.close();
    }
  });

  it("close() kills every worker process and waits for each", async () => {
    const p = new WorkerPool({ size: 2 });
    const fixture = new URL("./fixtures/block.ts", import.meta.url).href;
    const busy = p.run({ module: fixture, fn: "blockFor", args: 60_000, wallMs: 90_000 });
    const pids = p.pids();
    expect(pids).toHaveLength(2);
    await p.close();
    expect(await busy).toMatchObject({ ok: false, kind: "error" });
    await expectGone(pids);
    expect(await p.run({ module: "", fn: "", args: null, wallMs: 1 })).toMatchObject({ ok: false, kind: "error" });
  });

  it("rejects bad options and a job without a positive deadline", async () => {
    expect(() => new WorkerPool({ size: 0 })).toThrow(/size/);
    expect(() => new WorkerPool({ size: 1.5 })).toThrow(/size/);
    expect(() => new WorkerPool({ size: 1, rssLimitMb: 0 })).toThrow(/rssLimitMb/);
    expect(await pool.run({ module: "", fn: "", args: null, wallMs: 0 })).toMatchObject({ ok: false, kind: "error" });
    const uncloneable = { module: "", fn: "", args: { f: () => 1 }, wallMs: 1000 };
    expect(await pool.run(uncloneable)).toMatchObject({ ok: false, kind: "error", error: /could not be sent/ });
    expect(await pool.runSandbox(req("return 1;"))).toMatchObject({ ok: true, value: 1 });
  });
});
