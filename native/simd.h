// Vectorised AVX2/FMA helpers shared by the kernels: exp, log, tanh, sigmoid and horizontal reductions.
// exp/log follow the Cephes single-precision polynomials (about 1-2 ulp); tanh uses the Cephes small-argument
// polynomial below |x| < 0.625 so that tiny inputs keep full relative precision.
#pragma once
#include <immintrin.h>
#include <cmath>
#include <cstdint>

namespace rlvr {

static inline float hsum(__m256 v) {
  __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
  lo = _mm_add_ps(lo, hi);
  lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
  lo = _mm_add_ss(lo, _mm_movehdup_ps(lo));
  return _mm_cvtss_f32(lo);
}

static inline float hmax(__m256 v) {
  __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
  lo = _mm_max_ps(lo, hi);
  lo = _mm_max_ps(lo, _mm_movehl_ps(lo, lo));
  lo = _mm_max_ss(lo, _mm_movehdup_ps(lo));
  return _mm_cvtss_f32(lo);
}

static inline double hsumd(__m256d v) {
  __m128d lo = _mm256_castpd256_pd128(v), hi = _mm256_extractf128_pd(v, 1);
  lo = _mm_add_pd(lo, hi);
  return _mm_cvtsd_f64(_mm_add_sd(lo, _mm_unpackhi_pd(lo, lo)));
}

/** Mask with the first n (0..8) lanes set, for partial loads and stores. */
static inline __m256i tailMask(long n) {
  static const int32_t bits[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bits + 8 - n));
}

/** e^x; NaN propagates, x < -87.33 gives 0 (no denormals), x > ln(FLT_MAX) gives +inf. */
static inline __m256 exp8(__m256 x) {
  const __m256 hi = _mm256_set1_ps(88.7228f), lo = _mm256_set1_ps(-88.0f);
  __m256 under = _mm256_cmp_ps(x, _mm256_set1_ps(-87.33f), _CMP_LT_OQ);
  __m256 over = _mm256_cmp_ps(x, _mm256_set1_ps(88.7228f), _CMP_GT_OQ);
  __m256 xc = _mm256_min_ps(hi, _mm256_max_ps(lo, x));  // x second: NaN passes through
  __m256 fx = _mm256_floor_ps(_mm256_fmadd_ps(xc, _mm256_set1_ps(1.44269504088896341f), _mm256_set1_ps(0.5f)));
  xc = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), xc);
  xc = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), xc);
  __m256 y = _mm256_set1_ps(1.9875691500E-4f);
  y = _mm256_fmadd_ps(y, xc, _mm256_set1_ps(1.3981999507E-3f));
  y = _mm256_fmadd_ps(y, xc, _mm256_set1_ps(8.3334519073E-3f));
  y = _mm256_fmadd_ps(y, xc, _mm256_set1_ps(4.1665795894E-2f));
  y = _mm256_fmadd_ps(y, xc, _mm256_set1_ps(1.6666665459E-1f));
  y = _mm256_fmadd_ps(y, xc, _mm256_set1_ps(5.0000001201E-1f));
  __m256 x2 = _mm256_mul_ps(xc, xc);
  y = _mm256_fmadd_ps(y, x2, _mm256_add_ps(xc, _mm256_set1_ps(1.0f)));
  // 2^fx as two factors so that fx = 128 (x near ln FLT_MAX) and fx = -126 both stay representable.
  __m256i n = _mm256_cvttps_epi32(fx);
  __m256i n1 = _mm256_srai_epi32(n, 1), n2 = _mm256_sub_epi32(n, n1);
  __m256i e1 = _mm256_slli_epi32(_mm256_add_epi32(n1, _mm256_set1_epi32(127)), 23);
  __m256i e2 = _mm256_slli_epi32(_mm256_add_epi32(n2, _mm256_set1_epi32(127)), 23);
  y = _mm256_mul_ps(_mm256_mul_ps(y, _mm256_castsi256_ps(e1)), _mm256_castsi256_ps(e2));
  y = _mm256_andnot_ps(under, y);
  return _mm256_blendv_ps(y, _mm256_set1_ps(INFINITY), over);
}

/** Natural log; x < 0 gives NaN, 0 gives -inf, +inf gives +inf. */
static inline __m256 log8(__m256 x) {
  __m256 isNeg = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
  __m256 isZero = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_EQ_OQ);
  __m256 isInf = _mm256_cmp_ps(x, _mm256_set1_ps(INFINITY), _CMP_EQ_OQ);
  __m256 isNan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  // Scale denormals up so the exponent extraction sees a normal number.
  __m256 tiny = _mm256_cmp_ps(x, _mm256_set1_ps(1.17549435e-38f), _CMP_LT_OQ);
  __m256 xs = _mm256_blendv_ps(x, _mm256_mul_ps(x, _mm256_set1_ps(8388608.0f)), tiny);
  __m256 eAdj = _mm256_and_ps(tiny, _mm256_set1_ps(23.0f));
  __m256i xi = _mm256_castps_si256(xs);
  __m256i emm0 = _mm256_srli_epi32(xi, 23);
  __m256 m = _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(xi, _mm256_set1_epi32(0x007fffff)), _mm256_set1_epi32(0x3f000000)));
  __m256 e = _mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(emm0, _mm256_set1_epi32(126))), eAdj);
  __m256 lt = _mm256_cmp_ps(m, _mm256_set1_ps(0.707106781186547524f), _CMP_LT_OQ);
  __m256 tmp = _mm256_and_ps(m, lt);
  e = _mm256_sub_ps(e, _mm256_and_ps(_mm256_set1_ps(1.0f), lt));
  m = _mm256_add_ps(_mm256_sub_ps(m, _mm256_set1_ps(1.0f)), tmp);
  __m256 z = _mm256_mul_ps(m, m);
  __m256 y = _mm256_set1_ps(7.0376836292E-2f);
  y = _mm256_fmadd_ps(y, m, _mm256_set1_ps(-1.1514610310E-1f));
  y = _mm256_fmadd_ps(y, m, _mm256_set1_ps(1.1676998740E-1f));
  y = _mm256_fmadd_ps(y, m, _mm256_set1_ps(-1.2420140846E-1f));
  y = _mm256_fmadd_ps(y, m, _mm256_set1_ps(1.4249322787E-1f));
  y = _mm256_fmadd_ps(y, m, _mm256_set1_ps(-1.6668057665E-1f));
  y = _mm256_fmadd_ps(y, m, _mm256_set1_ps(2.0000714765E-1f));
  y = _mm256_fmadd_ps(y, m, _mm256_set1_ps(-2.4999993993E-1f));
  y = _mm256_fmadd_ps(y, m, _mm256_set1_ps(3.3333331174E-1f));
  y = _mm256_mul_ps(_mm256_mul_ps(y, m), z);
  y = _mm256_fmadd_ps(e, _mm256_set1_ps(-2.12194440e-4f), y);
  y = _mm256_fnmadd_ps(z, _mm256_set1_ps(0.5f), y);
  __m256 r = _mm256_add_ps(m, y);
  r = _mm256_fmadd_ps(e, _mm256_set1_ps(0.693359375f), r);
  r = _mm256_blendv_ps(r, _mm256_set1_ps(-INFINITY), isZero);
  r = _mm256_blendv_ps(r, _mm256_set1_ps(INFINITY), isInf);
  return _mm256_blendv_ps(r, _mm256_set1_ps(NAN), _mm256_or_ps(isNeg, isNan));
}

/** tanh(x) with full relative precision near 0. */
static inline __m256 tanh8(__m256 x) {
  const __m256 signMask = _mm256_set1_ps(-0.0f);
  __m256 ax = _mm256_andnot_ps(signMask, x);
  __m256 z = _mm256_mul_ps(x, x);
  __m256 p = _mm256_set1_ps(-5.70498872745E-3f);
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(2.06390887954E-2f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-5.37397155531E-2f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(1.33314422036E-1f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-3.33332819422E-1f));
  __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, z), x, x);
  // Large branch: 1 - 2 / (e^{2|x|} + 1), sign restored.
  __m256 e = exp8(_mm256_min_ps(_mm256_set1_ps(40.0f), _mm256_add_ps(ax, ax)));
  __m256 big = _mm256_sub_ps(_mm256_set1_ps(1.0f), _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, _mm256_set1_ps(1.0f))));
  big = _mm256_or_ps(big, _mm256_and_ps(x, signMask));
  __m256 useSmall = _mm256_cmp_ps(ax, _mm256_set1_ps(0.625f), _CMP_LT_OQ);
  __m256 r = _mm256_blendv_ps(big, small, useSmall);
  return _mm256_blendv_ps(r, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

/** 1 / (1 + e^-x). */
static inline __m256 sigmoid8(__m256 x) {
  __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), x));
  return _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

}  // namespace rlvr
