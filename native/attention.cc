// Rotary embeddings and causal scaled-dot-product attention (GQA, KV-cache offsets, padding mask) with its
// backward pass. Attention runs per (batch, head) on the packed GEMM (serial inside a parallel region):
// S = Q K^T, masked row softmax into the saved probs, O = P V. The backward pass works per (batch, kv-head)
// group so that the heads sharing a K/V block never write dk/dv concurrently.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels.h"
#include "matmul.h"
#include "scratch.h"
#include "simd.h"
#include "thread-pool.h"

namespace rlvr {
namespace {

thread_local Scratch tlTrig, tlDp;

// Masked, scaled softmax of one score row in place; returns false for a fully masked row (set to zeros).
inline void maskedSoftmaxRow(float* p, long tk, long limit, const float* maskRow, float scale) {
  float mx = -INFINITY;
  for (long j = 0; j < tk; j++) {
    bool masked = j > limit || (maskRow && maskRow[j] == 0.0f);
    float s = masked ? -INFINITY : p[j] * scale;
    p[j] = s;
    if (s > mx) mx = s;
  }
  if (mx == -INFINITY) {
    std::memset(p, 0, sizeof(float) * tk);
    return;
  }
  __m256 mv = _mm256_set1_ps(mx), acc = _mm256_setzero_ps();
  long j = 0;
  for (; j + 8 <= tk; j += 8) {
    __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(p + j), mv));
    _mm256_storeu_ps(p + j, e);
    acc = _mm256_add_ps(acc, e);
  }
  float sum = hsum(acc);
  for (; j < tk; j++) {
    float e = std::exp(p[j] - mx);
    p[j] = e;
    sum += e;
  }
  float inv = 1.0f / sum;
  __m256 iv = _mm256_set1_ps(inv);
  j = 0;
  for (; j + 8 <= tk; j += 8) _mm256_storeu_ps(p + j, _mm256_mul_ps(_mm256_loadu_ps(p + j), iv));
  for (; j < tk; j++) p[j] *= inv;
}

// C (m, n) with row stride ldc (+)= op(A) op(B), where A's rows (or columns when transposed) are lda apart and
// B's ldb apart.
GemmDesc desc(long m, long n, long k, const float* a, long lda, bool transA, const float* b, long ldb, bool transB, float* c,
              long ldc, bool acc) {
  return GemmDesc{m, n, k, a, transA ? 1 : lda, transA ? lda : 1, b, transB ? 1 : ldb, transB ? ldb : 1, c, ldc, acc};
}

// Query rows per block: a block only multiplies the keys its last row can see (causal), ~40% less work at
// tq = tk = 128 than the full square.
constexpr long kRowBlock = 32;

// Keys past the last unmasked one contribute nothing (probabilities 0): the decode cache masks its unused slots.
long keyEnd(const float* maskRow, long tk) {
  long e = tk;
  if (maskRow)
    while (e > 0 && maskRow[e - 1] == 0.0f) e--;
  return e;
}

// Head sizes up to 8 x this keep a one-row output in registers.
constexpr int kOneRowBlocks = 8;

// One query row against keys [0, kEnd) (a decoding step): P[j] = q . K_j four keys at a time, the masked softmax,
// then O = sum_j P[j] V_j as rows of V scaled and added. The packed-GEMM path would run two matrix-vector products
// with their per-call set-up for a few dozen keys; this reads K and V once each.
void attendOneRow(const float* Q, const float* K, const float* V, float* P, float* O, long d, long tk, long kEnd,
                  const float* maskRow, float scale) {
  const long d8 = d & ~7L;
  const __m256i tm = tailMask(d - d8);
  auto dot = [&](const float* kr, __m256 acc) {
    for (long p = 0; p < d8; p += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(Q + p), _mm256_loadu_ps(kr + p), acc);
    if (d8 < d) acc = _mm256_fmadd_ps(_mm256_maskload_ps(Q + d8, tm), _mm256_maskload_ps(kr + d8, tm), acc);
    return acc;
  };
  long j = 0;
  for (; j + 4 <= kEnd; j += 4) {
    __m256 s0 = dot(K + j * d, _mm256_setzero_ps()), s1 = dot(K + (j + 1) * d, _mm256_setzero_ps());
    __m256 s2 = dot(K + (j + 2) * d, _mm256_setzero_ps()), s3 = dot(K + (j + 3) * d, _mm256_setzero_ps());
    // four horizontal sums at once: pairwise hadds leave (s0, s1, s2, s3) in each 128-bit half
    __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(s0, s1), _mm256_hadd_ps(s2, s3));
    _mm_storeu_ps(P + j, _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
  }
  for (; j < kEnd; j++) P[j] = hsum(dot(K + j * d, _mm256_setzero_ps()));
  std::memset(P + kEnd, 0, sizeof(float) * (tk - kEnd));
  maskedSoftmaxRow(P, kEnd, kEnd - 1, maskRow, scale);
  if (d <= 8 * kOneRowBlocks) {  // O in registers: up to 64 values, the last block masked
    const long blocks = (d + 7) / 8;
    const __m256i last = tailMask(d - 8 * (blocks - 1));
    __m256 acc[kOneRowBlocks];
    for (int b = 0; b < kOneRowBlocks; b++) acc[b] = _mm256_setzero_ps();
    for (long jj = 0; jj < kEnd; jj++) {
      const __m256 pv = _mm256_set1_ps(P[jj]);
      const float* vr = V + jj * d;
      for (int b = 0; b < kOneRowBlocks; b++) {
        if (b + 1 < blocks) acc[b] = _mm256_fmadd_ps(pv, _mm256_loadu_ps(vr + 8 * b), acc[b]);
        else if (b + 1 == blocks) acc[b] = _mm256_fmadd_ps(pv, _mm256_maskload_ps(vr + 8 * b, last), acc[b]);
      }
    }
    for (long b = 0; b < blocks; b++) _mm256_maskstore_ps(O + 8 * b, tailMask(std::min<long>(8, d - 8 * b)), acc[b]);
    return;
  }
  std::memset(O, 0, sizeof(float) * d);
  for (long jj = 0; jj < kEnd; jj++) {
    const float pj = P[jj];
    if (pj == 0.0f) continue;
    const __m256 pv = _mm256_set1_ps(pj);
    const float* vr = V + jj * d;
    long p = 0;
    for (; p < d8; p += 8) _mm256_storeu_ps(O + p, _mm256_fmadd_ps(pv, _mm256_loadu_ps(vr + p), _mm256_loadu_ps(O + p)));
    for (; p < d; p++) O[p] += pj * vr[p];
  }
}

}  // namespace

void rope(const float* x, float* out, long batchHeads, long t, long headDim, long posOffset, double theta, bool inverse) {
  const long half = headDim / 2;
  float* trig = tlTrig.get(2 * t * half + 1);
  float* cosT = trig;
  float* sinT = trig + t * half;
  for (long i = 0; i < half; i++) {
    double invFreq = std::pow(theta, (-2.0 * i) / headDim);
    for (long tt = 0; tt < t; tt++) {
      double ang = static_cast<double>(posOffset + tt) * invFreq;
      cosT[tt * half + i] = static_cast<float>(std::cos(ang));
      sinT[tt * half + i] = static_cast<float>(inverse ? -std::sin(ang) : std::sin(ang));
    }
  }
  auto body = [&](long r0, long r1) {
    for (long r = r0; r < r1; r++) {
      const long tt = r % t;
      const float* xr = x + r * headDim;
      float* o = out + r * headDim;
      const float *c = cosT + tt * half, *s = sinT + tt * half;
      long i = 0;
      for (; i + 8 <= half; i += 8) {
        __m256 x1 = _mm256_loadu_ps(xr + i), x2 = _mm256_loadu_ps(xr + i + half);
        __m256 cv = _mm256_loadu_ps(c + i), sv = _mm256_loadu_ps(s + i);
        _mm256_storeu_ps(o + i, _mm256_fmsub_ps(x1, cv, _mm256_mul_ps(x2, sv)));
        _mm256_storeu_ps(o + i + half, _mm256_fmadd_ps(x2, cv, _mm256_mul_ps(x1, sv)));
      }
      for (; i < half; i++) {
        float x1 = xr[i], x2 = xr[i + half];
        o[i] = x1 * c[i] - x2 * s[i];
        o[i + half] = x2 * c[i] + x1 * s[i];
      }
    }
  };
  const long rows = batchHeads * t;
  if (rows * headDim >= (1L << 15)) parallelFor(rows, std::max<long>(1, 4096 / std::max<long>(headDim, 1)), [&](long b, long e, int) { body(b, e); });
  else body(0, rows);
}

void attention(const float* q, const float* k, const float* v, float* out, float* probs, const float* mask,
               const AttnShape& s) {
  const long group = s.heads / s.kvHeads, d = s.headDim, tq = s.tq, tk = s.tk;
  auto item = [&](long bh) {
    const long b = bh / s.heads, h = bh % s.heads;
    const float* Q = q + bh * tq * d;
    const float* K = k + (b * s.kvHeads + h / group) * tk * d;
    const float* V = v + (b * s.kvHeads + h / group) * tk * d;
    float* P = probs + bh * tq * tk;
    float* O = out + bh * tq * d;
    const float* maskRow = mask ? mask + b * tk : nullptr;
    const long kMask = keyEnd(maskRow, tk);
    if (tq == 1 && kMask > 0) {  // one query sees every unmasked key, causal or not (its position is the last)
      attendOneRow(Q, K, V, P, O, d, tk, kMask, maskRow, s.scale);
      return;
    }
    for (long i0 = 0; i0 < tq; i0 += kRowBlock) {
      const long rows = std::min(kRowBlock, tq - i0);
      const long kEnd = s.causal ? std::min(kMask, tk - tq + i0 + rows) : kMask;
      float* Pb = P + i0 * tk;
      if (kEnd > 0) gemm(desc(rows, kEnd, d, Q + i0 * d, d, false, K, d, true, Pb, tk, false), false);  // S = Q K^T
      for (long i = 0; i < rows; i++) {
        float* row = Pb + i * tk;
        long limit = s.causal ? std::min(tk - 1, tk - tq + i0 + i) : tk - 1;
        limit = std::min(limit, kEnd - 1);
        std::memset(row + kEnd, 0, sizeof(float) * (tk - kEnd));
        maskedSoftmaxRow(row, kEnd, limit, maskRow, s.scale);
      }
      if (kEnd > 0) gemm(desc(rows, d, kEnd, Pb, tk, false, V, d, false, O + i0 * d, d, false), false);  // O = P V
      else std::memset(O + i0 * d, 0, sizeof(float) * rows * d);
    }
  };
  const long items = s.batch * s.heads;
  if (items > 1 && items * tq * tk * d >= (1L << 15)) {
    parallelFor(items, 1, [&](long b0, long e0, int) {
      for (long i = b0; i < e0; i++) item(i);
    });
  } else {
    for (long i = 0; i < items; i++) item(i);
  }
}

void attentionBackward(const float* q, const float* k, const float* v, const float* probs, const float* dout, float* dq,
                       float* dk, float* dv, const AttnShape& s) {
  const long group = s.heads / s.kvHeads, d = s.headDim, tq = s.tq, tk = s.tk;
  auto item = [&](long bg) {  // one (batch, kv head): all the query heads that read it
    const long b = bg / s.kvHeads, g = bg % s.kvHeads;
    const float* K = k + bg * tk * d;
    const float* V = v + bg * tk * d;
    float* dK = dk + bg * tk * d;
    float* dV = dv + bg * tk * d;
    float* dS = tlDp.get(kRowBlock * tk);
    for (long h = g * group; h < (g + 1) * group; h++) {
      const long bh = b * s.heads + h;
      for (long i0 = 0; i0 < tq; i0 += kRowBlock) {
        const long rows = std::min(kRowBlock, tq - i0);
        // Keys this block saw: causal limit of its last row; probabilities beyond are exactly 0.
        const long kEnd = s.causal ? tk - tq + i0 + rows : tk;
        if (kEnd <= 0) continue;
        const float* P = probs + (bh * tq + i0) * tk;
        const float* dO = dout + (bh * tq + i0) * d;
        const float* Q = q + (bh * tq + i0) * d;
        float* dQ = dq + (bh * tq + i0) * d;
        gemm(desc(kEnd, d, rows, P, tk, true, dO, d, false, dV, d, true), false);    // dV += P^T dO
        gemm(desc(rows, kEnd, d, dO, d, false, V, d, true, dS, kEnd, false), false);  // dP = dO V^T
        for (long i = 0; i < rows; i++) {  // dS = P * (dP - rowdot(dP, P)) * scale
          float* row = dS + i * kEnd;
          const float* pr = P + i * tk;
          __m256 acc = _mm256_setzero_ps();
          long j = 0;
          for (; j + 8 <= kEnd; j += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(row + j), _mm256_loadu_ps(pr + j), acc);
          float dot = hsum(acc);
          for (; j < kEnd; j++) dot += row[j] * pr[j];
          __m256 dv8 = _mm256_set1_ps(dot), sc = _mm256_set1_ps(s.scale);
          j = 0;
          for (; j + 8 <= kEnd; j += 8) {
            __m256 t = _mm256_mul_ps(_mm256_loadu_ps(pr + j), _mm256_sub_ps(_mm256_loadu_ps(row + j), dv8));
            _mm256_storeu_ps(row + j, _mm256_mul_ps(t, sc));
          }
          for (; j < kEnd; j++) row[j] = pr[j] * (row[j] - dot) * s.scale;
        }
        gemm(desc(rows, d, kEnd, dS, kEnd, false, K, d, false, dQ, d, true), false);  // dQ += dS K
        gemm(desc(kEnd, d, rows, dS, kEnd, true, Q, d, false, dK, d, true), false);   // dK += dS^T Q
      }
    }
  };
  const long items = s.batch * s.kvHeads;
  if (items > 1 && items * tq * tk * d >= (1L << 15)) {
    parallelFor(items, 1, [&](long b0, long e0, int) {
      for (long i = b0; i < e0; i++) item(i);
    });
  } else {
    for (long i = 0; i < items; i++) item(i);
  }
}

}  // namespace rlvr
