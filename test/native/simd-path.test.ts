/**
 * Which GEMM path the native addon runs. `.ci/run` runs the native tests twice, the second time with
 * RLVR_NO_AVX512=1, so the AVX2 micro-kernel is tested on AVX-512 machines too; this pins that the flag really
 * switches the path (and that an AVX-512 CPU without the flag really uses AVX-512).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { nativeInfo } from "../../src/engine/backends/native.js";
import { native } from "./helpers.js";

const cpuHasAvx512f = (): boolean => {
  try {
    return /\bavx512f\b/.test(readFileSync("/proc/cpuinfo", "utf8"));
  } catch {
    return false;
  }
};

describe.skipIf(!native)("native SIMD path", () => {
  it("is AVX2 under RLVR_NO_AVX512=1, else AVX-512 exactly when the CPU has AVX-512F", () => {
    const off = process.env.RLVR_NO_AVX512;
    const disabled = !!off && off !== "0";
    expect(nativeInfo()!.simd).toBe(!disabled && cpuHasAvx512f() ? "avx512" : "avx2");
  });
});
