/**
 * Programs that V8 cannot interrupt (docs/sandbox.md "Limits"): built-ins that walk a 2^32−1-element array, and an
 * error whose `message` or `stack` getter loops while the host reads it. isolated-vm's timeout never fires for them;
 * the pool kills the worker process at the documented limit (`timeoutMs` + `KILL_GRACE_MS`), a direct
 * `runInSandbox` call returns, the thread that spun is gone with its process, and the calling process lives on.
 */
import { afterAll, describe, expect, it } from "vitest";
import { closeSharedPool, sharedPool } from "../../src/rewards/sandbox/pool.js";
import { KILL_GRACE_MS, runInSandbox } from "../../src/rewards/sandbox/run.js";
import { expectGone, expectNoLeak, req } from "./helpers.js";

afterAll(() => closeSharedPool());

const LIMIT_MS = 200;
const HUGE = "const a = new Array(2 ** 32 - 1);";
/** An error whose `prop` getter never returns: the host reads it after the program has thrown. */
const loopingGetter = (prop: string) =>
  `const e = new Error('x'); Object.defineProperty(e, '${prop}', { get() { for (;;) {} } }); throw e;`;
const ATTACKS: [string, string][] = [
  ["indexOf", `${HUGE} return a.indexOf(1);`],
  ["lastIndexOf", `${HUGE} return a.lastIndexOf(1);`],
  ["reverse", `${HUGE} return a.reverse().length;`],
  ["copyWithin", `${HUGE} return a.copyWithin(0, 1).length;`],
  ["sort", `${HUGE} return a.sort().length;`],
  ["a looping message getter", loopingGetter("message")],
  ["a looping stack getter", loopingGetter("stack")],
];

describe("programs that ignore the time limit", () => {
  it.each(ATTACKS)("%s: runInSandbox returns a timeout at the documented limit", async (_name, code) => {
    const seen = sharedPool().pids();
    const [bad, good] = await Promise.all([
      runInSandbox(req(code, { timeoutMs: LIMIT_MS })),
      runInSandbox(req("return 6 * 7;")),
    ]);
    expect(good).toMatchObject({ ok: true, value: 42 });
    expect(bad).toMatchObject({ ok: false, kind: "timeout" });
    // The kill came from the deadline the program phase armed: its own limit, not a multiple of it.
    expect((bad as { error: string }).error).toContain(`deadline of ${LIMIT_MS + KILL_GRACE_MS} ms`);
    seen.push(...sharedPool().pids());
    await expectNoLeak(sharedPool(), seen);
  });

  it("leaves no worker process behind once the pool is closed", async () => {
    const pids = sharedPool().pids();
    expect(pids.length).toBeGreaterThan(0);
    await closeSharedPool();
    await expectGone(pids);
  });
});
