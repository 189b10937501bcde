/**
 * The `js` backend: every kernel in pure TypeScript. Always available, and the reference the native backend is
 * tested against. Kernels are grouped by kind in js-elementwise.ts, js-matmul.ts and js-nn.ts; this file adds
 * the reductions and the optimiser kernels and assembles the `Kernels` object.
 */
import type { Kernels } from "./kernels.js";
import {
  affine,
  axpy,
  binary,
  binaryBackward,
  powScalar,
  stridedCopy,
  unary,
  unaryBackward,
  where,
} from "./js-elementwise.js";
import { matmul } from "./js-matmul.js";
import {
  attention,
  attentionBackward,
  crossEntropy,
  crossEntropyBackward,
  gather,
  layerNorm,
  layerNormBackward,
  logSoftmax,
  logSoftmaxBackward,
  rmsNorm,
  rmsNormBackward,
  rope,
  scatterAdd,
  softmax,
  softmaxBackward,
} from "./js-nn.js";

/** out[r] = sum_c x[r, c]. */
function sumRows(x: Float32Array, out: Float32Array, rows: number, cols: number): void {
  for (let r = 0; r < rows; r++) {
    const o = r * cols;
    let s = 0;
    for (let c = 0; c < cols; c++) s += x[o + c]!;
    out[r] = s;
  }
}

/** out[r] = max_c x[r, c]; argmax[r] = first c attaining it (NaN propagates). */
function maxRows(x: Float32Array, out: Float32Array, argmax: Int32Array, rows: number, cols: number): void {
  for (let r = 0; r < rows; r++) {
    const o = r * cols;
    let best = x[o]!,
      arg = 0;
    for (let c = 1; c < cols; c++) {
      const v = x[o + c]!;
      if (v > best || (v !== v && best === best)) {
        best = v;
        arg = c;
      }
    }
    out[r] = best;
    argmax[r] = arg;
  }
}

/** One bias-corrected AdamW step in place with decoupled weight decay. */
function adamw(
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
): void {
  const bc1 = 1 - Math.pow(beta1, step);
  const bc2 = 1 - Math.pow(beta2, step);
  const n = param.length;
  for (let i = 0; i < n; i++) {
    const g = grad[i]!;
    const mi = beta1 * m[i]! + (1 - beta1) * g;
    const vi = beta2 * v[i]! + (1 - beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    const p = param[i]!;
    param[i] = p - lr * (mi / bc1 / (Math.sqrt(vi / bc2) + eps) + weightDecay * p);
  }
}

/** Sum of squares in float64. */
function sumSquares(x: Float32Array): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i]! * x[i]!;
  return s;
}

/** The pure-TypeScript kernel set. */
export const jsKernels: Kernels = {
  name: "js",
  matmul,
  unary,
  unaryBackward,
  powScalar,
  binary,
  binaryBackward,
  where,
  stridedCopy,
  affine,
  axpy,
  sumRows,
  maxRows,
  softmax,
  softmaxBackward,
  logSoftmax,
  logSoftmaxBackward,
  crossEntropy,
  crossEntropyBackward,
  layerNorm,
  layerNormBackward,
  rmsNorm,
  rmsNormBackward,
  rope,
  attention,
  attentionBackward,
  gather,
  scatterAdd,
  adamw,
  sumSquares,
};
