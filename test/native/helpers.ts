/**
 * Shared helpers for the native-vs-js kernel tests: the native kernels (or null with a printed reason), seeded
 * random buffers, and a closeness check that reports the first bad index.
 */
import { expect } from "vitest";
import { loadNativeKernels } from "../../src/engine/backends/native.js";
import type { Kernels } from "../../src/engine/backends/kernels.js";
import { Rng } from "../../src/util/rng.js";

/** The native kernels, or null (tests then skip with a message saying why). */
export const native: Kernels | null = loadNativeKernels();
if (!native && process.env.RLVR_REQUIRE_NATIVE === "1") {
  throw new Error("test/native: RLVR_REQUIRE_NATIVE=1 but the native addon did not load (run `npm run build:native`)");
}
if (!native)
  console.warn(
    "test/native: the native addon is not built or not supported here (run `npm run build:native`); skipping native-vs-js tests",
  );

/** A seeded Float32Array of normal samples times `scale`. */
export function randn(rng: Rng, n: number, scale = 1): Float32Array {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = rng.normal() * scale;
  return a;
}

/** Seeded uniform integers in [0, hi). */
export function randInt(rng: Rng, n: number, hi: number): Int32Array {
  const a = new Int32Array(n);
  for (let i = 0; i < n; i++) a[i] = rng.int(hi);
  return a;
}

/** Asserts |a - b| <= atol + rtol * |b| elementwise (NaN must match NaN); names the case and first bad index. */
export function expectClose(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  rtol: number,
  atol: number,
  what: string,
): void {
  expect(actual.length, `${what}: length`).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i]!,
      b = expected[i]!;
    if (Number.isNaN(b) || Number.isNaN(a)) {
      if (Number.isNaN(a) !== Number.isNaN(b)) expect.fail(`${what}: index ${i}: got ${a}, expected ${b}`);
      continue;
    }
    if (a === b) continue;
    if (!(Math.abs(a - b) <= atol + rtol * Math.abs(b)))
      expect.fail(`${what}: index ${i}: got ${a}, expected ${b} (rtol ${rtol}, atol ${atol})`);
  }
}
