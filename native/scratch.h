// Per-thread, 64-byte-aligned scratch buffers that grow on demand and are reused across calls.
#pragma once
#include <cstdlib>
#include <cstring>

namespace rlvr {

/** A growable aligned float buffer; `get(n)` returns room for n floats (contents unspecified). */
class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() { std::free(p_); }
  float* get(size_t n) {
    if (n > cap_) {
      std::free(p_);
      size_t bytes = ((n * sizeof(float) + 63) / 64) * 64;
      p_ = static_cast<float*>(std::aligned_alloc(64, bytes));
      cap_ = p_ ? n : 0;
    }
    return p_;
  }

 private:
  float* p_ = nullptr;
  size_t cap_ = 0;
};

}  // namespace rlvr
