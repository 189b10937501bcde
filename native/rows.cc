// Row-wise kernels over (rows, cols) matrices: sum/max reductions, softmax and log-softmax with gradients,
// fused cross-entropy, LayerNorm and RMSNorm with gradients. Rows are independent, so large inputs are split
// across the pool by rows; the weight gradients of the norms are reduced from per-chunk partial sums.
#include <immintrin.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels.h"
#include "scratch.h"
#include "simd.h"
#include "thread-pool.h"

namespace rlvr {
namespace {

// Runs body(r0, r1) over row ranges, in parallel when the matrix is large.
template <class F>
void byRows(long rows, long cols, F&& body) {
  long total = rows * cols;
  if (total >= (1L << 15) && rows > 1) {
    long grain = std::max<long>(1, (1L << 13) / std::max<long>(cols, 1));
    parallelFor(rows, grain, [&](long b, long e, int) { body(b, e); });
  } else {
    body(0, rows);
  }
}

inline float rowSum(const float* x, long n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0;
  long j = 0;
  for (; j + 16 <= n; j += 16) {
    a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + j));
    a1 = _mm256_add_ps(a1, _mm256_loadu_ps(x + j + 8));
  }
  for (; j + 8 <= n; j += 8) a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + j));
  float s = hsum(_mm256_add_ps(a0, a1));
  for (; j < n; j++) s += x[j];
  return s;
}

inline float rowDot(const float* x, const float* y, long n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0;
  long j = 0;
  for (; j + 16 <= n; j += 16) {
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + j), _mm256_loadu_ps(y + j), a0);
    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + j + 8), _mm256_loadu_ps(y + j + 8), a1);
  }
  for (; j + 8 <= n; j += 8) a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + j), _mm256_loadu_ps(y + j), a0);
  float s = hsum(_mm256_add_ps(a0, a1));
  for (; j < n; j++) s += x[j] * y[j];
  return s;
}

// Max of a row; NaN if any element is NaN (matches the js `>`/NaN rule used by softmax: NaN poisons the row).
inline float rowMax(const float* x, long n) {
  __m256 m = _mm256_set1_ps(-INFINITY), nan = _mm256_setzero_ps();
  long j = 0;
  for (; j + 8 <= n; j += 8) {
    __m256 v = _mm256_loadu_ps(x + j);
    m = _mm256_max_ps(m, v);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
  float r = hmax(m);
  bool anyNan = _mm256_movemask_ps(nan) != 0;
  for (; j < n; j++) {
    if (x[j] != x[j]) anyNan = true;
    else if (x[j] > r) r = x[j];
  }
  return anyNan ? NAN : r;
}

// out[j] = exp(x[j] - mx); returns the sum.
inline float expShiftSum(const float* x, float mx, float* out, long n) {
  __m256 mv = _mm256_set1_ps(mx), acc = _mm256_setzero_ps();
  long j = 0;
  for (; j + 8 <= n; j += 8) {
    __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + j), mv));
    _mm256_storeu_ps(out + j, e);
    acc = _mm256_add_ps(acc, e);
  }
  float s = hsum(acc);
  if (j < n) {
    alignas(32) float t[8];
    for (int q = 0; q < 8; q++) t[q] = j + q < n ? x[j + q] - mx : -INFINITY;
    _mm256_store_ps(t, exp8(_mm256_load_ps(t)));
    for (long q = 0; j + q < n; q++) {
      out[j + q] = t[q];
      s += t[q];
    }
  }
  return s;
}

// sum_j exp(x[j] - mx) without storing.
inline float expShiftSumOnly(const float* x, float mx, long n) {
  __m256 mv = _mm256_set1_ps(mx), acc = _mm256_setzero_ps();
  long j = 0;
  for (; j + 8 <= n; j += 8) acc = _mm256_add_ps(acc, exp8(_mm256_sub_ps(_mm256_loadu_ps(x + j), mv)));
  float s = hsum(acc);
  if (j < n) {
    alignas(32) float t[8];
    for (int q = 0; q < 8; q++) t[q] = j + q < n ? x[j + q] - mx : -INFINITY;
    __m256 e = exp8(_mm256_load_ps(t));
    _mm256_store_ps(t, e);
    for (long q = 0; j + q < n; q++) s += t[q];
  }
  return s;
}

inline void scaleRow(float* x, float s, long n) {
  __m256 sv = _mm256_set1_ps(s);
  long j = 0;
  for (; j + 8 <= n; j += 8) _mm256_storeu_ps(x + j, _mm256_mul_ps(_mm256_loadu_ps(x + j), sv));
  for (; j < n; j++) x[j] *= s;
}

// Log-sum-exp of a row (-inf for an all -inf row).
inline float rowLse(const float* x, long n) {
  float mx = rowMax(x, n);
  if (mx == -INFINITY) return -INFINITY;
  if (mx != mx) return NAN;
  return mx + std::log(expShiftSumOnly(x, mx, n));
}

thread_local Scratch tlPartial;

}  // namespace

void sumRows(const float* x, float* out, long rows, long cols) {
  byRows(rows, cols, [&](long r0, long r1) {
    for (long r = r0; r < r1; r++) out[r] = rowSum(x + r * cols, cols);
  });
}

void maxRows(const float* x, float* out, int32_t* argmax, long rows, long cols) {
  byRows(rows, cols, [&](long r0, long r1) {
    for (long r = r0; r < r1; r++) {
      const float* row = x + r * cols;
      float best = row[0];
      long arg = 0;
      if (best == best) {
        float mx = rowMax(row, cols);
        if (mx != mx) {  // first NaN wins
          for (long c = 1; c < cols; c++)
            if (row[c] != row[c]) { arg = c; break; }
          best = NAN;
        } else {
          best = mx;
          for (long c = 0; c < cols; c++)
            if (row[c] == mx) { arg = c; break; }
        }
      }
      out[r] = best;
      argmax[r] = static_cast<int32_t>(arg);
    }
  });
}

void softmax(const float* x, float* out, long rows, long cols) {
  byRows(rows, cols, [&](long r0, long r1) {
    for (long r = r0; r < r1; r++) {
      const float* xr = x + r * cols;
      float* o = out + r * cols;
      float mx = rowMax(xr, cols);
      if (mx == -INFINITY) {
        std::memset(o, 0, sizeof(float) * cols);
        continue;
      }
      float s = expShiftSum(xr, mx, o, cols);
      scaleRow(o, 1.0f / s, cols);
    }
  });
}

void softmaxBackward(const float* y, const float* dy, float* dx, long rows, long cols) {
  byRows(rows, cols, [&](long r0, long r1) {
    for (long r = r0; r < r1; r++) {
      const float *yr = y + r * cols, *g = dy + r * cols;
      float* d = dx + r * cols;
      __m256 dot = _mm256_set1_ps(rowDot(g, yr, cols));
      long j = 0;
      for (; j + 8 <= cols; j += 8) {
        __m256 t = _mm256_mul_ps(_mm256_loadu_ps(yr + j), _mm256_sub_ps(_mm256_loadu_ps(g + j), dot));
        _mm256_storeu_ps(d + j, _mm256_add_ps(_mm256_loadu_ps(d + j), t));
      }
      float ds = _mm256_cvtss_f32(dot);
      for (; j < cols; j++) d[j] += yr[j] * (g[j] - ds);
    }
  });
}

void logSoftmax(const float* x, float* out, long rows, long cols) {
  byRows(rows, cols, [&](long r0, long r1) {
    for (long r = r0; r < r1; r++) {
      const float* xr = x + r * cols;
      float* o = out + r * cols;
      __m256 l = _mm256_set1_ps(rowLse(xr, cols));
      long j = 0;
      for (; j + 8 <= cols; j += 8) _mm256_storeu_ps(o + j, _mm256_sub_ps(_mm256_loadu_ps(xr + j), l));
      float ls = _mm256_cvtss_f32(l);
      for (; j < cols; j++) o[j] = xr[j] - ls;
    }
  });
}

void logSoftmaxBackward(const float* y, const float* dy, float* dx, long rows, long cols) {
  byRows(rows, cols, [&](long r0, long r1) {
    for (long r = r0; r < r1; r++) {
      const float *yr = y + r * cols, *g = dy + r * cols;
      float* d = dx + r * cols;
      float s = rowSum(g, cols);
      __m256 sv = _mm256_set1_ps(s);
      long j = 0;
      for (; j + 8 <= cols; j += 8) {
        __m256 t = _mm256_fnmadd_ps(exp8(_mm256_loadu_ps(yr + j)), sv, _mm256_loadu_ps(g + j));
        _mm256_storeu_ps(d + j, _mm256_add_ps(_mm256_loadu_ps(d + j), t));
      }
      for (; j < cols; j++) d[j] += g[j] - std::exp(yr[j]) * s;
    }
  });
}

const char* crossEntropy(const float* logits, const int32_t* targets, float* loss, float* lse, long rows, long cols,
                         int32_t ignoreIndex) {
  for (long r = 0; r < rows; r++) {
    int32_t t = targets[r];
    if (t != ignoreIndex && (t < 0 || t >= cols)) return "crossEntropy: target id out of range [0, cols)";
  }
  byRows(rows, cols, [&](long r0, long r1) {
    for (long r = r0; r < r1; r++) {
      const float* xr = logits + r * cols;
      float l = rowLse(xr, cols);
      lse[r] = l;
      int32_t t = targets[r];
      loss[r] = t == ignoreIndex ? 0.0f : l - xr[t];
    }
  });
  return nullptr;
}

const char* crossEntropyBackward(const float* logits, const int32_t* targets, const float* lse, const float* dloss,
                                 float* dlogits, long rows, long cols, int32_t ignoreIndex) {
  for (long r = 0; r < rows; r++) {
    int32_t t = targets[r];
    if (t != ignoreIndex && (t < 0 || t >= cols)) return "crossEntropyBackward: target id out of range [0, cols)";
  }
  byRows(rows, cols, [&](long r0, long r1) {
    for (long r = r0; r < r1; r++) {
      int32_t t = targets[r];
      if (t == ignoreIndex) continue;
      float g = dloss[r];
      if (g == 0.0f) continue;
      const float* xr = logits + r * cols;
      float* d = dlogits + r * cols;
      __m256 gv = _mm256_set1_ps(g), lv = _mm256_set1_ps(lse[r]);
      long j = 0;
      for (; j + 8 <= cols; j += 8) {
        __m256 p = exp8(_mm256_sub_ps(_mm256_loadu_ps(xr + j), lv));
        _mm256_storeu_ps(d + j, _mm256_fmadd_ps(gv, p, _mm256_loadu_ps(d + j)));
      }
      for (; j < cols; j++) d[j] += g * std::exp(xr[j] - lse[r]);
      d[t] -= g;
    }
  });
  return nullptr;
}

void layerNorm(const float* x, const float* w, const float* b, float* out, float* mean, float* rstd, long rows, long cols,
               float eps) {
  byRows(rows, cols, [&](long r0, long r1) {
    for (long r = r0; r < r1; r++) {
      const float* xr = x + r * cols;
      float* o = out + r * cols;
      float mu = rowSum(xr, cols) / static_cast<float>(cols);
      __m256 mv = _mm256_set1_ps(mu), acc = _mm256_setzero_ps();
      long j = 0;
      for (; j + 8 <= cols; j += 8) {
        __m256 d = _mm256_sub_ps(_mm256_loadu_ps(xr + j), mv);
        acc = _mm256_fmadd_ps(d, d, acc);
      }
      double var = hsum(acc);
      for (; j < cols; j++) var += (xr[j] - mu) * (xr[j] - mu);
      float rs = static_cast<float>(1.0 / std::sqrt(var / cols + eps));
      mean[r] = mu;
      rstd[r] = rs;
      __m256 rv = _mm256_set1_ps(rs);
      j = 0;
      for (; j + 8 <= cols; j += 8) {
        __m256 y = _mm256_mul_ps(_mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(xr + j), mv), rv), _mm256_loadu_ps(w + j));
        if (b) y = _mm256_add_ps(y, _mm256_loadu_ps(b + j));
        _mm256_storeu_ps(o + j, y);
      }
      for (; j < cols; j++) o[j] = (xr[j] - mu) * rs * w[j] + (b ? b[j] : 0.0f);
    }
  });
}

// Norm backwards: dx rows are independent; dw/db are summed over rows, so each chunk of rows accumulates into
// its own partial buffer and the partials are added at the end (in chunk order, so results are deterministic).
template <class RowFn>
void normBackward(long rows, long cols, float* dw, float* db, RowFn&& rowFn) {
  const long grain = std::max<long>(8, (1L << 13) / std::max<long>(cols, 1));
  const long chunks = (rows + grain - 1) / grain;
  const long width = db ? 2 * cols : cols;
  if (chunks <= 1 || rows * cols < (1L << 15)) {
    rowFn(0, rows, dw, db);
    return;
  }
  float* partial = tlPartial.get(chunks * width);
  std::memset(partial, 0, sizeof(float) * chunks * width);
  parallelFor(rows, grain, [&](long b, long e, int) {
    float* p = partial + (b / grain) * width;
    rowFn(b, e, p, db ? p + cols : nullptr);
  });
  for (long c = 0; c < chunks; c++) {
    const float* p = partial + c * width;
    for (long j = 0; j < cols; j++) dw[j] += p[j];
    if (db)
      for (long j = 0; j < cols; j++) db[j] += p[cols + j];
  }
}

void layerNormBackward(const float* x, const float* w, const float* mean, const float* rstd, const float* dy, float* dx,
                       float* dw, float* db, long rows, long cols) {
  normBackward(rows, cols, dw, db, [&](long r0, long r1, float* gw, float* gb) {
    const float invC = 1.0f / static_cast<float>(cols);
    for (long r = r0; r < r1; r++) {
      const float *xr = x + r * cols, *g = dy + r * cols;
      float* d = dx + r * cols;
      __m256 mv = _mm256_set1_ps(mean[r]), rv = _mm256_set1_ps(rstd[r]);
      __m256 sg = _mm256_setzero_ps(), sgx = _mm256_setzero_ps();
      long j = 0;
      for (; j + 8 <= cols; j += 8) {
        __m256 xh = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(xr + j), mv), rv);
        __m256 gy = _mm256_loadu_ps(g + j);
        __m256 gg = _mm256_mul_ps(gy, _mm256_loadu_ps(w + j));
        sg = _mm256_add_ps(sg, gg);
        sgx = _mm256_fmadd_ps(gg, xh, sgx);
        _mm256_storeu_ps(gw + j, _mm256_fmadd_ps(gy, xh, _mm256_loadu_ps(gw + j)));
        if (gb) _mm256_storeu_ps(gb + j, _mm256_add_ps(_mm256_loadu_ps(gb + j), gy));
      }
      float s1 = hsum(sg), s2 = hsum(sgx);
      const float mu = mean[r], rs = rstd[r];
      for (long q = j; q < cols; q++) {
        float xh = (xr[q] - mu) * rs, gg = g[q] * w[q];
        s1 += gg;
        s2 += gg * xh;
        gw[q] += g[q] * xh;
        if (gb) gb[q] += g[q];
      }
      s1 *= invC;
      s2 *= invC;
      __m256 s1v = _mm256_set1_ps(s1), s2v = _mm256_set1_ps(s2);
      j = 0;
      for (; j + 8 <= cols; j += 8) {
        __m256 xh = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(xr + j), mv), rv);
        __m256 gg = _mm256_mul_ps(_mm256_loadu_ps(g + j), _mm256_loadu_ps(w + j));
        __m256 t = _mm256_mul_ps(rv, _mm256_sub_ps(_mm256_sub_ps(gg, s1v), _mm256_mul_ps(xh, s2v)));
        _mm256_storeu_ps(d + j, _mm256_add_ps(_mm256_loadu_ps(d + j), t));
      }
      for (; j < cols; j++) {
        float xh = (xr[j] - mu) * rs;
        d[j] += rs * (g[j] * w[j] - s1 - xh * s2);
      }
    }
  });
}

void rmsNorm(const float* x, const float* w, float* out, float* rstd, long rows, long cols, float eps) {
  byRows(rows, cols, [&](long r0, long r1) {
    for (long r = r0; r < r1; r++) {
      const float* xr = x + r * cols;
      float* o = out + r * cols;
      double ss = rowDot(xr, xr, cols);
      float rs = static_cast<float>(1.0 / std::sqrt(ss / cols + eps));
      rstd[r] = rs;
      __m256 rv = _mm256_set1_ps(rs);
      long j = 0;
      for (; j + 8 <= cols; j += 8)
        _mm256_storeu_ps(o + j, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(xr + j), rv), _mm256_loadu_ps(w + j)));
      for (; j < cols; j++) o[j] = xr[j] * rs * w[j];
    }
  });
}

void rmsNormBackward(const float* x, const float* w, const float* rstd, const float* dy, float* dx, float* dw, long rows,
                     long cols) {
  normBackward(rows, cols, dw, nullptr, [&](long r0, long r1, float* gw, float*) {
    const float invC = 1.0f / static_cast<float>(cols);
    for (long r = r0; r < r1; r++) {
      const float *xr = x + r * cols, *g = dy + r * cols;
      float* d = dx + r * cols;
      const float rs = rstd[r];
      __m256 rv = _mm256_set1_ps(rs), sgx = _mm256_setzero_ps();
      long j = 0;
      for (; j + 8 <= cols; j += 8) {
        __m256 xh = _mm256_mul_ps(_mm256_loadu_ps(xr + j), rv);
        __m256 gy = _mm256_loadu_ps(g + j);
        sgx = _mm256_fmadd_ps(_mm256_mul_ps(gy, _mm256_loadu_ps(w + j)), xh, sgx);
        _mm256_storeu_ps(gw + j, _mm256_fmadd_ps(gy, xh, _mm256_loadu_ps(gw + j)));
      }
      float s = hsum(sgx);
      for (long q = j; q < cols; q++) {
        float xh = xr[q] * rs;
        s += g[q] * w[q] * xh;
        gw[q] += g[q] * xh;
      }
      s *= invC;
      __m256 sv = _mm256_set1_ps(s);
      j = 0;
      for (; j + 8 <= cols; j += 8) {
        __m256 xh = _mm256_mul_ps(_mm256_loadu_ps(xr + j), rv);
        __m256 gg = _mm256_mul_ps(_mm256_loadu_ps(g + j), _mm256_loadu_ps(w + j));
        __m256 t = _mm256_mul_ps(rv, _mm256_fnmadd_ps(xh, sv, gg));
        _mm256_storeu_ps(d + j, _mm256_add_ps(_mm256_loadu_ps(d + j), t));
      }
      for (; j < cols; j++) d[j] += rs * (g[j] * w[j] - xr[j] * rs * s);
    }
  });
}

}  // namespace rlvr
