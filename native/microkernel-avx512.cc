// The AVX-512 GEMM micro-kernel (12x32: 24 zmm accumulators), compiled for AVX-512F by a target pragma and only
// called after a run-time CPU check (matmul.cc). This file deliberately includes no project headers and uses no
// inline library templates, so no AVX-512 instance of a shared inline function can leak into the rest of the
// addon through the linker.
#pragma GCC target("avx512f")
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // false positive inside _mm512_reduce_add_ps (GCC 12)
#include <immintrin.h>

namespace rlvr {

namespace {

// Writes the 12x32 accumulators to C: all of them, or masked stores of the valid mr rows and nr columns.
__attribute__((always_inline)) inline void storeTile(__m512 (&c)[12][2], float* C, long ldc, bool acc, long mr, long nr) {
  if (mr == 12 && nr == 32) {
    for (int i = 0; i < 12; i++) {
      float* ci = C + i * ldc;
      if (acc) {
        c[i][0] = _mm512_add_ps(c[i][0], _mm512_loadu_ps(ci));
        c[i][1] = _mm512_add_ps(c[i][1], _mm512_loadu_ps(ci + 16));
      }
      _mm512_storeu_ps(ci, c[i][0]);
      _mm512_storeu_ps(ci + 16, c[i][1]);
    }
    return;
  }
  // Partial tile: masked stores of the valid columns of the valid rows.
  const __mmask16 m0 = nr >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << nr) - 1);
  const __mmask16 m1 = nr >= 32 ? static_cast<__mmask16>(0xFFFF) : nr <= 16 ? static_cast<__mmask16>(0) : static_cast<__mmask16>((1u << (nr - 16)) - 1);
  for (long i = 0; i < mr; i++) {
    float* ci = C + i * ldc;
    __m512 v0 = c[i][0], v1 = c[i][1];
    if (acc) {
      v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, ci));
      v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, ci + 16));
    }
    _mm512_mask_storeu_ps(ci, m0, v0);
    _mm512_mask_storeu_ps(ci + 16, m1, v1);
  }
}

}  // namespace

// C[0:12, 0:32] (+)= Ap (kc x 12)^T . Bp (kc x 32); partial tiles (mr < 12 or nr < 32) store only mr x nr.
void microKernel12x32(long kc, const float* __restrict Ap, const float* __restrict Bp, float* C, long ldc, bool acc,
                      long mr, long nr) {
  __m512 c[12][2];
  for (int i = 0; i < 12; i++) c[i][0] = c[i][1] = _mm512_setzero_ps();
  for (long p = 0; p < kc; p++) {
    __m512 b0 = _mm512_load_ps(Bp), b1 = _mm512_load_ps(Bp + 16);
    _mm_prefetch(reinterpret_cast<const char*>(Bp + 256), _MM_HINT_T0);
#pragma GCC unroll 12
    for (int i = 0; i < 12; i++) {
      __m512 a = _mm512_set1_ps(Ap[i]);
      c[i][0] = _mm512_fmadd_ps(a, b0, c[i][0]);
      c[i][1] = _mm512_fmadd_ps(a, b1, c[i][1]);
    }
    Ap += 12;
    Bp += 32;
  }
  storeTile(c, C, ldc, acc, mr, nr);
}

// The same product with A read in place: rows A + i * lda (i < mr), contiguous in k, instead of a packed panel.
// The sums are taken in the same order as microKernel12x32's, so the results are bit for bit the same. Rows past
// mr re-read row mr - 1 (never stored), so a partial tile reads nothing outside A.
void microKernel12x32RowA(long kc, const float* __restrict A, long lda, const float* __restrict Bp, float* C, long ldc,
                          bool acc, long mr, long nr) {
  const float* a[12];
  for (long i = 0; i < 12; i++) a[i] = A + (i < mr ? i : mr - 1) * lda;
  __m512 c[12][2];
  for (int i = 0; i < 12; i++) c[i][0] = c[i][1] = _mm512_setzero_ps();
  for (long p = 0; p < kc; p++) {
    __m512 b0 = _mm512_load_ps(Bp), b1 = _mm512_load_ps(Bp + 16);
    _mm_prefetch(reinterpret_cast<const char*>(Bp + 256), _MM_HINT_T0);
#pragma GCC unroll 12
    for (int i = 0; i < 12; i++) {
      __m512 av = _mm512_set1_ps(a[i][p]);
      c[i][0] = _mm512_fmadd_ps(av, b0, c[i][0]);
      c[i][1] = _mm512_fmadd_ps(av, b1, c[i][1]);
    }
    Bp += 32;
  }
  storeTile(c, C, ldc, acc, mr, nr);
}

}  // namespace rlvr

namespace rlvr {

// Few-row products against a transposed B (rows of B contiguous in k, e.g. a Linear weight stored (out, in)):
// C[i, j] (+)= dot(A_i, B_j) for i < m, j in [j0, j1), in 4x4 blocks of dot products (16 zmm accumulators) so
// that each loaded row of B serves four rows of A. No packing: this is the sampling path, where m is the batch.
void dotRowsAvx512(const float* A, long lda, long m, const float* B, long ldb, long j0, long j1, long k, float* C,
                   long ldc, bool acc) {
  const long k16 = k & ~15L;
  const __mmask16 tail = static_cast<__mmask16>((1u << (k - k16)) - 1);
  for (long j = j0; j < j1; j += 4) {
    const long nj = j1 - j < 4 ? j1 - j : 4;
    const float* b[4];
    for (long q = 0; q < 4; q++) b[q] = B + (j + (q < nj ? q : 0)) * ldb;
    for (long i = 0; i < m; i += 4) {
      const long ni = m - i < 4 ? m - i : 4;
      const float* a[4];
      for (long r = 0; r < 4; r++) a[r] = A + (i + (r < ni ? r : 0)) * lda;
      __m512 s[4][4];
      for (int r = 0; r < 4; r++)
        for (int q = 0; q < 4; q++) s[r][q] = _mm512_setzero_ps();
      for (long p = 0; p < k16; p += 16) {
        __m512 bv[4];
        for (int q = 0; q < 4; q++) bv[q] = _mm512_loadu_ps(b[q] + p);
#pragma GCC unroll 4
        for (int r = 0; r < 4; r++) {
          __m512 av = _mm512_loadu_ps(a[r] + p);
          for (int q = 0; q < 4; q++) s[r][q] = _mm512_fmadd_ps(av, bv[q], s[r][q]);
        }
      }
      if (k16 < k) {
        __m512 bv[4];
        for (int q = 0; q < 4; q++) bv[q] = _mm512_maskz_loadu_ps(tail, b[q] + k16);
        for (int r = 0; r < 4; r++) {
          __m512 av = _mm512_maskz_loadu_ps(tail, a[r] + k16);
          for (int q = 0; q < 4; q++) s[r][q] = _mm512_fmadd_ps(av, bv[q], s[r][q]);
        }
      }
      for (long r = 0; r < ni; r++) {
        float* c = C + (i + r) * ldc + j;
        for (long q = 0; q < nj; q++) {
          float v = _mm512_reduce_add_ps(s[r][q]);
          c[q] = acc ? c[q] + v : v;
        }
      }
    }
  }
}

// The machine's fp32 peak, per thread (peak.cc): `iters` rounds of 16 independent FMA chains on 16-float
// registers, 512 FLOP per round. Sixteen chains cover the FMA latency times the FMA units on current cores, so the
// loop is bound by FMA throughput alone; the returned sum keeps the compiler from dropping the work.
float fmaChainsAvx512(long iters) {
  __m512 acc[16];
  for (int i = 0; i < 16; i++) acc[i] = _mm512_set1_ps(0.001f * static_cast<float>(i));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long it = 0; it < iters; it++) {
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  __m512 s = acc[0];
  for (int i = 1; i < 16; i++) s = _mm512_add_ps(s, acc[i]);
  float out[16];
  _mm512_storeu_ps(out, s);
  float sum = 0;
  for (int i = 0; i < 16; i++) sum += out[i];
  return sum;
}

}  // namespace rlvr
