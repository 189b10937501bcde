/**
 * Kernel-level profiling: runs a function with every kernel of the active backend wrapped in a timer and
 * reports time and calls per kernel (unary/binary ops and matmul transpose cases listed separately). For
 * finding which kernel dominates a training step; the wrapping costs about a microsecond per call.
 */
import { backend, useKernelsWhile } from "./index.js";
import type { Kernels, MatmulParams } from "./kernels.js";

/** Time spent in one kernel (or one op of a kernel family). */
export interface KernelTiming {
  kernel: string;
  calls: number;
  ms: number;
}

function labelOf(name: string, args: unknown[]): string {
  if (name === "unary" || name === "unaryBackward" || name === "binary" || name === "binaryBackward")
    return `${name}:${String(args[0])}`;
  if (name === "matmul") {
    const p = args[3] as MatmulParams;
    return `matmul:${p.transA ? "T" : "N"}${p.transB ? "T" : "N"}`;
  }
  return name;
}

/** Runs `fn` on the active backend with timed kernels; timings are sorted, slowest first. */
export function profileKernels<T>(fn: () => T): { result: T; timings: KernelTiming[] } {
  const inner = backend();
  const stats = new Map<string, KernelTiming>();
  const wrapped: Record<string, unknown> = { name: inner.name };
  for (const [name, f] of Object.entries(inner)) {
    if (typeof f !== "function") continue;
    wrapped[name] = (...args: unknown[]): unknown => {
      const t0 = performance.now();
      const r = (f as (...a: unknown[]) => unknown).apply(inner, args);
      const label = labelOf(name, args);
      let s = stats.get(label);
      if (!s) {
        s = { kernel: label, calls: 0, ms: 0 };
        stats.set(label, s);
      }
      s.calls++;
      s.ms += performance.now() - t0;
      return r;
    };
  }
  const result = useKernelsWhile(wrapped as unknown as Kernels, fn);
  return { result, timings: [...stats.values()].sort((a, b) => b.ms - a.ms) };
}
