/**
 * js backend: batched matrix product C (+)= op(A) @ op(B).
 *
 * A register-blocked micro-kernel computes 4x4 tiles of C in sixteen local accumulators, reading A and B
 * through strides, so the four transpose combinations share one loop and nothing is materialised. The inner
 * dimension is blocked (KC) so a tile's A rows and B columns stay in cache across the tiles of a panel.
 */
import type { MatmulParams } from "./kernels.js";

const KC = 256; // inner-dimension block

/** C[b] (m, n) (+)= op(A[b]) @ op(B[b]). */
export function matmul(a: Float32Array, b: Float32Array, c: Float32Array, p: MatmulParams): void {
  const { batch, m, n, k, transA, transB, strideA, strideB, accumulate } = p;
  // Element (i, p) of op(A) is a[i * aI + p * aP]; element (p, j) of op(B) is b[p * bP + j * bJ].
  const aI = transA ? 1 : k,
    aP = transA ? m : 1;
  const bP = transB ? 1 : n,
    bJ = transB ? k : 1;
  for (let bi = 0; bi < batch; bi++) {
    const cOff = bi * m * n;
    if (!accumulate) c.fill(0, cOff, cOff + m * n);
    for (let p0 = 0; p0 < k; p0 += KC) {
      const p1 = Math.min(k, p0 + KC);
      tile(a, bi * strideA, aI, aP, b, bi * strideB, bP, bJ, c, cOff, m, n, p0, p1);
    }
  }
}

/** C (m, n) += op(A)[:, p0:p1] @ op(B)[p0:p1, :]. */
function tile(
  a: Float32Array,
  aOff: number,
  aI: number,
  aP: number,
  b: Float32Array,
  bOff: number,
  bP: number,
  bJ: number,
  c: Float32Array,
  cOff: number,
  m: number,
  n: number,
  p0: number,
  p1: number,
): void {
  const m4 = m - (m % 4),
    n4 = n - (n % 4);
  for (let i = 0; i < m4; i += 4) {
    const a0 = aOff + i * aI,
      a1 = a0 + aI,
      a2 = a1 + aI,
      a3 = a2 + aI;
    for (let j = 0; j < n4; j += 4) {
      const b0 = bOff + j * bJ,
        b1 = b0 + bJ,
        b2 = b1 + bJ,
        b3 = b2 + bJ;
      let c00 = 0,
        c01 = 0,
        c02 = 0,
        c03 = 0,
        c10 = 0,
        c11 = 0,
        c12 = 0,
        c13 = 0;
      let c20 = 0,
        c21 = 0,
        c22 = 0,
        c23 = 0,
        c30 = 0,
        c31 = 0,
        c32 = 0,
        c33 = 0;
      for (let q = p0; q < p1; q++) {
        const pa = q * aP,
          pb = q * bP;
        const x0 = a[a0 + pa]!,
          x1 = a[a1 + pa]!,
          x2 = a[a2 + pa]!,
          x3 = a[a3 + pa]!;
        const y0 = b[b0 + pb]!,
          y1 = b[b1 + pb]!,
          y2 = b[b2 + pb]!,
          y3 = b[b3 + pb]!;
        c00 += x0 * y0;
        c01 += x0 * y1;
        c02 += x0 * y2;
        c03 += x0 * y3;
        c10 += x1 * y0;
        c11 += x1 * y1;
        c12 += x1 * y2;
        c13 += x1 * y3;
        c20 += x2 * y0;
        c21 += x2 * y1;
        c22 += x2 * y2;
        c23 += x2 * y3;
        c30 += x3 * y0;
        c31 += x3 * y1;
        c32 += x3 * y2;
        c33 += x3 * y3;
      }
      let o = cOff + i * n + j;
      c[o] = c[o]! + c00;
      c[o + 1] = c[o + 1]! + c01;
      c[o + 2] = c[o + 2]! + c02;
      c[o + 3] = c[o + 3]! + c03;
      o += n;
      c[o] = c[o]! + c10;
      c[o + 1] = c[o + 1]! + c11;
      c[o + 2] = c[o + 2]! + c12;
      c[o + 3] = c[o + 3]! + c13;
      o += n;
      c[o] = c[o]! + c20;
      c[o + 1] = c[o + 1]! + c21;
      c[o + 2] = c[o + 2]! + c22;
      c[o + 3] = c[o + 3]! + c23;
      o += n;
      c[o] = c[o]! + c30;
      c[o + 1] = c[o + 1]! + c31;
      c[o + 2] = c[o + 2]! + c32;
      c[o + 3] = c[o + 3]! + c33;
    }
  }
  // Ragged edges: rows past m4 (all columns) and columns past n4 (the first m4 rows), one dot product each.
  for (let i = 0; i < m; i++) {
    const jStart = i < m4 ? n4 : 0;
    const ai = aOff + i * aI;
    for (let j = jStart; j < n; j++) {
      const bj = bOff + j * bJ;
      let s = 0;
      for (let q = p0; q < p1; q++) s += a[ai + q * aP]! * b[bj + q * bP]!;
      c[cOff + i * n + j]! += s;
    }
  }
}
