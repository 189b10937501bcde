/**
 * Reference kernels, as source text in the kernel language (`function matmul(A, B, C, m, n, k)` over row-major
 * Float32Array views). `naive` is the baseline every candidate is timed against and the task's gold kernel;
 * `BLOCKED_MATMUL` is an honest faster kernel (1×4 register blocking), used by the tests, the benchmark and the docs
 * to show that speed is rewarded.
 */

/** The naive triple loop (i, j, p), accumulating in a JS number (float64). */
export const NAIVE_MATMUL = `function matmul(A, B, C, m, n, k) {
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let p = 0; p < k; p++) s += A[i * k + p] * B[p * n + j];
      C[i * n + j] = s;
    }
  }
}`;

/**
 * Register-blocked kernel: four output columns at a time in four scalar accumulators, so each A element is loaded
 * once per 4 products and B is read in short contiguous runs (measured 1.2–9× faster than naive at 128³ in V8).
 */
export const BLOCKED_MATMUL = `function matmul(A, B, C, m, n, k) {
  for (let i = 0; i < m; i++) {
    const ai = i * k;
    const ci = i * n;
    let j = 0;
    for (; j + 3 < n; j += 4) {
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (let p = 0; p < k; p++) {
        const x = A[ai + p];
        const bp = p * n + j;
        s0 += x * B[bp];
        s1 += x * B[bp + 1];
        s2 += x * B[bp + 2];
        s3 += x * B[bp + 3];
      }
      C[ci + j] = s0;
      C[ci + j + 1] = s1;
      C[ci + j + 2] = s2;
      C[ci + j + 3] = s3;
    }
    for (; j < n; j++) {
      let s = 0;
      for (let p = 0; p < k; p++) s += A[ai + p] * B[p * n + j];
      C[ci + j] = s;
    }
  }
}`;

/** Baseline kernels by id (the example's `baseline` field). */
export const BASELINES: Record<string, string> = { naive: NAIVE_MATMUL };
