// N-d strided iteration shared by the broadcasting kernels: adjacent axes that are contiguous for every operand
// are merged, then the index space is walked one innermost row at a time (never per element), optionally
// splitting the rows across the thread pool.
#pragma once
#include <cstdint>

#include "thread-pool.h"

namespace rlvr {

constexpr int kMaxDims = 16;

/** A collapsed index space over up to 4 operands. */
struct Strided {
  int nd = 0;                 // collapsed rank (0 = a single element)
  long shape[kMaxDims];
  long st[4][kMaxDims];
  int nops = 0;
  long rows = 1;              // product of all but the innermost axis
  long inner = 1;             // innermost length
  long size = 1;

  /** Builds from a shape and `nops` stride arrays (int32 from JS). Returns false on rank overflow. */
  bool init(const int32_t* shp, int rank, const int32_t* const* strides, int n) {
    nops = n;
    nd = 0;
    size = 1;
    if (rank > kMaxDims) return false;
    for (int d = 0; d < rank; d++) {
      long len = shp[d];
      size *= len;
      if (len == 1) continue;
      bool merge = nd > 0;
      for (int o = 0; o < n && merge; o++) merge = st[o][nd - 1] == static_cast<long>(strides[o][d]) * len;
      if (merge) {
        shape[nd - 1] *= len;
        for (int o = 0; o < n; o++) st[o][nd - 1] = strides[o][d];
      } else {
        shape[nd] = len;
        for (int o = 0; o < n; o++) st[o][nd] = strides[o][d];
        nd++;
      }
    }
    if (nd == 0) {  // scalar (or all size-1 axes)
      shape[0] = 1;
      for (int o = 0; o < n; o++) st[o][0] = 0;
      nd = 1;
    }
    inner = shape[nd - 1];
    rows = 1;
    for (int d = 0; d < nd - 1; d++) rows *= shape[d];
    return true;
  }

  /** Offsets (relative to each operand's base) of the first element of row r. */
  void rowOffsets(long r, long* off) const {
    for (int o = 0; o < nops; o++) off[o] = 0;
    for (int d = nd - 2; d >= 0; d--) {
      long i = r % shape[d];
      r /= shape[d];
      for (int o = 0; o < nops; o++) off[o] += i * st[o][d];
    }
  }

  /** Calls f(off[], n, innerStride[]) for rows [r0, r1). */
  template <class F>
  void walk(long r0, long r1, F&& f) const {
    if (r0 >= r1 || size == 0) return;
    long off[4], idx[kMaxDims], is[4];
    for (int o = 0; o < nops; o++) is[o] = st[o][nd - 1];
    rowOffsets(r0, off);
    long r = r0;
    long rr = r0;
    for (int d = nd - 2; d >= 0; d--) {
      idx[d] = rr % shape[d];
      rr /= shape[d];
    }
    for (; r < r1; r++) {
      f(off, inner, is);
      for (int d = nd - 2; d >= 0; d--) {
        for (int o = 0; o < nops; o++) off[o] += st[o][d];
        if (++idx[d] < shape[d]) break;
        for (int o = 0; o < nops; o++) off[o] -= st[o][d] * shape[d];
        idx[d] = 0;
      }
    }
  }

  /** walk() over all rows, split across the pool when the space is large (only for disjoint outputs). */
  template <class F>
  void walkAll(bool parallel, F&& f) const {
    if (size == 0) return;
    if (parallel && size >= (1L << 15) && rows == 1) {
      // One long row: split the row itself.
      long is[4];
      for (int o = 0; o < nops; o++) is[o] = st[o][0];
      parallelFor(inner, 1L << 13, [&](long b, long e, int) {
        long off[4];
        for (int o = 0; o < nops; o++) off[o] = b * is[o];
        f(off, e - b, is);
      });
    } else if (parallel && size >= (1L << 15)) {
      long grain = (1L << 14) / inner + 1;
      parallelFor(rows, grain, [&](long b, long e, int) { walk(b, e, f); });
    } else {
      walk(0, rows, f);
    }
  }
};

}  // namespace rlvr
