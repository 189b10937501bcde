/**
 * The service process's heap policy (docs/reward-service.md "Memory"). A score request's items, parsed body and
 * results live as long as the request (tens to hundreds of milliseconds), long enough to survive two scavenges and be
 * promoted to V8's old generation. V8's default policy then grows the old-generation limit by up to 2× per major GC and
 * defers the next one, so a busy server's RSS climbs for 100,000+ items as a sawtooth before a mark-compact takes it
 * back (bench:serve's soak; no leak). A small heap growing factor makes V8 collect the old generation sooner, so the
 * RSS plateaus after warm-up at the working set, at a few per cent of throughput.
 *
 * `--heap-growing-percent` is V8's own flag; V8 reads it whenever it sizes the next old-generation limit, so setting it
 * at start-up (before the service allocates) has the same effect as passing it to node (tested in
 * test/serve/heap.test.ts). It is process-wide, so only the `rlvr serve-rewards` command sets it, never
 * `startRewardServer`, which may run inside a caller's process.
 */
import { setFlagsFromString } from "node:v8";

/** Applies `--heap-growing-percent=<percent>` to this process's V8; 0 leaves V8's default policy. */
export function applyHeapGrowingPercent(percent: number): void {
  if (!Number.isInteger(percent) || percent < 0 || percent > 100)
    throw new RangeError(`heap growing percent: ${percent} is not an integer in 0..100`);
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}
