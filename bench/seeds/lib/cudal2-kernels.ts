/**
 * The kernels the CUDA-L2 bench's SFT start is taught (bench/seeds/cudal2.ts). The task's own gold is the naive
 * kernel only, which teaches the format and no speed; a char-level model of ~1M parameters cannot invent a faster
 * loop nest, so at our scale RL can only move probability between kernels the start already writes. The start is
 * therefore trained on a mixture: the naive kernel (the largest share), honest faster kernels (loop order i-k-j with a
 * float64 row accumulator; 1×4 register blocking) and some broken ones (no write of C; a wrong index), so that the
 * start's mean speed-up is near 1 and its gate-pass rate below 1. Every kernel is written compactly (no
 * indentation) to keep completions short for a char-level model; the correct ones pass every gate of the kernel
 * reward (test/bench/seeds-cudal2.test.ts).
 *
 * Departure from CUDA-L2: the paper's policy writes new CUDA kernels; ours chooses among taught JS kernels.
 */

/** One taught kernel: its name, source, whether it is meant to pass the gates, and its share of the SFT mixture. */
export interface TaughtKernel {
  name: string;
  source: string;
  correct: boolean;
  share: number;
}

/** The naive triple loop (the task's gold kernel, compact). */
export const NAIVE = `function matmul(A, B, C, m, n, k) {
for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) {
let s = 0;
for (let p = 0; p < k; p++) s += A[i * k + p] * B[p * n + j];
C[i * n + j] = s;
}
}`;

/** Loop order i-k-j: B and C are read in contiguous runs; sums are kept in a float64 row. */
export const IKJ = `function matmul(A, B, C, m, n, k) {
const r = new Float64Array(n);
for (let i = 0; i < m; i++) {
r.fill(0);
for (let p = 0; p < k; p++) {
const a = A[i * k + p], o = p * n;
for (let j = 0; j < n; j++) r[j] += a * B[o + j];
}
for (let j = 0; j < n; j++) C[i * n + j] = r[j];
}
}`;

/** 1×4 register blocking (the reward's BLOCKED_MATMUL, compact). */
export const BLOCKED = `function matmul(A, B, C, m, n, k) {
for (let i = 0; i < m; i++) {
const a = i * k, c = i * n;
let j = 0;
for (; j + 3 < n; j += 4) {
let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
for (let p = 0; p < k; p++) {
const x = A[a + p], b = p * n + j;
s0 += x * B[b]; s1 += x * B[b + 1]; s2 += x * B[b + 2]; s3 += x * B[b + 3];
}
C[c + j] = s0; C[c + j + 1] = s1; C[c + j + 2] = s2; C[c + j + 3] = s3;
}
for (; j < n; j++) {
let s = 0;
for (let p = 0; p < k; p++) s += A[a + p] * B[p * n + j];
C[c + j] = s;
}
}
}`;

/** Broken: the i-k-j kernel that adds into C without clearing it (C starts as garbage). */
export const NO_CLEAR = `function matmul(A, B, C, m, n, k) {
for (let i = 0; i < m; i++) for (let p = 0; p < k; p++) {
const a = A[i * k + p], o = p * n;
for (let j = 0; j < n; j++) C[i * n + j] += a * B[o + j];
}
}`;

/** Broken: the naive kernel with A indexed by n instead of k (right only when n = k). */
export const WRONG_STRIDE = `function matmul(A, B, C, m, n, k) {
for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) {
let s = 0;
for (let p = 0; p < k; p++) s += A[i * n + p] * B[p * n + j];
C[i * n + j] = s;
}
}`;

/** The SFT mixture: shares sum to 1. */
export const TAUGHT: readonly TaughtKernel[] = [
  { name: "naive", source: NAIVE, correct: true, share: 0.4 },
  { name: "ikj", source: IKJ, correct: true, share: 0.1 },
  { name: "blocked", source: BLOCKED, correct: true, share: 0.25 },
  { name: "no-clear", source: NO_CLEAR, correct: false, share: 0.15 },
  { name: "wrong-stride", source: WRONG_STRIDE, correct: false, share: 0.1 },
];

/** A completion in the task's format (a short think, then one fenced js block). */
export function kernelCompletion(source: string): string {
  return `<think>matmul</think>\n\`\`\`js\n${source}\n\`\`\``;
}

/** Which taught kernel a completion writes (exact source match), or "other". */
export function classifyKernel(completion: string): string {
  for (const t of TAUGHT) if (completion.includes(t.source)) return t.name;
  return "other";
}

/** The kernel of SFT example `i` of `count`: shares are met exactly (largest-remainder), in a fixed cyclic order. */
export function mixtureKernel(i: number, count: number): TaughtKernel {
  const quotas = TAUGHT.map((t) => Math.floor(t.share * count));
  let left = count - quotas.reduce((a, b) => a + b, 0);
  for (let j = 0; left > 0; j = (j + 1) % quotas.length, left--) quotas[j]!++;
  let at = i % count;
  for (let j = 0; j < TAUGHT.length; j++) {
    if (at < quotas[j]!) return TAUGHT[j]!;
    at -= quotas[j]!;
  }
  throw new Error(`mixtureKernel: index ${i} outside ${count}`);
}
