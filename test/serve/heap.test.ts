/**
 * The service's heap policy (src/serve/heap.ts): `applyHeapGrowingPercent` set at start-up really changes V8's
 * growing of the old generation. With request-like garbage (batches promoted to the old generation, a working set of
 * about 45 MB), V8's default let the heap peak at 126-130 MB and 10% at 76-80 MB on the development machine; the
 * test asks for a quarter less. Bad values are refused by name.
 */
import { describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { applyHeapGrowingPercent } from "../../src/serve/heap.js";
import { parseServeOptions } from "../../src/serve/options.js";
import { optionsFromFlags } from "../../src/cli/commands/serve-rewards.js";

const ROOT = resolve(__dirname, "..", "..");
const peakMb = async (percent: number) => {
  const child = ["--import", "tsx", join(ROOT, "test/serve/heap-child.ts"), String(percent)];
  const { stdout } = await promisify(execFile)(process.execPath, child, { cwd: ROOT });
  return Number(stdout.trim());
};

describe("the reward service's heap growing percent", () => {
  it("keeps the old generation near the working set, where V8's default lets it double", async () => {
    const [byDefault, tight] = await Promise.all([peakMb(0), peakMb(10)]);
    expect(tight).toBeGreaterThan(40); // the working set itself is kept
    expect(tight).toBeLessThan(0.75 * byDefault);
  }, 60_000);

  it("defaults to 10, takes the flag, and refuses values outside 0..100 naming the field", () => {
    expect(parseServeOptions({}).heapGrowingPercent).toBe(10);
    expect(parseServeOptions(optionsFromFlags({ heapGrowingPercent: "0" })).heapGrowingPercent).toBe(0);
    expect(() => parseServeOptions(optionsFromFlags({ heapGrowingPercent: "101" }))).toThrow(/heapGrowingPercent/);
    expect(() => parseServeOptions(optionsFromFlags({ heapGrowingPercent: "2.5" }))).toThrow(/heapGrowingPercent/);
    expect(() => applyHeapGrowingPercent(-1)).toThrow(/0\.\.100/);
  });
});
