// Persistent spin-then-wait thread pool (see thread-pool.h).
#include "thread-pool.h"

#include <immintrin.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace rlvr {
namespace {

// How long an idle worker spins before sleeping: long enough to bridge the JS work between two kernel calls.
// RLVR_SPIN_US overrides it (0 = sleep at once, e.g. when another process needs the cores).
std::chrono::microseconds spinTime() {
  static const std::chrono::microseconds t = [] {
    const char* env = std::getenv("RLVR_SPIN_US");
    return std::chrono::microseconds(env ? std::atol(env) : 100);
  }();
  return t;
}

class Pool {
 public:
  int threads() const { return threads_.load(std::memory_order_relaxed); }

  void setThreads(int n) {
    if (n < 1) n = 1;
    if (n > kMaxThreads) n = kMaxThreads;
    threads_.store(n);
  }

  Pool() {
    int n = static_cast<int>(std::thread::hardware_concurrency());
    if (const char* env = std::getenv("RLVR_THREADS")) n = std::atoi(env);
    setThreads(n > 0 ? n : 1);
  }

  // Workers are detached and live for the process; they never touch memory that is freed at exit.
  void ensureWorkers(int want) {
    while (static_cast<int>(started_) < want) {
      int tid = static_cast<int>(started_) + 1;
      uint64_t gen = generation_.load();  // read before the job is published, so the new worker sees it
      std::thread([this, tid, gen] { workerLoop(tid, gen); }).detach();
      started_++;
    }
  }

  void run(long n, long grain, void* ctx, RangeFn fn) {
    int t = threads();
    long chunks = (n + grain - 1) / grain;
    if (t <= 1 || chunks <= 1 || !busy_.try_lock()) {
      fn(ctx, 0, n, 0);
      return;
    }
    ensureWorkers(t - 1);
    ctx_ = ctx;
    fn_ = fn;
    n_ = n;
    grain_ = grain;
    chunks_ = chunks;
    next_.store(0, std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_seq_cst);  // odd: open
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      std::lock_guard<std::mutex> lk(m_);
      cv_.notify_all();
    }
    work(0);
    // The job is complete when every chunk is done; a worker that never woke up is not waited for.
    while (done_.load(std::memory_order_acquire) != chunks_) _mm_pause();
    // Close the job (even generation), then wait out any worker still reading its fields.
    generation_.fetch_add(1, std::memory_order_seq_cst);
    while (inside_.load(std::memory_order_seq_cst) != 0) _mm_pause();
    busy_.unlock();
  }

 private:
  void work(int tid) {
    for (;;) {
      long b = next_.fetch_add(grain_, std::memory_order_relaxed);
      if (b >= n_) return;
      long e = b + grain_ < n_ ? b + grain_ : n_;
      fn_(ctx_, b, e, tid);
      done_.fetch_add(1, std::memory_order_release);
    }
  }

  void workerLoop(int tid, uint64_t seen) {
    for (;;) {
      auto start = std::chrono::steady_clock::now();
      int spins = 0;
      while (generation_.load(std::memory_order_acquire) == seen) {
        _mm_pause();
        if (++spins % 64 == 0 && std::chrono::steady_clock::now() - start > spinTime()) {
          std::unique_lock<std::mutex> lk(m_);
          sleepers_.fetch_add(1, std::memory_order_seq_cst);
          cv_.wait(lk, [&] { return generation_.load(std::memory_order_seq_cst) != seen; });
          sleepers_.fetch_sub(1, std::memory_order_relaxed);
        }
      }
      seen = generation_.load(std::memory_order_acquire);
      if ((seen & 1) == 0) continue;  // an even generation marks a closed job
      inside_.fetch_add(1, std::memory_order_seq_cst);
      // Join only if that job is still open: its fields stay valid until the caller closes it and sees inside_ == 0.
      if (generation_.load(std::memory_order_seq_cst) == seen) work(tid);
      inside_.fetch_sub(1, std::memory_order_seq_cst);
    }
  }

  std::atomic<int> threads_{1};
  long started_ = 0;
  std::mutex busy_;
  std::mutex m_;
  std::condition_variable cv_;
  std::atomic<int> sleepers_{0};
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> inside_{0};
  std::atomic<long> next_{0};
  std::atomic<long> done_{0};
  long n_ = 0, grain_ = 1, chunks_ = 0;
  void* ctx_ = nullptr;
  RangeFn fn_ = nullptr;
};

Pool& pool() {
  static Pool* p = new Pool();  // never destroyed: detached workers may outlive static destruction
  return *p;
}

}  // namespace

int poolThreads() { return pool().threads(); }
void setPoolThreads(int n) { pool().setThreads(n); }
void parallelForRaw(long n, long grain, void* ctx, RangeFn fn) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  pool().run(n, grain, ctx, fn);
}

}  // namespace rlvr
