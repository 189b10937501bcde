// The machine's fp32 peak (issue 21): every pool thread runs a loop of independent FMA chains that touches no
// memory, so the rate it reaches is what the cores' FMA units can do, the ceiling that a training step's FLOP rate
// is quoted against (bench:engine's machine.fp32_peak_gflops and train.*.peak_frac). AVX-512 where the CPU has it
// (microkernel-avx512.cc), AVX2 + FMA otherwise, matching the GEMM's choice.
#include <immintrin.h>

#include <atomic>

#include "kernels.h"
#include "matmul.h"
#include "thread-pool.h"

namespace rlvr {

float fmaChainsAvx512(long iters);

namespace {

// AVX2: 16 chains of 8 floats, 256 FLOP per round.
float fmaChainsAvx2(long iters) {
  __m256 acc[16];
  for (int i = 0; i < 16; i++) acc[i] = _mm256_set1_ps(0.001f * static_cast<float>(i));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long it = 0; it < iters; it++) {
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  }
  __m256 s = acc[0];
  for (int i = 1; i < 16; i++) s = _mm256_add_ps(s, acc[i]);
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
}

}  // namespace

double fmaPeak(long iters) {
  const bool wide = useAvx512();
  const int T = poolThreads();
  std::atomic<int> ran{0};
  std::atomic<long> sink{0};
  parallelFor(T, 1, [&](long b, long e, int) {
    for (long i = b; i < e; i++) {
      float v = wide ? fmaChainsAvx512(iters) : fmaChainsAvx2(iters);
      sink.fetch_add(static_cast<long>(v), std::memory_order_relaxed);
      ran.fetch_add(1, std::memory_order_relaxed);
    }
  });
  // FLOP done: threads x rounds x chains x lanes x 2. A busy pool runs the items inline: the same FLOP, more time.
  // (The atomic sink is a side effect the compiler must keep, and with it the FMA work.)
  return static_cast<double>(ran.load()) * static_cast<double>(iters) * 16.0 * (wide ? 16.0 : 8.0) * 2.0;
}

}  // namespace rlvr
