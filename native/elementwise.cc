// Elementwise kernels: unary maps and their gradients, scalar affine/axpy/pow, and the broadcasting binary,
// binary-gradient, where and strided-copy kernels. Inner rows run AVX2 loops for the stride patterns that
// matter (1/1, 1/0, 0/1) and a scalar loop otherwise; large disjoint outputs are split across the pool.
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "kernels.h"
#include "simd.h"
#include "strided.h"
#include "thread-pool.h"

namespace rlvr {
namespace {

constexpr long kChunk = 1L << 14;  // elements per parallel chunk for flat maps
constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluC = 0.044715f;

// Runs body(begin, end) over [0, n), in parallel when n is large enough to pay for it.
template <class F>
void flat(long n, long minParallel, F&& body) {
  if (n >= minParallel) parallelFor(n, kChunk, [&](long b, long e, int) { body(b, e); });
  else body(0, n);
}

// Applies a vector function to [b, e): full vectors, then the tail through an 8-float buffer.
template <class V>
inline void map1(const float* x, float* out, long b, long e, V&& f) {
  long i = b;
  for (; i + 8 <= e; i += 8) _mm256_storeu_ps(out + i, f(_mm256_loadu_ps(x + i)));
  if (i < e) {
    alignas(32) float t[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    std::memcpy(t, x + i, sizeof(float) * (e - i));
    _mm256_store_ps(t, f(_mm256_load_ps(t)));
    std::memcpy(out + i, t, sizeof(float) * (e - i));
  }
}

// dx[i] += g(x, y, dy) over [b, e).
template <class V>
inline void map3acc(const float* x, const float* y, const float* dy, float* dx, long b, long e, V&& g) {
  long i = b;
  for (; i + 8 <= e; i += 8) {
    __m256 r = g(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), _mm256_loadu_ps(dy + i));
    _mm256_storeu_ps(dx + i, _mm256_add_ps(_mm256_loadu_ps(dx + i), r));
  }
  if (i < e) {
    long n = e - i;
    alignas(32) float tx[8] = {0}, ty[8] = {0}, td[8] = {0}, r[8];
    std::memcpy(tx, x + i, sizeof(float) * n);
    std::memcpy(ty, y + i, sizeof(float) * n);
    std::memcpy(td, dy + i, sizeof(float) * n);
    _mm256_store_ps(r, g(_mm256_load_ps(tx), _mm256_load_ps(ty), _mm256_load_ps(td)));
    for (long j = 0; j < n; j++) dx[i + j] += r[j];
  }
}

inline __m256 set1(float v) { return _mm256_set1_ps(v); }

inline __m256 geluVec(__m256 x) {
  // 0.5 * (1 + tanh(u)) = sigmoid(2u): no cancellation for negative x.
  __m256 x3 = _mm256_mul_ps(_mm256_mul_ps(x, x), x);
  __m256 u = _mm256_mul_ps(set1(kSqrt2OverPi), _mm256_fmadd_ps(set1(kGeluC), x3, x));
  return _mm256_mul_ps(x, sigmoid8(_mm256_add_ps(u, u)));
}

inline __m256 geluGradVec(__m256 x) {
  __m256 x2 = _mm256_mul_ps(x, x);
  __m256 u = _mm256_mul_ps(set1(kSqrt2OverPi), _mm256_fmadd_ps(_mm256_mul_ps(set1(kGeluC), x2), x, x));
  __m256 s = sigmoid8(_mm256_add_ps(u, u));  // 0.5 * (1 + t); (1 - t^2) = 4 s (1 - s)
  __m256 du = _mm256_mul_ps(set1(kSqrt2OverPi), _mm256_fmadd_ps(set1(3.0f * kGeluC), x2, set1(1.0f)));
  __m256 oneMinusT2 = _mm256_mul_ps(_mm256_mul_ps(set1(4.0f), s), _mm256_sub_ps(set1(1.0f), s));
  return _mm256_fmadd_ps(_mm256_mul_ps(set1(0.5f), x), _mm256_mul_ps(oneMinusT2, du), s);
}

inline __m256 absVec(__m256 x) { return _mm256_andnot_ps(set1(-0.0f), x); }

inline __m256 maxNan(__m256 a, __m256 b) {  // Math.max: NaN if either is NaN
  return _mm256_blendv_ps(_mm256_max_ps(a, b), a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
}
inline __m256 minNan(__m256 a, __m256 b) {
  return _mm256_blendv_ps(_mm256_min_ps(a, b), a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
}

template <int OP>
inline __m256 binVec(__m256 a, __m256 b) {
  if constexpr (OP == kAdd) return _mm256_add_ps(a, b);
  else if constexpr (OP == kSub) return _mm256_sub_ps(a, b);
  else if constexpr (OP == kMul) return _mm256_mul_ps(a, b);
  else if constexpr (OP == kDiv) return _mm256_div_ps(a, b);
  else if constexpr (OP == kMaximum) return maxNan(a, b);
  else return minNan(a, b);
}

template <int OP>
inline float binScalar(float a, float b) {
  if constexpr (OP == kAdd) return a + b;
  else if constexpr (OP == kSub) return a - b;
  else if constexpr (OP == kMul) return a * b;
  else if constexpr (OP == kDiv) return a / b;
  else if constexpr (OP == kMaximum) return (a != a || b != b) ? NAN : (a > b ? a : b);
  else return (a != a || b != b) ? NAN : (a < b ? a : b);
}

template <int OP>
void binaryRow(const float* a, long ia, const float* b, long ib, float* o, long n) {
  long j = 0;
  if (ia == 1 && ib == 1) {
    for (; j + 8 <= n; j += 8) _mm256_storeu_ps(o + j, binVec<OP>(_mm256_loadu_ps(a + j), _mm256_loadu_ps(b + j)));
  } else if (ia == 1 && ib == 0) {
    __m256 bv = _mm256_set1_ps(*b);
    for (; j + 8 <= n; j += 8) _mm256_storeu_ps(o + j, binVec<OP>(_mm256_loadu_ps(a + j), bv));
  } else if (ia == 0 && ib == 1) {
    __m256 av = _mm256_set1_ps(*a);
    for (; j + 8 <= n; j += 8) _mm256_storeu_ps(o + j, binVec<OP>(av, _mm256_loadu_ps(b + j)));
  }
  for (; j < n; j++) o[j] = binScalar<OP>(a[j * ia], b[j * ib]);
}

template <int OP>
void binaryT(const float* a, const float* b, float* out, const Strided& s) {
  s.walkAll(true, [&](const long* off, long n, const long* is) { binaryRow<OP>(a + off[0], is[0], b + off[1], is[1], out + off[2], n); });
}

// d(a op b)/da and /db for one element, given upstream g.
template <int OP>
inline void binGrad(float a, float b, float g, float& ga, float& gb) {
  if constexpr (OP == kAdd) { ga = g; gb = g; }
  else if constexpr (OP == kSub) { ga = g; gb = -g; }
  else if constexpr (OP == kMul) { ga = g * b; gb = g * a; }
  else if constexpr (OP == kDiv) { ga = g / b; gb = -(g * a) / (b * b); }
  else {
    bool aWins = OP == kMaximum ? a > b : a < b;
    float wa = a == b ? 0.5f : (aWins ? 1.0f : 0.0f);
    ga = g * wa;
    gb = g * (1.0f - wa);
  }
}

template <int OP>
inline void binGradVec(__m256 a, __m256 b, __m256 g, __m256& ga, __m256& gb) {
  if constexpr (OP == kAdd) { ga = g; gb = g; }
  else if constexpr (OP == kSub) { ga = g; gb = _mm256_sub_ps(_mm256_setzero_ps(), g); }
  else if constexpr (OP == kMul) { ga = _mm256_mul_ps(g, b); gb = _mm256_mul_ps(g, a); }
  else if constexpr (OP == kDiv) {
    ga = _mm256_div_ps(g, b);
    gb = _mm256_sub_ps(_mm256_setzero_ps(), _mm256_div_ps(_mm256_mul_ps(g, a), _mm256_mul_ps(b, b)));
  } else {
    __m256 aWins = _mm256_cmp_ps(a, b, OP == kMaximum ? _CMP_GT_OQ : _CMP_LT_OQ);
    __m256 tie = _mm256_cmp_ps(a, b, _CMP_EQ_OQ);
    __m256 wa = _mm256_blendv_ps(_mm256_and_ps(aWins, set1(1.0f)), set1(0.5f), tie);
    ga = _mm256_mul_ps(g, wa);
    gb = _mm256_mul_ps(g, _mm256_sub_ps(set1(1.0f), wa));
  }
}

template <int OP>
void binaryBackwardRow(const float* a, long ia, const float* b, long ib, const float* dy, float* da, float* db, long n) {
  long j = 0;
  if ((ia == 1 || ia == 0) && (ib == 1 || ib == 0) && !(ia == 0 && ib == 0)) {
    __m256 accA = _mm256_setzero_ps(), accB = _mm256_setzero_ps();
    __m256 av = _mm256_set1_ps(*a), bv = _mm256_set1_ps(*b);
    for (; j + 8 <= n; j += 8) {
      __m256 x = ia ? _mm256_loadu_ps(a + j) : av;
      __m256 y = ib ? _mm256_loadu_ps(b + j) : bv;
      __m256 ga, gb;
      binGradVec<OP>(x, y, _mm256_loadu_ps(dy + j), ga, gb);
      if (da) {
        if (ia) _mm256_storeu_ps(da + j, _mm256_add_ps(_mm256_loadu_ps(da + j), ga));
        else accA = _mm256_add_ps(accA, ga);
      }
      if (db) {
        if (ib) _mm256_storeu_ps(db + j, _mm256_add_ps(_mm256_loadu_ps(db + j), gb));
        else accB = _mm256_add_ps(accB, gb);
      }
    }
    if (da && !ia) *da += hsum(accA);
    if (db && !ib) *db += hsum(accB);
  }
  for (; j < n; j++) {
    float ga, gb;
    binGrad<OP>(a[j * ia], b[j * ib], dy[j], ga, gb);
    if (da) da[j * ia] += ga;
    if (db) db[j * ib] += gb;
  }
}

template <int OP>
void binaryBackwardT(const float* a, const float* b, const float* dy, float* da, float* db, const Strided& s) {
  s.walkAll(false, [&](const long* off, long n, const long* is) {
    binaryBackwardRow<OP>(a + off[0], is[0], b + off[1], is[1], dy + off[2], da ? da + off[0] : nullptr,
                          db ? db + off[1] : nullptr, n);
  });
}

// Contiguous strides of a shape, as int32 (the binding passes shapes that fit int32 element counts).
void contiguous(const int32_t* shape, int rank, int32_t* out) {
  long acc = 1;
  for (int d = rank - 1; d >= 0; d--) {
    out[d] = static_cast<int32_t>(acc);
    acc *= shape[d];
  }
}

const char* kRankError = "rank exceeds 16";

}  // namespace

void unary(int op, const float* x, float* out, long n) {
  auto run = [&](auto f, long minPar) { flat(n, minPar, [&](long b, long e) { map1(x, out, b, e, f); }); };
  const long cheap = 1L << 18, costly = 1L << 15;
  switch (op) {
    case kNeg: run([](__m256 v) { return _mm256_sub_ps(_mm256_setzero_ps(), v); }, cheap); break;
    case kExp: run([](__m256 v) { return exp8(v); }, costly); break;
    case kLog: run([](__m256 v) { return log8(v); }, costly); break;
    case kSqrt: run([](__m256 v) { return _mm256_sqrt_ps(v); }, costly); break;
    case kRsqrt: run([](__m256 v) { return _mm256_div_ps(set1(1.0f), _mm256_sqrt_ps(v)); }, costly); break;
    case kTanh: run([](__m256 v) { return tanh8(v); }, costly); break;
    case kGelu: run([](__m256 v) { return geluVec(v); }, costly); break;
    case kSilu: run([](__m256 v) { return _mm256_mul_ps(v, sigmoid8(v)); }, costly); break;
    case kRelu: run([](__m256 v) { return _mm256_and_ps(v, _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_GT_OQ)); }, cheap); break;
    case kAbs: run([](__m256 v) { return absVec(v); }, cheap); break;
    case kSigmoid: run([](__m256 v) { return sigmoid8(v); }, costly); break;
  }
}

void unaryBackward(int op, const float* x, const float* y, const float* dy, float* dx, long n) {
  auto run = [&](auto g, long minPar) { flat(n, minPar, [&](long b, long e) { map3acc(x, y, dy, dx, b, e, g); }); };
  const long cheap = 1L << 18, costly = 1L << 15;
  switch (op) {
    case kNeg: run([](__m256, __m256, __m256 d) { return _mm256_sub_ps(_mm256_setzero_ps(), d); }, cheap); break;
    case kExp: run([](__m256, __m256 v, __m256 d) { return _mm256_mul_ps(d, v); }, cheap); break;
    case kLog: run([](__m256 u, __m256, __m256 d) { return _mm256_div_ps(d, u); }, cheap); break;
    case kSqrt: run([](__m256, __m256 v, __m256 d) { return _mm256_div_ps(_mm256_mul_ps(d, set1(0.5f)), v); }, cheap); break;
    case kRsqrt:
      run([](__m256, __m256 v, __m256 d) { return _mm256_mul_ps(_mm256_mul_ps(d, set1(-0.5f)), _mm256_mul_ps(_mm256_mul_ps(v, v), v)); }, cheap);
      break;
    case kTanh: run([](__m256, __m256 v, __m256 d) { return _mm256_mul_ps(d, _mm256_fnmadd_ps(v, v, set1(1.0f))); }, cheap); break;
    case kGelu: run([](__m256 u, __m256, __m256 d) { return _mm256_mul_ps(d, geluGradVec(u)); }, costly); break;
    case kSilu:
      run([](__m256 u, __m256, __m256 d) {
        __m256 s = sigmoid8(u);
        return _mm256_mul_ps(_mm256_mul_ps(d, s), _mm256_fmadd_ps(u, _mm256_sub_ps(set1(1.0f), s), set1(1.0f)));
      }, costly);
      break;
    case kRelu: run([](__m256 u, __m256, __m256 d) { return _mm256_and_ps(d, _mm256_cmp_ps(u, _mm256_setzero_ps(), _CMP_GT_OQ)); }, cheap); break;
    case kAbs:
      run([](__m256 u, __m256, __m256 d) {
        __m256 pos = _mm256_and_ps(d, _mm256_cmp_ps(u, _mm256_setzero_ps(), _CMP_GT_OQ));
        __m256 neg = _mm256_and_ps(d, _mm256_cmp_ps(u, _mm256_setzero_ps(), _CMP_LT_OQ));
        return _mm256_sub_ps(pos, neg);
      }, cheap);
      break;
    case kSigmoid:
      run([](__m256, __m256 v, __m256 d) { return _mm256_mul_ps(_mm256_mul_ps(d, v), _mm256_sub_ps(set1(1.0f), v)); }, cheap);
      break;
  }
}

void powScalar(const float* x, double p, float* out, long n) {
  if (p == 2.0) {
    flat(n, 1L << 18, [&](long b, long e) { map1(x, out, b, e, [](__m256 v) { return _mm256_mul_ps(v, v); }); });
  } else if (p == 1.0) {
    std::memmove(out, x, sizeof(float) * n);
  } else if (p == 0.5) {
    flat(n, 1L << 16, [&](long b, long e) { map1(x, out, b, e, [](__m256 v) { return _mm256_sqrt_ps(v); }); });
  } else {
    flat(n, 1L << 14, [&](long b, long e) {
      for (long i = b; i < e; i++) out[i] = static_cast<float>(std::pow(static_cast<double>(x[i]), p));
    });
  }
}

void affine(const float* x, float s, float t, float* out, long n) {
  __m256 sv = set1(s), tv = set1(t);
  flat(n, 1L << 18, [&](long b, long e) {
    long i = b;
    for (; i + 8 <= e; i += 8) _mm256_storeu_ps(out + i, _mm256_fmadd_ps(_mm256_loadu_ps(x + i), sv, tv));
    for (; i < e; i++) out[i] = std::fma(x[i], s, t);
  });
}

void axpy(float alpha, const float* x, float* y, long n) {
  __m256 av = set1(alpha);
  flat(n, 1L << 18, [&](long b, long e) {
    long i = b;
    for (; i + 8 <= e; i += 8) _mm256_storeu_ps(y + i, _mm256_fmadd_ps(av, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    for (; i < e; i++) y[i] = std::fma(alpha, x[i], y[i]);
  });
}

const char* binary(int op, const float* a, const int32_t* sa, const float* b, const int32_t* sb, float* out,
                   const int32_t* shape, int rank) {
  if (rank > kMaxDims) return kRankError;
  int32_t so[kMaxDims];
  contiguous(shape, rank, so);
  const int32_t* st[3] = {sa, sb, so};
  Strided s;
  s.init(shape, rank, st, 3);
  switch (op) {
    case kAdd: binaryT<kAdd>(a, b, out, s); break;
    case kSub: binaryT<kSub>(a, b, out, s); break;
    case kMul: binaryT<kMul>(a, b, out, s); break;
    case kDiv: binaryT<kDiv>(a, b, out, s); break;
    case kMaximum: binaryT<kMaximum>(a, b, out, s); break;
    case kMinimum: binaryT<kMinimum>(a, b, out, s); break;
  }
  return nullptr;
}

const char* binaryBackward(int op, const float* a, const int32_t* sa, const float* b, const int32_t* sb, const float* dy,
                           float* da, float* db, const int32_t* shape, int rank) {
  if (rank > kMaxDims) return kRankError;
  int32_t so[kMaxDims];
  contiguous(shape, rank, so);
  const int32_t* st[3] = {sa, sb, so};
  Strided s;
  s.init(shape, rank, st, 3);
  switch (op) {
    case kAdd: binaryBackwardT<kAdd>(a, b, dy, da, db, s); break;
    case kSub: binaryBackwardT<kSub>(a, b, dy, da, db, s); break;
    case kMul: binaryBackwardT<kMul>(a, b, dy, da, db, s); break;
    case kDiv: binaryBackwardT<kDiv>(a, b, dy, da, db, s); break;
    case kMaximum: binaryBackwardT<kMaximum>(a, b, dy, da, db, s); break;
    case kMinimum: binaryBackwardT<kMinimum>(a, b, dy, da, db, s); break;
  }
  return nullptr;
}

const char* where(const float* cond, const int32_t* sc, const float* a, const int32_t* sa, const float* b,
                  const int32_t* sb, float* out, const int32_t* shape, int rank) {
  if (rank > kMaxDims) return kRankError;
  int32_t so[kMaxDims];
  contiguous(shape, rank, so);
  const int32_t* st[4] = {sc, sa, sb, so};
  Strided s;
  s.init(shape, rank, st, 4);
  s.walkAll(true, [&](const long* off, long n, const long* is) {
    const float *c = cond + off[0], *x = a + off[1], *y = b + off[2];
    float* o = out + off[3];
    long j = 0;
    if (is[0] == 1 && is[1] == 1 && is[2] == 1) {
      for (; j + 8 <= n; j += 8) {
        __m256 keepB = _mm256_cmp_ps(_mm256_loadu_ps(c + j), _mm256_setzero_ps(), _CMP_EQ_OQ);
        _mm256_storeu_ps(o + j, _mm256_blendv_ps(_mm256_loadu_ps(x + j), _mm256_loadu_ps(y + j), keepB));
      }
    }
    for (; j < n; j++) o[j] = c[j * is[0]] != 0.0f ? x[j * is[1]] : y[j * is[2]];
  });
  return nullptr;
}

const char* stridedCopy(const float* x, const int32_t* sx, float* out, const int32_t* so, const int32_t* shape, int rank,
                        bool accumulate) {
  if (rank > kMaxDims) return kRankError;
  const int32_t* st[2] = {sx, so};
  Strided s;
  s.init(shape, rank, st, 2);
  bool disjoint = true;
  for (int d = 0; d < s.nd; d++) disjoint = disjoint && s.st[1][d] != 0;
  s.walkAll(disjoint, [&](const long* off, long n, const long* is) {
    const float* src = x + off[0];
    float* dst = out + off[1];
    const long ix = is[0], io = is[1];
    if (accumulate) {
      if (io == 0) {
        float acc = 0.0f;
        long j = 0;
        if (ix == 1) {
          __m256 v = _mm256_setzero_ps();
          for (; j + 8 <= n; j += 8) v = _mm256_add_ps(v, _mm256_loadu_ps(src + j));
          acc = hsum(v);
        }
        for (; j < n; j++) acc += src[j * ix];
        *dst += acc;
      } else if (ix == 1 && io == 1) {
        long j = 0;
        for (; j + 8 <= n; j += 8) _mm256_storeu_ps(dst + j, _mm256_add_ps(_mm256_loadu_ps(dst + j), _mm256_loadu_ps(src + j)));
        for (; j < n; j++) dst[j] += src[j];
      } else {
        for (long j = 0; j < n; j++) dst[j * io] += src[j * ix];
      }
    } else if (ix == 1 && io == 1) {
      std::memcpy(dst, src, sizeof(float) * n);
    } else if (ix == 0) {
      for (long j = 0; j < n; j++) dst[j * io] = *src;
    } else {
      for (long j = 0; j < n; j++) dst[j * io] = src[j * ix];
    }
  });
  return nullptr;
}

}  // namespace rlvr
