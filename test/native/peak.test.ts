/**
 * The fp32 peak probe (native/peak.cc, `fmaPeakFlop` and `fp32PeakGflops` in src/engine/backends/native.ts): the
 * FLOP it reports is exactly threads × rounds × 16 chains × lanes × 2, on the AVX-512 path and, under
 * RLVR_NO_AVX512=1 (`.ci/run`'s second pass), on the AVX2 path. Its speed is bench:engine's business, not a test's.
 */
import { afterEach, describe, expect, it } from "vitest";
import { fmaPeakFlop, fp32PeakGflops, nativeInfo, setNativeThreads } from "../../src/engine/backends/native.js";
import { native } from "./helpers.js";

describe.skipIf(!native)("fp32 peak probe", () => {
  const threads = nativeInfo()?.threads ?? 1;
  afterEach(() => void setNativeThreads(threads));

  it("counts threads × rounds × 16 chains × lanes × 2 FLOP", () => {
    const lanes = nativeInfo()!.simd === "avx512" ? 16 : 8;
    setNativeThreads(1);
    expect(fmaPeakFlop(10)).toBe(10 * 16 * lanes * 2);
    expect(fmaPeakFlop(0)).toBe(0);
    setNativeThreads(2);
    expect(fmaPeakFlop(3)).toBe(2 * 3 * 16 * lanes * 2);
  });

  it("gives a finite positive rate", () => {
    setNativeThreads(1);
    const gflops = fp32PeakGflops(0.01, 1)!;
    expect(Number.isFinite(gflops)).toBe(true);
    expect(gflops).toBeGreaterThan(0);
  });
});
