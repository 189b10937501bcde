// Embedding gather/scatter-add, the fused AdamW step and the float64 sum of squares used for gradient clipping.
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "kernels.h"
#include "simd.h"
#include "thread-pool.h"

namespace rlvr {

const char* gather(const float* table, long tableRows, const int32_t* ids, long n, float* out, long dim) {
  for (long i = 0; i < n; i++)
    if (ids[i] < 0 || ids[i] >= tableRows) return "gather: id out of range [0, tableRows)";
  for (long i = 0; i < n; i++) std::memcpy(out + i * dim, table + static_cast<long>(ids[i]) * dim, sizeof(float) * dim);
  return nullptr;
}

const char* scatterAdd(const float* dout, const int32_t* ids, long n, float* dtable, long tableRows, long dim) {
  for (long i = 0; i < n; i++)
    if (ids[i] < 0 || ids[i] >= tableRows) return "scatterAdd: id out of range [0, tableRows)";
  // Columns are independent, so large scatters split the embedding dimension across threads.
  auto body = [&](long c0, long c1) {
    for (long i = 0; i < n; i++) {
      float* dst = dtable + static_cast<long>(ids[i]) * dim;
      const float* src = dout + i * dim;
      long c = c0;
      for (; c + 8 <= c1; c += 8) _mm256_storeu_ps(dst + c, _mm256_add_ps(_mm256_loadu_ps(dst + c), _mm256_loadu_ps(src + c)));
      for (; c < c1; c++) dst[c] += src[c];
    }
  };
  if (n * dim >= (1L << 16) && dim >= 64) parallelFor(dim, std::max<long>(32, ((dim / poolThreads()) + 7) & ~7L), [&](long b, long e, int) { body(b, e); });
  else body(0, dim);
  return nullptr;
}

void adamw(float* p, const float* g, float* m, float* v, long n, double lr, double beta1, double beta2, double eps,
           double wd, double step) {
  const float bc1 = static_cast<float>(1.0 - std::pow(beta1, step));
  const float bc2 = static_cast<float>(1.0 - std::pow(beta2, step));
  const float b1 = static_cast<float>(beta1), b2 = static_cast<float>(beta2);
  const float lrf = static_cast<float>(lr), epsf = static_cast<float>(eps), wdf = static_cast<float>(wd);
  auto body = [&](long s, long e) {
    const __m256 vb1 = _mm256_set1_ps(b1), vb2 = _mm256_set1_ps(b2), vc1 = _mm256_set1_ps(1.0f - b1),
                 vc2 = _mm256_set1_ps(1.0f - b2), vbc1 = _mm256_set1_ps(1.0f / bc1), vbc2 = _mm256_set1_ps(1.0f / bc2),
                 vlr = _mm256_set1_ps(lrf), veps = _mm256_set1_ps(epsf), vwd = _mm256_set1_ps(wdf);
    long i = s;
    for (; i + 8 <= e; i += 8) {
      __m256 gi = _mm256_loadu_ps(g + i);
      __m256 mi = _mm256_fmadd_ps(vb1, _mm256_loadu_ps(m + i), _mm256_mul_ps(vc1, gi));
      __m256 vi = _mm256_fmadd_ps(vb2, _mm256_loadu_ps(v + i), _mm256_mul_ps(vc2, _mm256_mul_ps(gi, gi)));
      _mm256_storeu_ps(m + i, mi);
      _mm256_storeu_ps(v + i, vi);
      __m256 denom = _mm256_add_ps(_mm256_sqrt_ps(_mm256_mul_ps(vi, vbc2)), veps);
      __m256 pi = _mm256_loadu_ps(p + i);
      __m256 upd = _mm256_fmadd_ps(vwd, pi, _mm256_div_ps(_mm256_mul_ps(mi, vbc1), denom));
      _mm256_storeu_ps(p + i, _mm256_fnmadd_ps(vlr, upd, pi));
    }
    for (; i < e; i++) {
      float gi = g[i];
      float mi = b1 * m[i] + (1.0f - b1) * gi;
      float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
      m[i] = mi;
      v[i] = vi;
      float pi = p[i];
      p[i] = pi - lrf * (mi / bc1 / (std::sqrt(vi / bc2) + epsf) + wdf * pi);
    }
  };
  if (n >= (1L << 16)) parallelFor(n, 1L << 14, [&](long b, long e, int) { body(b, e); });
  else body(0, n);
}

double sumSquares(const float* x, long n) {
  auto part = [&](long s, long e) {
    __m256d a0 = _mm256_setzero_pd(), a1 = a0;
    long i = s;
    for (; i + 8 <= e; i += 8) {
      __m256 v = _mm256_loadu_ps(x + i);
      __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(v)), hi = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
      a0 = _mm256_fmadd_pd(lo, lo, a0);
      a1 = _mm256_fmadd_pd(hi, hi, a1);
    }
    double r = hsumd(_mm256_add_pd(a0, a1));
    for (; i < e; i++) r += static_cast<double>(x[i]) * x[i];
    return r;
  };
  if (n < (1L << 17)) return part(0, n);
  const long chunk = 1L << 15;
  const long chunks = (n + chunk - 1) / chunk;
  double partial[1024];
  if (chunks > 1024) return part(0, n);
  parallelFor(n, chunk, [&](long b, long e, int) { partial[b / chunk] = part(b, e); });
  double s = 0;
  for (long c = 0; c < chunks; c++) s += partial[c];
  return s;
}

}  // namespace rlvr
