// Single-precision matrix products: a packed, cache-tiled AVX2/FMA GEMM (6x16 register-blocked micro-kernel)
// and a matrix-vector path for few rows.
#pragma once

namespace rlvr {

/** C (m, n) (+)= op(A) @ op(B), with op(A)(i, p) = a[i*rsA + p*csA] and op(B)(p, j) = b[p*rsB + j*csB]. */
struct GemmDesc {
  long m, n, k;
  const float* a;
  long rsA, csA;
  const float* b;
  long rsB, csB;
  float* c;
  long ldc;
  bool accumulate;
};

/** True when the AVX-512 micro-kernel is in use (CPU has AVX-512F and RLVR_NO_AVX512 is unset). */
bool useAvx512();

/** One product; `parallel` lets it use the thread pool (false inside an already-parallel region). */
void gemm(const GemmDesc& d, bool parallel);

/** The batched row-major matmul of the Kernels interface (see kernels.ts MatmulParams). */
void matmul(const float* a, const float* b, float* c, long batch, long m, long n, long k, bool transA, bool transB,
            long strideA, long strideB, bool accumulate);

}  // namespace rlvr
