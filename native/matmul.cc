// Packed, cache-tiled SGEMM for AVX2/FMA (BLIS-style loop order jc -> pc -> ic -> jr -> ir) with a 6x16
// micro-kernel (12 ymm accumulators), plus a matrix-vector path for m <= 4. Parallel products pack A and B
// cooperatively, then split the output into tiles claimed dynamically by the pool's threads.
#include "matmul.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "scratch.h"
#include "simd.h"
#include "thread-pool.h"

namespace rlvr {

// microkernel-avx512.cc (compiled for AVX-512F; called only when the CPU has it).
void microKernel12x32(long kc, const float* Ap, const float* Bp, float* C, long ldc, bool acc, long mr, long nr);
void microKernel12x32RowA(long kc, const float* A, long lda, const float* Bp, float* C, long ldc, bool acc, long mr,
                          long nr);
void dotRowsAvx512(const float* A, long lda, long m, const float* B, long ldb, long j0, long j1, long k, float* C,
                   long ldc, bool acc);

namespace {

constexpr long KC = 256;   // packed B micro-panel (KC x NR) = 16-32 KiB stays in L1
constexpr long MC = 120;   // packed A block (MC x KC) = 120 KiB stays in L2 (a multiple of both MRs)
constexpr long NC = 3072;  // packed B block (KC x NC) = 3 MiB
constexpr long kGemvRows = 4;   // m up to this uses the matrix-vector kernels
constexpr long kDotRows = 16;   // transposed-B products up to this m skip packing (sampling batches)
constexpr long kRowAMaxN = 512; // row-major A with at most this many columns of C is read in place (gemmRowA)

// A micro-kernel: C[0:MR, 0:NR] (+)= packed A panel x packed B panel, writing only mr x nr.
using MicroKernel = void (*)(long kc, const float* Ap, const float* Bp, float* C, long ldc, bool acc, long mr, long nr);

thread_local Scratch tlA, tlB, tlC;

inline long ceilDiv(long a, long b) { return (a + b - 1) / b; }

// Packs rows [i0, i0+mr) x cols [p0, p0+kc) of op(A) as out[p*MR + i], zero-padding rows past mr.
template <long MR>
void packA(const GemmDesc& d, long i0, long mr, long p0, long kc, float* out) {
  if (d.rsA == 1) {
    for (long p = 0; p < kc; p++) {
      const float* col = d.a + (p0 + p) * d.csA + i0;
      float* o = out + p * MR;
      long i = 0;
      for (; i < mr; i++) o[i] = col[i];
      for (; i < MR; i++) o[i] = 0.0f;
    }
    return;
  }
  if (d.csA == 1 && mr == MR) {
    const float* r0 = d.a + i0 * d.rsA + p0;
    const long s = d.rsA;
    long p = 0;
    // 8 columns at a time: load MR rows x 8, write 8 groups of MR.
    for (; p + 8 <= kc; p += 8) {
      alignas(32) float t[MR][8];
      for (long i = 0; i < MR; i++) _mm256_store_ps(t[i], _mm256_loadu_ps(r0 + i * s + p));
      float* o = out + p * MR;
      for (int q = 0; q < 8; q++)
        for (long i = 0; i < MR; i++) o[q * MR + i] = t[i][q];
    }
    for (; p < kc; p++)
      for (long i = 0; i < MR; i++) out[p * MR + i] = r0[i * s + p];
    return;
  }
  for (long p = 0; p < kc; p++) {
    float* o = out + p * MR;
    long i = 0;
    for (; i < mr; i++) o[i] = d.a[(i0 + i) * d.rsA + (p0 + p) * d.csA];
    for (; i < MR; i++) o[i] = 0.0f;
  }
}

// 8x8 transpose of rows r[0..7] (each 8 floats) into columns.
inline void transpose8(__m256& r0, __m256& r1, __m256& r2, __m256& r3, __m256& r4, __m256& r5, __m256& r6, __m256& r7) {
  __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
  __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
  __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
  __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r0 = _mm256_permute2f128_ps(s0, s4, 0x20); r1 = _mm256_permute2f128_ps(s1, s5, 0x20);
  r2 = _mm256_permute2f128_ps(s2, s6, 0x20); r3 = _mm256_permute2f128_ps(s3, s7, 0x20);
  r4 = _mm256_permute2f128_ps(s0, s4, 0x31); r5 = _mm256_permute2f128_ps(s1, s5, 0x31);
  r6 = _mm256_permute2f128_ps(s2, s6, 0x31); r7 = _mm256_permute2f128_ps(s3, s7, 0x31);
}

// Packs rows [p0, p0+kc) x cols [j0, j0+nr) of op(B) as out[p*NR + j], zero-padding columns past nr.
template <long NR>
void packB(const GemmDesc& d, long p0, long kc, long j0, long nr, float* out) {
  if (d.csB == 1 && nr == NR) {
    for (long p = 0; p < kc; p++) {
      const float* src = d.b + (p0 + p) * d.rsB + j0;
      for (long q = 0; q < NR; q += 8) _mm256_store_ps(out + p * NR + q, _mm256_loadu_ps(src + q));
    }
    return;
  }
  if (d.rsB == 1 && nr == NR) {
    // op(B) column j is contiguous in p (B stored (n, k)): transpose 8x8 blocks.
    const long s = d.csB;
    long p = 0;
    for (; p + 8 <= kc; p += 8) {
      for (long h = 0; h < NR / 8; h++) {
        const float* src = d.b + (j0 + 8 * h) * s + p0 + p;
        __m256 r0 = _mm256_loadu_ps(src), r1 = _mm256_loadu_ps(src + s), r2 = _mm256_loadu_ps(src + 2 * s);
        __m256 r3 = _mm256_loadu_ps(src + 3 * s), r4 = _mm256_loadu_ps(src + 4 * s), r5 = _mm256_loadu_ps(src + 5 * s);
        __m256 r6 = _mm256_loadu_ps(src + 6 * s), r7 = _mm256_loadu_ps(src + 7 * s);
        transpose8(r0, r1, r2, r3, r4, r5, r6, r7);
        float* o = out + p * NR + 8 * h;
        _mm256_store_ps(o, r0); _mm256_store_ps(o + NR, r1); _mm256_store_ps(o + 2 * NR, r2);
        _mm256_store_ps(o + 3 * NR, r3); _mm256_store_ps(o + 4 * NR, r4); _mm256_store_ps(o + 5 * NR, r5);
        _mm256_store_ps(o + 6 * NR, r6); _mm256_store_ps(o + 7 * NR, r7);
      }
    }
    for (; p < kc; p++)
      for (long j = 0; j < NR; j++) out[p * NR + j] = d.b[(j0 + j) * s + p0 + p];
    return;
  }
  for (long p = 0; p < kc; p++) {
    float* o = out + p * NR;
    long j = 0;
    for (; j < nr; j++) o[j] = d.b[(p0 + p) * d.rsB + (j0 + j) * d.csB];
    for (; j < NR; j++) o[j] = 0.0f;
  }
}

constexpr long MR2 = 6, NR2 = 16;  // the AVX2 micro-kernel tile

// C[0:6, 0:16] (+)= Ap (kc x 6) ^T . Bp (kc x 16). Full tiles write C directly; partial ones go through a buffer.
void microKernel6x16(long kc, const float* __restrict Ap, const float* __restrict Bp, float* C, long ldc, bool acc, long mr,
                 long nr) {
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  for (long p = 0; p < kc; p++) {
    __m256 b0 = _mm256_load_ps(Bp), b1 = _mm256_load_ps(Bp + 8);
    _mm_prefetch(reinterpret_cast<const char*>(Bp + 128), _MM_HINT_T0);
    __m256 a = _mm256_broadcast_ss(Ap);
    c00 = _mm256_fmadd_ps(a, b0, c00); c01 = _mm256_fmadd_ps(a, b1, c01);
    a = _mm256_broadcast_ss(Ap + 1);
    c10 = _mm256_fmadd_ps(a, b0, c10); c11 = _mm256_fmadd_ps(a, b1, c11);
    a = _mm256_broadcast_ss(Ap + 2);
    c20 = _mm256_fmadd_ps(a, b0, c20); c21 = _mm256_fmadd_ps(a, b1, c21);
    a = _mm256_broadcast_ss(Ap + 3);
    c30 = _mm256_fmadd_ps(a, b0, c30); c31 = _mm256_fmadd_ps(a, b1, c31);
    a = _mm256_broadcast_ss(Ap + 4);
    c40 = _mm256_fmadd_ps(a, b0, c40); c41 = _mm256_fmadd_ps(a, b1, c41);
    a = _mm256_broadcast_ss(Ap + 5);
    c50 = _mm256_fmadd_ps(a, b0, c50); c51 = _mm256_fmadd_ps(a, b1, c51);
    Ap += MR2;
    Bp += NR2;
  }
  __m256 r[12] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51};
  if (mr == MR2 && nr == NR2) {
    for (long i = 0; i < MR2; i++) {
      float* ci = C + i * ldc;
      if (acc) {
        _mm256_storeu_ps(ci, _mm256_add_ps(_mm256_loadu_ps(ci), r[2 * i]));
        _mm256_storeu_ps(ci + 8, _mm256_add_ps(_mm256_loadu_ps(ci + 8), r[2 * i + 1]));
      } else {
        _mm256_storeu_ps(ci, r[2 * i]);
        _mm256_storeu_ps(ci + 8, r[2 * i + 1]);
      }
    }
    return;
  }
  alignas(32) float t[MR2 * NR2];
  for (long i = 0; i < MR2; i++) {
    _mm256_store_ps(t + i * NR2, r[2 * i]);
    _mm256_store_ps(t + i * NR2 + 8, r[2 * i + 1]);
  }
  for (long i = 0; i < mr; i++) {
    float* ci = C + i * ldc;
    if (acc)
      for (long j = 0; j < nr; j++) ci[j] += t[i * NR2 + j];
    else
      for (long j = 0; j < nr; j++) ci[j] = t[i * NR2 + j];
  }
}

// Multiplies packed rows [i0, i0+mc) (panels starting at Ap) by packed columns [j0, j0+nc) (panels at Bp).
template <long MR, long NR, MicroKernel K>
void macroKernel(const GemmDesc& d, long kc, const float* Ap, const float* Bp, long i0, long mc, long j0, long nc, bool acc) {
  for (long jr = 0; jr < nc; jr += NR) {
    long nr = std::min(NR, nc - jr);
    const float* bp = Bp + (jr / NR) * NR * kc;
    for (long ir = 0; ir < mc; ir += MR) {
      long mr = std::min(MR, mc - ir);
      K(kc, Ap + (ir / MR) * MR * kc, bp, d.c + (i0 + ir) * d.ldc + j0 + jr, d.ldc, acc, mr, nr);
    }
  }
}

void zeroOrKeep(const GemmDesc& d) {
  if (d.accumulate) return;
  for (long i = 0; i < d.m; i++) std::memset(d.c + i * d.ldc, 0, sizeof(float) * d.n);
}

template <long MR, long NR, MicroKernel K>
void gemmSerial(const GemmDesc& d) {
  for (long jc = 0; jc < d.n; jc += NC) {
    long nc = std::min(NC, d.n - jc);
    for (long pc = 0; pc < d.k; pc += KC) {
      long kc = std::min(KC, d.k - pc);
      bool acc = d.accumulate || pc > 0;
      float* Bp = tlB.get(ceilDiv(nc, NR) * NR * kc);
      for (long jr = 0; jr < nc; jr += NR) packB<NR>(d, pc, kc, jc + jr, std::min(NR, nc - jr), Bp + (jr / NR) * NR * kc);
      for (long ic = 0; ic < d.m; ic += MC) {
        long mc = std::min(MC, d.m - ic);
        float* Ap = tlA.get(ceilDiv(mc, MR) * MR * kc);
        for (long ir = 0; ir < mc; ir += MR) packA<MR>(d, ic + ir, std::min(MR, mc - ir), pc, kc, Ap + (ir / MR) * MR * kc);
        macroKernel<MR, NR, K>(d, kc, Ap, Bp, ic, mc, jc, nc, acc);
      }
    }
  }
}

template <long MR, long NR, MicroKernel K>
void gemmParallel(const GemmDesc& d) {
  const int T = poolThreads();
  for (long jc = 0; jc < d.n; jc += NC) {
    long nc = std::min(NC, d.n - jc);
    long panA = ceilDiv(d.m, MR), panB = ceilDiv(nc, NR);
    // Row tiles balanced to ~MC rows; column tiles so that there are at least 3 tiles per thread.
    long mTiles = ceilDiv(d.m, MC);
    long mcT = ceilDiv(ceilDiv(d.m, mTiles), MR) * MR;
    mTiles = ceilDiv(d.m, mcT);
    long nTiles = std::max<long>(1, std::min(panB, ceilDiv(3 * T, mTiles)));
    long ncT = ceilDiv(panB, nTiles) * NR;
    nTiles = ceilDiv(nc, ncT);
    for (long pc = 0; pc < d.k; pc += KC) {
      long kc = std::min(KC, d.k - pc);
      bool acc = d.accumulate || pc > 0;
      float* Ap = tlA.get(panA * MR * kc);
      float* Bp = tlB.get(panB * NR * kc);
      parallelFor(panA + panB, 4, [&](long b, long e, int) {
        for (long q = b; q < e; q++) {
          if (q < panA) packA<MR>(d, q * MR, std::min(MR, d.m - q * MR), pc, kc, Ap + q * MR * kc);
          else {
            long jr = (q - panA) * NR;
            packB<NR>(d, pc, kc, jc + jr, std::min(NR, nc - jr), Bp + (q - panA) * NR * kc);
          }
        }
      });
      parallelFor(mTiles * nTiles, 1, [&](long b, long e, int) {
        for (long t = b; t < e; t++) {
          long ti = t / nTiles, tj = t % nTiles;
          long i0 = ti * mcT, j0 = tj * ncT;
          macroKernel<MR, NR, K>(d, kc, Ap + (i0 / MR) * MR * kc, Bp + (j0 / NR) * NR * kc, i0, std::min(mcT, d.m - i0), jc + j0,
                      std::min(ncT, nc - j0), acc);
        }
      });
    }
  }
}

// AVX-512, row-major A and at most kRowAMaxN columns: A is read in place by microKernel12x32RowA instead of packed.
// With few columns a packed A panel serves few B panels, so packing cost about as much as it saved: on wd1's
// d_model-96 model, packA took 11% of a run's CPU against 38% for the micro-kernel. Loop order pc -> ir -> jr: each
// 12-row panel of A (12 x KC) is loaded once into L1 and used against every packed B panel (at most 512 KiB, in L2).
// The sums are the packed path's, in the same order, so the results are bit for bit the same.
void gemmRowA(const GemmDesc& d, bool par) {
  constexpr long MR = 12, NR = 32;
  const long panA = ceilDiv(d.m, MR), panB = ceilDiv(d.n, NR);
  for (long pc = 0; pc < d.k; pc += KC) {
    const long kc = std::min(KC, d.k - pc);
    const bool acc = d.accumulate || pc > 0;
    float* Bp = tlB.get(panB * NR * kc);
    auto packPanels = [&](long b, long e) {
      for (long q = b; q < e; q++) packB<NR>(d, pc, kc, q * NR, std::min(NR, d.n - q * NR), Bp + q * NR * kc);
    };
    auto rowPanels = [&](long b, long e) {
      for (long q = b; q < e; q++) {
        const long i0 = q * MR, mr = std::min(MR, d.m - i0);
        const float* a = d.a + i0 * d.rsA + pc;
        for (long jr = 0; jr < d.n; jr += NR)
          microKernel12x32RowA(kc, a, d.rsA, Bp + (jr / NR) * NR * kc, d.c + i0 * d.ldc + jr, d.ldc, acc, mr,
                               std::min(NR, d.n - jr));
      }
    };
    if (par) {
      parallelFor(panB, 1, [&](long b, long e, int) { packPanels(b, e); });
      parallelFor(panA, std::max<long>(1, panA / (8 * poolThreads())), [&](long b, long e, int) { rowPanels(b, e); });
    } else {
      packPanels(0, panB);
      rowPanels(0, panA);
    }
  }
}

// Few rows, op(B) rows contiguous (B stored (k, n)): C[i, j] = sum_p A(i, p) B(p, j), 16 columns at a time.
void gemvRowsN(const GemmDesc& d, const float* A, long lda, long j0, long j1) {
  const long m = d.m;
  long j = j0;
  for (; j + 16 <= j1; j += 16) {
    __m256 acc[kGemvRows][2];
    for (long i = 0; i < m; i++) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
    const float* bp = d.b + j;
    for (long p = 0; p < d.k; p++, bp += d.rsB) {
      __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
      for (long i = 0; i < m; i++) {
        __m256 a = _mm256_broadcast_ss(A + i * lda + p);
        acc[i][0] = _mm256_fmadd_ps(a, b0, acc[i][0]);
        acc[i][1] = _mm256_fmadd_ps(a, b1, acc[i][1]);
      }
    }
    for (long i = 0; i < m; i++) {
      float* c = d.c + i * d.ldc + j;
      if (d.accumulate) {
        acc[i][0] = _mm256_add_ps(acc[i][0], _mm256_loadu_ps(c));
        acc[i][1] = _mm256_add_ps(acc[i][1], _mm256_loadu_ps(c + 8));
      }
      _mm256_storeu_ps(c, acc[i][0]);
      _mm256_storeu_ps(c + 8, acc[i][1]);
    }
  }
  for (; j < j1; j++) {
    for (long i = 0; i < m; i++) {
      float s = 0.0f;
      for (long p = 0; p < d.k; p++) s += A[i * lda + p] * d.b[p * d.rsB + j];
      float* c = d.c + i * d.ldc + j;
      *c = d.accumulate ? *c + s : s;
    }
  }
}

// Few rows, op(B) columns contiguous (B stored (n, k)): C[i, j] = dot(A_i, B_j), in blocks of 4 rows x 2
// columns (8 ymm accumulators) so each loaded B row serves four A rows.
void dotRowsAvx2(const float* A, long lda, long m, const float* B, long ldb, long j0, long j1, long k, float* C, long ldc,
                 bool acc) {
  const long k8 = k & ~7L;
  const __m256i tm = tailMask(k - k8);
  for (long j = j0; j < j1; j += 2) {
    const long nj = j1 - j < 2 ? j1 - j : 2;
    const float* b0 = B + j * ldb;
    const float* b1 = B + (j + (nj > 1 ? 1 : 0)) * ldb;
    for (long i = 0; i < m; i += 4) {
      const long ni = std::min<long>(4, m - i);
      const float* a[4];
      for (long r = 0; r < 4; r++) a[r] = A + (i + (r < ni ? r : 0)) * lda;
      __m256 s[4][2];
      for (int r = 0; r < 4; r++) s[r][0] = s[r][1] = _mm256_setzero_ps();
      for (long p = 0; p < k8; p += 8) {
        __m256 x0 = _mm256_loadu_ps(b0 + p), x1 = _mm256_loadu_ps(b1 + p);
        for (int r = 0; r < 4; r++) {
          __m256 av = _mm256_loadu_ps(a[r] + p);
          s[r][0] = _mm256_fmadd_ps(av, x0, s[r][0]);
          s[r][1] = _mm256_fmadd_ps(av, x1, s[r][1]);
        }
      }
      if (k8 < k) {
        __m256 x0 = _mm256_maskload_ps(b0 + k8, tm), x1 = _mm256_maskload_ps(b1 + k8, tm);
        for (int r = 0; r < 4; r++) {
          __m256 av = _mm256_maskload_ps(a[r] + k8, tm);
          s[r][0] = _mm256_fmadd_ps(av, x0, s[r][0]);
          s[r][1] = _mm256_fmadd_ps(av, x1, s[r][1]);
        }
      }
      for (long r = 0; r < ni; r++) {
        float* c = C + (i + r) * ldc + j;
        for (long q = 0; q < nj; q++) {
          float v = hsum(s[r][q]);
          c[q] = acc ? c[q] + v : v;
        }
      }
    }
  }
}

// Returns false when the layout has no gemv path.
bool gemv(const GemmDesc& d, bool parallel) {
  if (d.rsB != 1 && d.csB != 1) return false;
  if (d.m > kGemvRows && d.csB == 1) return false;  // rowsN handles at most kGemvRows rows
  const float* A = d.a;
  long lda = d.rsA;
  if (d.csA != 1) {  // gather op(A) rows contiguously (m <= 4 rows, cheap)
    float* t = tlC.get(d.m * d.k);
    for (long i = 0; i < d.m; i++)
      for (long p = 0; p < d.k; p++) t[i * d.k + p] = d.a[i * d.rsA + p * d.csA];
    A = t;
    lda = d.k;
  }
  const bool rowsN = d.csB == 1;
  auto body = [&](long b, long e, int) {
    if (rowsN) gemvRowsN(d, A, lda, b, e);
    else if (useAvx512()) dotRowsAvx512(A, lda, d.m, d.b, d.csB, b, e, d.k, d.c, d.ldc, d.accumulate);
    else dotRowsAvx2(A, lda, d.m, d.b, d.csB, b, e, d.k, d.c, d.ldc, d.accumulate);
  };
  long work = d.n * d.k * d.m;
  if (parallel && work >= (1L << 16)) parallelFor(d.n, std::max<long>(16, ceilDiv(d.n, 4 * poolThreads()) & ~15L), body);
  else body(0, d.n, 0);
  return true;
}

}  // namespace

bool useAvx512() {
  static const bool use = [] {
    const char* off = std::getenv("RLVR_NO_AVX512");
    __builtin_cpu_init();
    return !(off && *off && *off != '0') && __builtin_cpu_supports("avx512f");
  }();
  return use;
}

void gemm(const GemmDesc& d, bool parallel) {
  if (d.m <= 0 || d.n <= 0) return;
  if (d.k <= 0) {
    zeroOrKeep(d);
    return;
  }
  // With AVX-512 the unpacked dot kernel beats packing up to kDotRows rows (1.5x at m = 16); with AVX2 it only
  // pays for matrix-vector sizes.
  const bool dotRows = d.m <= kDotRows && d.rsB == 1 && d.csB != 1 && useAvx512();
  if ((d.m <= kGemvRows || dotRows) && gemv(d, parallel)) return;
  const bool par = parallel && poolThreads() > 1 && d.m * d.n * d.k >= 64L * 64 * 64;
  if (useAvx512() && d.csA == 1 && d.n <= kRowAMaxN) return gemmRowA(d, par);
  if (useAvx512()) {
    if (par) gemmParallel<12, 32, microKernel12x32>(d);
    else gemmSerial<12, 32, microKernel12x32>(d);
  } else {
    if (par) gemmParallel<MR2, NR2, microKernel6x16>(d);
    else gemmSerial<MR2, NR2, microKernel6x16>(d);
  }
}

void matmul(const float* a, const float* b, float* c, long batch, long m, long n, long k, bool transA, bool transB,
            long strideA, long strideB, bool accumulate) {
  GemmDesc d{m, n, k, a, transA ? 1 : k, transA ? m : 1, b, transB ? 1 : n, transB ? k : 1, c, n, accumulate};
  auto item = [&](long i, bool parallel) {
    GemmDesc e = d;
    e.a = a + i * strideA;
    e.b = b + i * strideB;
    e.c = c + i * m * n;
    gemm(e, parallel);
  };
  const int T = poolThreads();
  if (batch > 1 && T > 1 && (batch >= 4 * T || m * n * k < 256L * 256 * 256)) {
    parallelFor(batch, 1, [&](long b0, long e0, int) {
      for (long i = b0; i < e0; i++) item(i, false);
    });
    return;
  }
  for (long i = 0; i < batch; i++) item(i, true);
}

}  // namespace rlvr
