/** Shared helpers of the sandbox tests: request builders and process-liveness checks. */
import { expect } from "vitest";
import type { WorkerPool } from "../../src/rewards/sandbox/pool.js";
import type { SandboxRequest } from "../../src/rewards/sandbox/run.js";
import { pidAlive } from "../../src/rewards/sandbox/worker-process.js";

/** A request with test defaults: 5 s for programs that must finish (a loaded machine must not fail them). */
export const req = (code: string, extra: Partial<SandboxRequest> = {}): SandboxRequest => ({
  timeoutMs: 5000,
  memoryMb: 32,
  seed: 7,
  code,
  ...extra,
});

/** Waits (bounded by a count of polls, not a time) until every pid in `pids` is gone; fails if one remains. */
export async function expectGone(pids: readonly number[]): Promise<void> {
  for (let i = 0; i < 200 && pids.some(pidAlive); i++) await new Promise((r) => setTimeout(r, 25));
  expect(pids.filter(pidAlive)).toEqual([]);
}

/** Every pid `pool` ever showed in `seen` that it no longer lists has been reaped. */
export async function expectNoLeak(pool: WorkerPool, seen: readonly number[]): Promise<void> {
  const current = new Set(pool.pids());
  await expectGone(seen.filter((p) => !current.has(p)));
}
