/**
 * js backend: batched matrix product C (+)= op(A) @ op(B), cache-blocked and loop-ordered for V8.
 *
 * Two inner shapes do all the work: NN (C row += a * B row, streaming B rows within a block that fits L2) and
 * NT (dot products of A rows with B rows, four at a time). A transposed A is first copied into scratch, which
 * costs O(mk) against the O(mnk) product.
 */
import type { MatmulParams } from "./kernels.js";

const KC = 128; // rows of B per block (NN)
const NC = 512; // columns of B per block (NN)
const JB = 64; // rows of B per block (NT)

let scratch = new Float32Array(0);

/** C[b] (m, n) (+)= op(A[b]) @ op(B[b]). */
export function matmul(a: Float32Array, b: Float32Array, c: Float32Array, p: MatmulParams): void {
  const { batch, m, n, k, transA, transB, strideA, strideB, accumulate } = p;
  for (let bi = 0; bi < batch; bi++) {
    const cOff = bi * m * n;
    if (!accumulate) c.fill(0, cOff, cOff + m * n);
    let aMat = a, aOff = bi * strideA;
    if (transA) {
      // A stored (k, m): copy its transpose into scratch as (m, k).
      if (scratch.length < m * k) scratch = new Float32Array(m * k);
      for (let pp = 0; pp < k; pp++) {
        const row = aOff + pp * m;
        for (let i = 0; i < m; i++) scratch[i * k + pp] = a[row + i]!;
      }
      aMat = scratch;
      aOff = 0;
    }
    if (transB) matmulNT(aMat, aOff, b, bi * strideB, c, cOff, m, n, k);
    else matmulNN(aMat, aOff, b, bi * strideB, c, cOff, m, n, k);
  }
}

/** C (m, n) += A (m, k) @ B (k, n). */
function matmulNN(a: Float32Array, aOff: number, b: Float32Array, bOff: number, c: Float32Array, cOff: number, m: number, n: number, k: number): void {
  for (let j0 = 0; j0 < n; j0 += NC) {
    const j1 = Math.min(n, j0 + NC);
    for (let p0 = 0; p0 < k; p0 += KC) {
      const p1 = Math.min(k, p0 + KC);
      for (let i = 0; i < m; i++) {
        const cRow = cOff + i * n;
        const aRow = aOff + i * k;
        let p = p0;
        // Four rows of B per pass: one read-modify-write of the C row instead of four.
        for (; p + 3 < p1; p += 4) {
          const a0 = a[aRow + p]!, a1 = a[aRow + p + 1]!, a2 = a[aRow + p + 2]!, a3 = a[aRow + p + 3]!;
          const b0 = bOff + p * n, b1 = b0 + n, b2 = b1 + n, b3 = b2 + n;
          for (let j = j0; j < j1; j++) {
            c[cRow + j] = c[cRow + j]! + a0 * b[b0 + j]! + a1 * b[b1 + j]! + a2 * b[b2 + j]! + a3 * b[b3 + j]!;
          }
        }
        for (; p < p1; p++) {
          const av = a[aRow + p]!;
          if (av === 0) continue;
          const bRow = bOff + p * n;
          for (let j = j0; j < j1; j++) c[cRow + j] = c[cRow + j]! + av * b[bRow + j]!;
        }
      }
    }
  }
}

/** C (m, n) += A (m, k) @ B^T with B stored (n, k). */
function matmulNT(a: Float32Array, aOff: number, b: Float32Array, bOff: number, c: Float32Array, cOff: number, m: number, n: number, k: number): void {
  for (let j0 = 0; j0 < n; j0 += JB) {
    const j1 = Math.min(n, j0 + JB);
    for (let i = 0; i < m; i++) {
      const aRow = aOff + i * k;
      const cRow = cOff + i * n;
      let j = j0;
      for (; j + 3 < j1; j += 4) {
        const r0 = bOff + j * k, r1 = r0 + k, r2 = r1 + k, r3 = r2 + k;
        let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (let p = 0; p < k; p++) {
          const av = a[aRow + p]!;
          s0 += av * b[r0 + p]!;
          s1 += av * b[r1 + p]!;
          s2 += av * b[r2 + p]!;
          s3 += av * b[r3 + p]!;
        }
        c[cRow + j] = c[cRow + j]! + s0;
        c[cRow + j + 1] = c[cRow + j + 1]! + s1;
        c[cRow + j + 2] = c[cRow + j + 2]! + s2;
        c[cRow + j + 3] = c[cRow + j + 3]! + s3;
      }
      for (; j < j1; j++) {
        const r = bOff + j * k;
        let s = 0;
        for (let p = 0; p < k; p++) s += a[aRow + p]! * b[r + p]!;
        c[cRow + j] = c[cRow + j]! + s;
      }
    }
  }
}
