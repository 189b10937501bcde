/**
 * Types of the kernel speed reward (rewards spec §10): shapes, timing profiles, the backend interface a device
 * implements (CPU/V8 now, CUDA later), and the evaluation record.
 *
 * The harness (harness.ts) owns the protocol: inputs, canaries, order, clocks' use, gates and statistics. A backend
 * only loads a kernel into a fresh realm on its device, places harness-owned buffers there, makes one timed call
 * with its trusted clock, and reads the buffers back. A CUDA backend would implement the same four operations with
 * device buffers and CUDA events (and the GPU forms of checks 6 and 8 in §10.3).
 */
import type { Significance } from "./significance.js";

/** C (m×n) = A (m×k) · B (k×n), row-major float32. */
export interface MatmulShape {
  m: number;
  n: number;
  k: number;
}

/** Where an operand lives: an index into `PlacedBuffers.buffers` and an element offset into that buffer. */
export interface OperandRef {
  buffer: number;
  offset: number;
}

/** Harness-owned buffers for one call: one to three Float32Arrays holding the operands as views, every operand
 * with random canary elements on both sides (probes.ts draws the layout). */
export interface PlacedBuffers {
  /** The shape of this call (probes use shapes other than the timed one). */
  shape: MatmulShape;
  buffers: Float32Array[];
  a: OperandRef;
  b: OperandRef;
  c: OperandRef;
}

/** What one timed call reported. */
export interface TimedCall {
  /** Wall time of the call measured by the backend's trusted clock (ns), overhead not subtracted. */
  ns: number;
  /** Set when the kernel threw, timed out or ran out of memory. */
  error?: string;
  /** True when the kernel returned a thenable (work escaping the timed region, §10.3 #6). */
  thenable?: boolean;
}

/** A kernel loaded into its own fresh realm on a device. */
export interface LoadedKernel {
  /** Copies the buffers into the realm for the next call (untimed). */
  place(buffers: PlacedBuffers): void;
  /** One synchronous call, timed by trusted code (it includes draining any queued microtasks). */
  timedCall(limitMs: number): TimedCall;
  /** An empty call through the same path, to estimate the timing overhead (ns). */
  timedNoop(): number;
  /** Copies the whole buffers (canaries included) back out after the call (untimed), in `place` order. */
  readBack(): Float32Array[];
  /** Frees the realm. */
  dispose(): void;
}

/** A device that can load and time kernels. */
export interface KernelBackend {
  /** Backend name, e.g. "v8-isolate". */
  readonly name: string;
  /** Machine facts recorded with results (speedups hold only for that machine, §10.2 #7). */
  describe(): Record<string, string>;
  /** Loads `source` (defining `matmul(A, B, C, m, n, k)`) into a fresh realm; throws with a message on failure.
   * `seed` seeds the realm's Math.random. */
  load(source: string, opts: { seed: number; allowWasm: boolean; memoryMb: number }): LoadedKernel;
}

/** Timing profile (§10.2 #3). */
export interface TimingProfile {
  /** Warm-up time (ms) with both kernels interleaved. */
  warmupMs: number;
  /** Back-to-back calls of each kernel on one placed input before the timed warm-up, so that both reach optimised
   * JIT code (V8 compiles on a background thread; on a busy machine that takes many calls). */
  warmupCalls: number;
  /** Measured time (ms); iterations continue until it is spent and `minIters` are done. */
  measureMs: number;
  minIters: number;
  maxIters: number;
  /** Iterations of the exact {0,1} probe (§10.3 #1). */
  exactIters: number;
  /** Iterations of the tolerance probe (§10.3 #2). */
  toleranceIters: number;
}

/** Named profiles: `paper` is the paper's 10 s + 30 s; `train` is the spec's 2 s + 5 s; `test` is for unit tests. */
export const PROFILES: Record<"paper" | "train" | "test", TimingProfile> = {
  paper: {
    warmupCalls: 200,
    warmupMs: 10_000,
    measureMs: 30_000,
    minIters: 100,
    maxIters: 1_000_000,
    exactIters: 100,
    toleranceIters: 20,
  },
  train: {
    warmupCalls: 100,
    warmupMs: 2_000,
    measureMs: 5_000,
    minIters: 30,
    maxIters: 100_000,
    exactIters: 20,
    toleranceIters: 10,
  },
  test: {
    warmupCalls: 40,
    warmupMs: 40,
    measureMs: 150,
    minIters: 30,
    maxIters: 400,
    exactIters: 3,
    toleranceIters: 3,
  },
};

/** One anti-cheat or correctness check and its outcome. */
export interface CheckRecord {
  name: string;
  ok: boolean;
  detail?: string;
}

/** The result of evaluating one candidate kernel. */
export interface KernelEvaluation {
  /** All gates passed. */
  correct: boolean;
  /** Aggregate speedup S (baseline time / candidate time), or null when a gate failed first. */
  speedup: number | null;
  /** 95% interval of S (mean of ratios ± 1.96 standard errors). */
  ci95: [number, number] | null;
  /** Every check with its result (§10.3). */
  checks: CheckRecord[];
  /** Timed iterations; the candidate's output was verified after every one of them. */
  iterations: number;
  /** Timed candidate calls verified: two per iteration, one in each candidate isolate. */
  verifiedCalls: number;
  /** The pay rule's verdict (significance.ts); null when a gate failed first. */
  significance: Significance | null;
  /** The evaluation's input seed (fresh per evaluation in the reward; it reproduces inputs, not timings). */
  seed: number;
  /** Median times (ms) and the overhead subtracted (ms). */
  baselineMedianMs: number | null;
  candidateMedianMs: number | null;
  overheadMs: number | null;
  /** Flagged for review and never paid: S above the cap, or a timed candidate call no slower than an empty call. */
  suspicious: boolean;
  /** Why it was flagged. */
  suspiciousReasons: string[];
  /** Set when the evaluation itself failed (baseline broken, backend error): the score is null. */
  infraError?: string;
  /** Machine and backend facts. */
  machine: Record<string, string>;
}
