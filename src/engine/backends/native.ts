/**
 * The native backend: loads the C++ addon (native/, built by node-gyp into build/Release/rlvr_native.node) and
 * adapts its positional functions to the `Kernels` interface. The kernel object starts as a copy of the js
 * kernels and every kernel the addon implements overrides its js twin, so a kernel added to the interface
 * later keeps working (in TypeScript) until it gets a native version.
 *
 * Loading returns null, never throws, when the addon is not built, the CPU lacks AVX2/FMA, or the platform is
 * not x86-64; backends/index.ts then warns once and uses js.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { jsKernels } from "./js.js";
import type { AttentionParams, BinaryOp, Kernels, MatmulParams, UnaryOp } from "./kernels.js";

/** The addon's exported functions (positional arguments; see native/addon.cc). */
interface Addon {
  cpuSupported(): boolean;
  threads(n?: number): number;
  simd(): "avx512" | "avx2";
  matmul(
    a: Float32Array,
    b: Float32Array,
    c: Float32Array,
    batch: number,
    m: number,
    n: number,
    k: number,
    transA: boolean,
    transB: boolean,
    strideA: number,
    strideB: number,
    accumulate: boolean,
  ): void;
  unary(op: number, x: Float32Array, out: Float32Array): void;
  unaryBackward(op: number, x: Float32Array, y: Float32Array, dy: Float32Array, dx: Float32Array): void;
  powScalar(x: Float32Array, p: number, out: Float32Array): void;
  affine(x: Float32Array, s: number, t: number, out: Float32Array): void;
  axpy(alpha: number, x: Float32Array, y: Float32Array): void;
  binary(op: number, a: Float32Array, b: Float32Array, out: Float32Array, meta: Int32Array): void;
  binaryBackward(
    op: number,
    a: Float32Array,
    b: Float32Array,
    dy: Float32Array,
    da: Float32Array | null,
    db: Float32Array | null,
    meta: Int32Array,
  ): void;
  where(cond: Float32Array, a: Float32Array, b: Float32Array, out: Float32Array, meta: Int32Array): void;
  stridedCopy(
    x: Float32Array,
    xOffset: number,
    out: Float32Array,
    outOffset: number,
    accumulate: boolean,
    meta: Int32Array,
  ): void;
  sumRows(x: Float32Array, out: Float32Array, rows: number, cols: number): void;
  maxRows(x: Float32Array, out: Float32Array, argmax: Int32Array, rows: number, cols: number): void;
  softmax(x: Float32Array, out: Float32Array, rows: number, cols: number): void;
  softmaxBackward(y: Float32Array, dy: Float32Array, dx: Float32Array, rows: number, cols: number): void;
  logSoftmax(x: Float32Array, out: Float32Array, rows: number, cols: number): void;
  logSoftmaxBackward(y: Float32Array, dy: Float32Array, dx: Float32Array, rows: number, cols: number): void;
  crossEntropy(
    logits: Float32Array,
    targets: Int32Array,
    loss: Float32Array,
    lse: Float32Array,
    rows: number,
    cols: number,
    ignoreIndex: number,
  ): void;
  crossEntropyBackward(
    logits: Float32Array,
    targets: Int32Array,
    lse: Float32Array,
    dloss: Float32Array,
    dlogits: Float32Array,
    rows: number,
    cols: number,
    ignoreIndex: number,
  ): void;
  layerNorm(
    x: Float32Array,
    w: Float32Array,
    b: Float32Array | null,
    out: Float32Array,
    mean: Float32Array,
    rstd: Float32Array,
    rows: number,
    cols: number,
    eps: number,
  ): void;
  layerNormBackward(
    x: Float32Array,
    w: Float32Array,
    mean: Float32Array,
    rstd: Float32Array,
    dy: Float32Array,
    dx: Float32Array,
    dw: Float32Array,
    db: Float32Array | null,
    rows: number,
    cols: number,
  ): void;
  rmsNorm(
    x: Float32Array,
    w: Float32Array,
    out: Float32Array,
    rstd: Float32Array,
    rows: number,
    cols: number,
    eps: number,
  ): void;
  rmsNormBackward(
    x: Float32Array,
    w: Float32Array,
    rstd: Float32Array,
    dy: Float32Array,
    dx: Float32Array,
    dw: Float32Array,
    rows: number,
    cols: number,
  ): void;
  rope(
    x: Float32Array,
    out: Float32Array,
    batchHeads: number,
    t: number,
    headDim: number,
    posOffset: number,
    theta: number,
    inverse: boolean,
  ): void;
  attention(
    q: Float32Array,
    k: Float32Array,
    v: Float32Array,
    out: Float32Array,
    probs: Float32Array,
    mask: Float32Array | null,
    batch: number,
    heads: number,
    kvHeads: number,
    tq: number,
    tk: number,
    headDim: number,
    scale: number,
    causal: boolean,
  ): void;
  attentionBackward(
    q: Float32Array,
    k: Float32Array,
    v: Float32Array,
    probs: Float32Array,
    dout: Float32Array,
    dq: Float32Array,
    dk: Float32Array,
    dv: Float32Array,
    batch: number,
    heads: number,
    kvHeads: number,
    tq: number,
    tk: number,
    headDim: number,
    scale: number,
    causal: boolean,
  ): void;
  gather(table: Float32Array, ids: Int32Array, out: Float32Array, dim: number): void;
  scatterAdd(dout: Float32Array, ids: Int32Array, dtable: Float32Array, dim: number): void;
  adamw(
    param: Float32Array,
    grad: Float32Array,
    m: Float32Array,
    v: Float32Array,
    lr: number,
    beta1: number,
    beta2: number,
    eps: number,
    weightDecay: number,
    step: number,
  ): void;
  sumSquares(x: Float32Array): number;
  fmaPeak(iters: number): number;
}

const UNARY: Record<UnaryOp, number> = {
  neg: 0,
  exp: 1,
  log: 2,
  sqrt: 3,
  rsqrt: 4,
  tanh: 5,
  gelu: 6,
  silu: 7,
  relu: 8,
  abs: 9,
  sigmoid: 10,
};
const BINARY: Record<BinaryOp, number> = { add: 0, sub: 1, mul: 2, div: 3, maximum: 4, minimum: 5 };
const MAX_RANK = 16;
const ADDON_FILE = join("build", "Release", "rlvr_native.node");

// One reusable block [rank, shape, strides...] for the strided kernels (kernels are synchronous).
const meta = new Int32Array(1 + MAX_RANK * 5);

function packMeta(shape: readonly number[], strides: readonly (readonly number[])[]): Int32Array {
  const r = shape.length;
  meta[0] = r;
  for (let d = 0; d < r; d++) meta[1 + d] = shape[d]!;
  for (let o = 0; o < strides.length; o++) {
    const s = strides[o]!,
      base = 1 + r * (1 + o);
    for (let d = 0; d < r; d++) meta[base + d] = s[d]!;
  }
  return meta;
}

/** Path of the built addon: build/Release under the package root (found by walking up from this file). */
export function nativeAddonPath(): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const p = join(dir, ADDON_FILE);
    if (existsSync(p)) return p;
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return null;
}

// /proc/cpuinfo check before the addon (compiled with -mavx2 -mfma) is even loaded; true where unreadable.
function cpuinfoAllows(): boolean {
  try {
    const flags =
      readFileSync("/proc/cpuinfo", "utf8")
        .match(/^flags\s*:(.*)$/m)?.[1]
        ?.split(/\s+/) ?? null;
    return flags === null || (flags.includes("avx2") && flags.includes("fma"));
  } catch {
    return true;
  }
}

/** The native kernels, or null when the addon is missing or this CPU/platform cannot run it. */
export function loadNativeKernels(): Kernels | null {
  if (process.arch !== "x64") return null;
  const path = nativeAddonPath();
  if (path === null || !cpuinfoAllows()) return null;
  const addon = createRequire(import.meta.url)(path) as Addon;
  if (!addon.cpuSupported()) return null;
  return nativeKernelsFrom(addon);
}

/** The loaded addon, or null when it is not built or this CPU/platform cannot run it. */
function usableAddon(): Addon | null {
  const path = nativeAddonPath();
  if (path === null || process.arch !== "x64" || !cpuinfoAllows()) return null;
  return createRequire(import.meta.url)(path) as Addon;
}

/** What the addon runs with: the GEMM instruction set and the thread count; null when it is not built. */
export function nativeInfo(): { simd: "avx512" | "avx2"; threads: number } | null {
  const addon = usableAddon();
  return addon && { simd: addon.simd(), threads: addon.threads() };
}

/**
 * Runs `iters` rounds of independent FMA chains on every native pool thread (native/peak.cc) and returns the FLOP
 * done: threads × iters × 16 chains × 16 lanes (AVX-512; 8 with AVX2) × 2. Null when the addon is not built.
 */
export function fmaPeakFlop(iters: number): number | null {
  return usableAddon()?.fmaPeak(iters) ?? null;
}

/**
 * The fp32 peak of this machine as the native kernels see it (GFLOP/s over every pool thread): the best of `tries`
 * timed `fmaPeak` runs, each lasting at least `minSeconds`. The loop touches no memory, so it is bound by the
 * FMA units alone: the ceiling a training step's FLOP rate is quoted against (bench:engine
 * `machine.fp32_peak_gflops`). Null when the addon is not built.
 */
export function fp32PeakGflops(minSeconds = 0.2, tries = 3): number | null {
  const addon = usableAddon(); // resolved once: finding and checking it is not part of what is timed
  if (addon === null) return null;
  let iters = 1 << 16;
  let best = 0;
  for (let done = 0; done < tries;) {
    const t = performance.now();
    const flop = addon.fmaPeak(iters);
    const seconds = (performance.now() - t) / 1000;
    if (seconds < minSeconds) {
      iters = Math.ceil(iters * Math.min(64, (1.2 * minSeconds) / Math.max(seconds, 1e-6)));
      continue;
    }
    best = Math.max(best, flop / seconds / 1e9);
    done++;
  }
  return best;
}

/** Sets the native thread count (default: all cores, or RLVR_THREADS); returns the count now in effect. */
export function setNativeThreads(n?: number): number | null {
  const path = nativeAddonPath();
  if (path === null) return null;
  return (createRequire(import.meta.url)(path) as Addon).threads(n);
}

function nativeKernelsFrom(A: Addon): Kernels {
  return {
    ...jsKernels,
    name: "native",
    matmul: (a: Float32Array, b: Float32Array, c: Float32Array, p: MatmulParams) =>
      A.matmul(a, b, c, p.batch, p.m, p.n, p.k, p.transA, p.transB, p.strideA, p.strideB, p.accumulate),
    unary: (op, x, out) => A.unary(UNARY[op], x, out),
    unaryBackward: (op, x, y, dy, dx) => A.unaryBackward(UNARY[op], x, y, dy, dx),
    powScalar: (x, p, out) => A.powScalar(x, p, out),
    affine: (x, s, t, out) => A.affine(x, s, t, out),
    axpy: (alpha, x, y) => A.axpy(alpha, x, y),
    binary: (op, a, sa, b, sb, out, shape) =>
      shape.length > MAX_RANK
        ? jsKernels.binary(op, a, sa, b, sb, out, shape)
        : A.binary(BINARY[op], a, b, out, packMeta(shape, [sa, sb])),
    binaryBackward: (op, a, sa, b, sb, dy, da, db, shape) =>
      shape.length > MAX_RANK
        ? jsKernels.binaryBackward(op, a, sa, b, sb, dy, da, db, shape)
        : A.binaryBackward(BINARY[op], a, b, dy, da, db, packMeta(shape, [sa, sb])),
    where: (cond, sc, a, sa, b, sb, out, shape) =>
      shape.length > MAX_RANK
        ? jsKernels.where(cond, sc, a, sa, b, sb, out, shape)
        : A.where(cond, a, b, out, packMeta(shape, [sc, sa, sb])),
    stridedCopy: (x, xOffset, xStrides, out, outOffset, outStrides, shape, accumulate) =>
      shape.length > MAX_RANK
        ? jsKernels.stridedCopy(x, xOffset, xStrides, out, outOffset, outStrides, shape, accumulate)
        : A.stridedCopy(x, xOffset, out, outOffset, accumulate, packMeta(shape, [xStrides, outStrides])),
    sumRows: (x, out, rows, cols) => A.sumRows(x, out, rows, cols),
    maxRows: (x, out, argmax, rows, cols) => A.maxRows(x, out, argmax, rows, cols),
    softmax: (x, out, rows, cols) => A.softmax(x, out, rows, cols),
    softmaxBackward: (y, dy, dx, rows, cols) => A.softmaxBackward(y, dy, dx, rows, cols),
    logSoftmax: (x, out, rows, cols) => A.logSoftmax(x, out, rows, cols),
    logSoftmaxBackward: (y, dy, dx, rows, cols) => A.logSoftmaxBackward(y, dy, dx, rows, cols),
    crossEntropy: (logits, targets, loss, lse, rows, cols, ignoreIndex) =>
      A.crossEntropy(logits, targets, loss, lse, rows, cols, ignoreIndex),
    crossEntropyBackward: (logits, targets, lse, dloss, dlogits, rows, cols, ignoreIndex) =>
      A.crossEntropyBackward(logits, targets, lse, dloss, dlogits, rows, cols, ignoreIndex),
    layerNorm: (x, w, b, out, mean, rstd, rows, cols, eps) => A.layerNorm(x, w, b, out, mean, rstd, rows, cols, eps),
    layerNormBackward: (x, w, mean, rstd, dy, dx, dw, db, rows, cols) =>
      A.layerNormBackward(x, w, mean, rstd, dy, dx, dw, db, rows, cols),
    rmsNorm: (x, w, out, rstd, rows, cols, eps) => A.rmsNorm(x, w, out, rstd, rows, cols, eps),
    rmsNormBackward: (x, w, rstd, dy, dx, dw, rows, cols) => A.rmsNormBackward(x, w, rstd, dy, dx, dw, rows, cols),
    rope: (x, out, batchHeads, t, headDim, posOffset, theta, inverse) =>
      A.rope(x, out, batchHeads, t, headDim, posOffset, theta, inverse),
    attention: (q, k, v, out, probs, mask, p: AttentionParams) =>
      A.attention(q, k, v, out, probs, mask, p.batch, p.heads, p.kvHeads, p.tq, p.tk, p.headDim, p.scale, p.causal),
    attentionBackward: (q, k, v, probs, dout, dq, dk, dv, p: AttentionParams) =>
      A.attentionBackward(
        q,
        k,
        v,
        probs,
        dout,
        dq,
        dk,
        dv,
        p.batch,
        p.heads,
        p.kvHeads,
        p.tq,
        p.tk,
        p.headDim,
        p.scale,
        p.causal,
      ),
    gather: (table, ids, out, dim) => A.gather(table, ids, out, dim),
    scatterAdd: (dout, ids, dtable, dim) => A.scatterAdd(dout, ids, dtable, dim),
    adamw: (param, grad, m, v, lr, beta1, beta2, eps, weightDecay, step) =>
      A.adamw(param, grad, m, v, lr, beta1, beta2, eps, weightDecay, step),
    sumSquares: (x) => A.sumSquares(x),
  };
}
