// Persistent thread pool: one worker per extra core, started once, spinning briefly between jobs and then
// sleeping on a condition variable. The calling thread always takes part, so a pool of T threads has T-1
// workers. Concurrent callers (e.g. worker_threads sharing the addon) never block: if the pool is busy the
// caller runs the job alone.
#pragma once
#include <cstdint>
#include <type_traits>

namespace rlvr {

/** Signature of a job body: handles items [begin, end) on thread slot `tid` (0 = caller). */
using RangeFn = void (*)(void* ctx, long begin, long end, int tid);

/** Total threads a parallel job may use (callers included); at least 1. */
int poolThreads();

/** Sets the thread count (takes effect for later jobs; the pool grows lazily, never shrinks). */
void setPoolThreads(int n);

/**
 * Runs fn over [0, n) in chunks of `grain` items claimed dynamically by up to poolThreads() threads.
 * Runs inline when n <= grain or the pool is busy.
 */
void parallelForRaw(long n, long grain, void* ctx, RangeFn fn);

/** Typed convenience wrapper: f(begin, end, tid). */
template <class F>
inline void parallelFor(long n, long grain, F&& f) {
  parallelForRaw(n, grain, &f, [](void* c, long b, long e, int t) { (*static_cast<std::remove_reference_t<F>*>(c))(b, e, t); });
}

/** Maximum thread slots a job can see (size per-thread scratch with this). */
constexpr int kMaxThreads = 64;

}  // namespace rlvr
