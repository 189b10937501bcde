// N-API bindings: unpacks positional arguments (typed arrays zero-copy, numbers, booleans), checks buffer
// lengths against the dimensions so a caller bug is a JS error rather than memory corruption, and calls the
// kernels. src/engine/backends/native.ts adapts these positional functions to the Kernels interface.
#include <napi.h>

#include <cstdlib>
#include <mutex>
#include <string>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "kernels.h"
#include "matmul.h"
#include "thread-pool.h"

namespace {

using namespace rlvr;

// Argument reader for one call; the first failure throws a JS error naming the kernel and argument.
class Args {
 public:
  Args(const Napi::CallbackInfo& info, const char* op) : info_(info), env_(info.Env()), op_(op) {}
  bool ok() const { return ok_; }

  float* f32(size_t i, size_t need, bool nullable = false) { return typed<float>(i, need, napi_float32_array, "Float32Array", nullable); }
  int32_t* i32(size_t i, size_t need) { return typed<int32_t>(i, need, napi_int32_array, "Int32Array", false); }
  size_t len(size_t i) {  // element count of a typed array argument (0 on failure)
    napi_typedarray_type t;
    size_t n = 0;
    if (napi_get_typedarray_info(env_, info_[i], &t, &n, nullptr, nullptr, nullptr) != napi_ok) return fail(i, "a typed array"), 0;
    return n;
  }
  double num(size_t i) {
    double v = 0;
    if (ok_ && napi_get_value_double(env_, info_[i], &v) != napi_ok) fail(i, "a number");
    return v;
  }
  long dim(size_t i) {
    double v = num(i);
    if (ok_ && (v < 0 || v != static_cast<double>(static_cast<long>(v)))) fail(i, "a non-negative integer");
    return static_cast<long>(v);
  }
  bool flag(size_t i) {
    bool v = false;
    if (ok_ && napi_get_value_bool(env_, info_[i], &v) != napi_ok) fail(i, "a boolean");
    return v;
  }
  void error(const std::string& msg) {
    if (!ok_) return;
    ok_ = false;
    Napi::RangeError::New(env_, std::string("native ") + op_ + ": " + msg).ThrowAsJavaScriptException();
  }

 private:
  template <class T>
  T* typed(size_t i, size_t need, napi_typedarray_type want, const char* name, bool nullable) {
    if (!ok_) return nullptr;
    napi_value v = info_[i];
    if (nullable) {
      napi_valuetype vt;
      napi_typeof(env_, v, &vt);
      if (vt == napi_null || vt == napi_undefined) return nullptr;
    }
    napi_typedarray_type t;
    size_t n = 0;
    void* data = nullptr;
    if (napi_get_typedarray_info(env_, v, &t, &n, &data, nullptr, nullptr) != napi_ok || t != want) {
      fail(i, name);
      return nullptr;
    }
    if (n < need) {
      error("argument " + std::to_string(i) + " has " + std::to_string(n) + " elements, needs " + std::to_string(need));
      return nullptr;
    }
    return static_cast<T*>(data);
  }
  void fail(size_t i, const char* what) {
    if (!ok_) return;
    ok_ = false;
    Napi::TypeError::New(env_, std::string("native ") + op_ + ": argument " + std::to_string(i) + " must be " + what)
        .ThrowAsJavaScriptException();
  }

  const Napi::CallbackInfo& info_;
  napi_env env_;
  const char* op_;
  bool ok_ = true;
};

Napi::Value undef(const Napi::CallbackInfo& info) { return info.Env().Undefined(); }

void raise(Args& a, const char* err) {
  if (err) a.error(err);
}

// Strided meta block: [rank, shape(rank), strides(rank) x nops]; returns pointers and checks each operand's reach.
struct Meta {
  int rank = 0;
  const int32_t* shape = nullptr;
  const int32_t* strides[4] = {nullptr, nullptr, nullptr, nullptr};
  long size = 1;
};

bool readMeta(Args& a, size_t i, int nops, Meta& m) {
  size_t n = a.len(i);
  int32_t* p = a.i32(i, 1);
  if (!a.ok()) return false;
  m.rank = p[0];
  if (m.rank < 0 || m.rank > 16 || n < static_cast<size_t>(1 + m.rank * (1 + nops))) {
    a.error("malformed shape/stride block");
    return false;
  }
  m.shape = p + 1;
  for (int o = 0; o < nops; o++) m.strides[o] = p + 1 + m.rank * (1 + o);
  for (int d = 0; d < m.rank; d++) {
    if (m.shape[d] < 0) {
      a.error("negative dimension");
      return false;
    }
    m.size *= m.shape[d];
  }
  return true;
}

// Largest element offset operand o reaches (strides must be non-negative), plus one; 0 for an empty shape.
long reach(const Meta& m, int o, long base = 0) {
  if (m.size == 0) return 0;
  long r = base;
  for (int d = 0; d < m.rank; d++) {
    if (m.strides[o][d] < 0) return -1;
    r += static_cast<long>(m.shape[d] - 1) * m.strides[o][d];
  }
  return r + 1;
}

bool checkReach(Args& a, const Meta& m, int o, size_t have, const char* name, long base = 0) {
  long r = reach(m, o, base);
  if (r < 0) return a.error(std::string(name) + " has a negative stride"), false;
  if (static_cast<size_t>(r) > have)
    return a.error(std::string(name) + " needs " + std::to_string(r) + " elements, has " + std::to_string(have)), false;
  return true;
}

Napi::Value CpuSupported(const Napi::CallbackInfo& info) {
  __builtin_cpu_init();
  bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return Napi::Boolean::New(info.Env(), ok);
}

Napi::Value Threads(const Napi::CallbackInfo& info) {
  if (info.Length() > 0 && info[0].IsNumber()) setPoolThreads(info[0].As<Napi::Number>().Int32Value());
  return Napi::Number::New(info.Env(), poolThreads());
}

Napi::Value Matmul(const Napi::CallbackInfo& info) {
  Args a(info, "matmul");
  long batch = a.dim(3), m = a.dim(4), n = a.dim(5), k = a.dim(6);
  bool tA = a.flag(7), tB = a.flag(8);
  long sA = a.dim(9), sB = a.dim(10);
  bool acc = a.flag(11);
  size_t needA = batch ? (batch - 1) * sA + m * k : 0, needB = batch ? (batch - 1) * sB + k * n : 0;
  const float* A = a.f32(0, needA);
  const float* B = a.f32(1, needB);
  float* C = a.f32(2, batch * m * n);
  if (a.ok()) matmul(A, B, C, batch, m, n, k, tA, tB, sA, sB, acc);
  return undef(info);
}

Napi::Value Unary(const Napi::CallbackInfo& info) {
  Args a(info, "unary");
  long op = a.dim(0);
  size_t n = a.len(1);
  const float* x = a.f32(1, 0);
  float* out = a.f32(2, n);
  if (a.ok() && op >= kUnaryCount) a.error("unknown op");
  if (a.ok()) unary(static_cast<int>(op), x, out, n);
  return undef(info);
}

Napi::Value UnaryBackward(const Napi::CallbackInfo& info) {
  Args a(info, "unaryBackward");
  long op = a.dim(0);
  size_t n = a.len(1);
  const float* x = a.f32(1, 0);
  const float* y = a.f32(2, n);
  const float* dy = a.f32(3, n);
  float* dx = a.f32(4, n);
  if (a.ok() && op >= kUnaryCount) a.error("unknown op");
  if (a.ok()) unaryBackward(static_cast<int>(op), x, y, dy, dx, n);
  return undef(info);
}

Napi::Value PowScalar(const Napi::CallbackInfo& info) {
  Args a(info, "powScalar");
  size_t n = a.len(0);
  const float* x = a.f32(0, 0);
  double p = a.num(1);
  float* out = a.f32(2, n);
  if (a.ok()) powScalar(x, p, out, n);
  return undef(info);
}

Napi::Value Affine(const Napi::CallbackInfo& info) {
  Args a(info, "affine");
  size_t n = a.len(0);
  const float* x = a.f32(0, 0);
  double s = a.num(1), t = a.num(2);
  float* out = a.f32(3, n);
  if (a.ok()) affine(x, static_cast<float>(s), static_cast<float>(t), out, n);
  return undef(info);
}

Napi::Value Axpy(const Napi::CallbackInfo& info) {
  Args a(info, "axpy");
  double alpha = a.num(0);
  size_t n = a.len(1);
  const float* x = a.f32(1, 0);
  float* y = a.f32(2, n);
  if (a.ok()) axpy(static_cast<float>(alpha), x, y, n);
  return undef(info);
}

// binary(op, a, b, out, meta[rank, shape, sa, sb])
Napi::Value Binary(const Napi::CallbackInfo& info) {
  Args a(info, "binary");
  long op = a.dim(0);
  Meta m;
  if (!readMeta(a, 4, 2, m)) return undef(info);
  size_t na = a.len(1), nb = a.len(2);
  const float* x = a.f32(1, 0);
  const float* y = a.f32(2, 0);
  float* out = a.f32(3, m.size);
  if (!a.ok() || !checkReach(a, m, 0, na, "a") || !checkReach(a, m, 1, nb, "b")) return undef(info);
  if (op >= kBinaryCount) return a.error("unknown op"), undef(info);
  raise(a, binary(static_cast<int>(op), x, m.strides[0], y, m.strides[1], out, m.shape, m.rank));
  return undef(info);
}

// binaryBackward(op, a, b, dy, da|null, db|null, meta[rank, shape, sa, sb])
Napi::Value BinaryBackward(const Napi::CallbackInfo& info) {
  Args a(info, "binaryBackward");
  long op = a.dim(0);
  Meta m;
  if (!readMeta(a, 6, 2, m)) return undef(info);
  size_t na = a.len(1), nb = a.len(2);
  const float* x = a.f32(1, 0);
  const float* y = a.f32(2, 0);
  const float* dy = a.f32(3, m.size);
  float* da = a.f32(4, 0, true);
  float* db = a.f32(5, 0, true);
  if (!a.ok() || !checkReach(a, m, 0, na, "a") || !checkReach(a, m, 1, nb, "b")) return undef(info);
  if (da && !checkReach(a, m, 0, a.len(4), "da")) return undef(info);
  if (db && !checkReach(a, m, 1, a.len(5), "db")) return undef(info);
  if (op >= kBinaryCount) return a.error("unknown op"), undef(info);
  raise(a, binaryBackward(static_cast<int>(op), x, m.strides[0], y, m.strides[1], dy, da, db, m.shape, m.rank));
  return undef(info);
}

// where(cond, a, b, out, meta[rank, shape, sc, sa, sb])
Napi::Value Where(const Napi::CallbackInfo& info) {
  Args a(info, "where");
  Meta m;
  if (!readMeta(a, 4, 3, m)) return undef(info);
  size_t nc = a.len(0), na = a.len(1), nb = a.len(2);
  const float* c = a.f32(0, 0);
  const float* x = a.f32(1, 0);
  const float* y = a.f32(2, 0);
  float* out = a.f32(3, m.size);
  if (!a.ok() || !checkReach(a, m, 0, nc, "cond") || !checkReach(a, m, 1, na, "a") || !checkReach(a, m, 2, nb, "b"))
    return undef(info);
  raise(a, where(c, m.strides[0], x, m.strides[1], y, m.strides[2], out, m.shape, m.rank));
  return undef(info);
}

// stridedCopy(x, xOffset, out, outOffset, accumulate, meta[rank, shape, sx, so])
Napi::Value StridedCopy(const Napi::CallbackInfo& info) {
  Args a(info, "stridedCopy");
  Meta m;
  if (!readMeta(a, 5, 2, m)) return undef(info);
  size_t nx = a.len(0), no = a.len(2);
  const float* x = a.f32(0, 0);
  long xo = a.dim(1);
  float* out = a.f32(2, 0);
  long oo = a.dim(3);
  bool acc = a.flag(4);
  if (!a.ok() || !checkReach(a, m, 0, nx, "x", xo) || !checkReach(a, m, 1, no, "out", oo)) return undef(info);
  raise(a, stridedCopy(x + xo, m.strides[0], out + oo, m.strides[1], m.shape, m.rank, acc));
  return undef(info);
}

Napi::Value SumRows(const Napi::CallbackInfo& info) {
  Args a(info, "sumRows");
  long rows = a.dim(2), cols = a.dim(3);
  const float* x = a.f32(0, rows * cols);
  float* out = a.f32(1, rows);
  if (a.ok()) sumRows(x, out, rows, cols);
  return undef(info);
}

Napi::Value MaxRows(const Napi::CallbackInfo& info) {
  Args a(info, "maxRows");
  long rows = a.dim(3), cols = a.dim(4);
  const float* x = a.f32(0, rows * cols);
  float* out = a.f32(1, rows);
  int32_t* arg = a.i32(2, rows);
  if (a.ok() && cols == 0 && rows > 0) a.error("cols must be positive");
  if (a.ok()) maxRows(x, out, arg, rows, cols);
  return undef(info);
}

// Shared shape of softmax(x, out, rows, cols) and the backward (y, dy, dx, rows, cols) kernels.
template <void (*F)(const float*, float*, long, long)>
Napi::Value RowMap(const Napi::CallbackInfo& info, const char* name) {
  Args a(info, name);
  long rows = a.dim(2), cols = a.dim(3);
  const float* x = a.f32(0, rows * cols);
  float* out = a.f32(1, rows * cols);
  if (a.ok()) F(x, out, rows, cols);
  return undef(info);
}
template <void (*F)(const float*, const float*, float*, long, long)>
Napi::Value RowGrad(const Napi::CallbackInfo& info, const char* name) {
  Args a(info, name);
  long rows = a.dim(3), cols = a.dim(4);
  const float* y = a.f32(0, rows * cols);
  const float* dy = a.f32(1, rows * cols);
  float* dx = a.f32(2, rows * cols);
  if (a.ok()) F(y, dy, dx, rows, cols);
  return undef(info);
}
Napi::Value Softmax(const Napi::CallbackInfo& info) { return RowMap<softmax>(info, "softmax"); }
Napi::Value LogSoftmax(const Napi::CallbackInfo& info) { return RowMap<logSoftmax>(info, "logSoftmax"); }
Napi::Value SoftmaxBackward(const Napi::CallbackInfo& info) { return RowGrad<softmaxBackward>(info, "softmaxBackward"); }
Napi::Value LogSoftmaxBackward(const Napi::CallbackInfo& info) { return RowGrad<logSoftmaxBackward>(info, "logSoftmaxBackward"); }

Napi::Value CrossEntropy(const Napi::CallbackInfo& info) {
  Args a(info, "crossEntropy");
  long rows = a.dim(4), cols = a.dim(5);
  int32_t ignore = static_cast<int32_t>(a.num(6));
  const float* x = a.f32(0, rows * cols);
  const int32_t* t = a.i32(1, rows);
  float* loss = a.f32(2, rows);
  float* lse = a.f32(3, rows);
  if (a.ok()) raise(a, crossEntropy(x, t, loss, lse, rows, cols, ignore));
  return undef(info);
}

Napi::Value CrossEntropyBackward(const Napi::CallbackInfo& info) {
  Args a(info, "crossEntropyBackward");
  long rows = a.dim(5), cols = a.dim(6);
  int32_t ignore = static_cast<int32_t>(a.num(7));
  const float* x = a.f32(0, rows * cols);
  const int32_t* t = a.i32(1, rows);
  const float* lse = a.f32(2, rows);
  const float* dl = a.f32(3, rows);
  float* dx = a.f32(4, rows * cols);
  if (a.ok()) raise(a, crossEntropyBackward(x, t, lse, dl, dx, rows, cols, ignore));
  return undef(info);
}

Napi::Value LayerNorm(const Napi::CallbackInfo& info) {
  Args a(info, "layerNorm");
  long rows = a.dim(6), cols = a.dim(7);
  double eps = a.num(8);
  const float* x = a.f32(0, rows * cols);
  const float* w = a.f32(1, cols);
  const float* b = a.f32(2, cols, true);
  float* out = a.f32(3, rows * cols);
  float* mean = a.f32(4, rows);
  float* rstd = a.f32(5, rows);
  if (a.ok()) layerNorm(x, w, b, out, mean, rstd, rows, cols, static_cast<float>(eps));
  return undef(info);
}

Napi::Value LayerNormBackward(const Napi::CallbackInfo& info) {
  Args a(info, "layerNormBackward");
  long rows = a.dim(8), cols = a.dim(9);
  const float* x = a.f32(0, rows * cols);
  const float* w = a.f32(1, cols);
  const float* mean = a.f32(2, rows);
  const float* rstd = a.f32(3, rows);
  const float* dy = a.f32(4, rows * cols);
  float* dx = a.f32(5, rows * cols);
  float* dw = a.f32(6, cols);
  float* db = a.f32(7, cols, true);
  if (a.ok()) layerNormBackward(x, w, mean, rstd, dy, dx, dw, db, rows, cols);
  return undef(info);
}

Napi::Value RmsNorm(const Napi::CallbackInfo& info) {
  Args a(info, "rmsNorm");
  long rows = a.dim(4), cols = a.dim(5);
  double eps = a.num(6);
  const float* x = a.f32(0, rows * cols);
  const float* w = a.f32(1, cols);
  float* out = a.f32(2, rows * cols);
  float* rstd = a.f32(3, rows);
  if (a.ok()) rmsNorm(x, w, out, rstd, rows, cols, static_cast<float>(eps));
  return undef(info);
}

Napi::Value RmsNormBackward(const Napi::CallbackInfo& info) {
  Args a(info, "rmsNormBackward");
  long rows = a.dim(6), cols = a.dim(7);
  const float* x = a.f32(0, rows * cols);
  const float* w = a.f32(1, cols);
  const float* rstd = a.f32(2, rows);
  const float* dy = a.f32(3, rows * cols);
  float* dx = a.f32(4, rows * cols);
  float* dw = a.f32(5, cols);
  if (a.ok()) rmsNormBackward(x, w, rstd, dy, dx, dw, rows, cols);
  return undef(info);
}

Napi::Value Rope(const Napi::CallbackInfo& info) {
  Args a(info, "rope");
  long bh = a.dim(2), t = a.dim(3), d = a.dim(4);
  double pos = a.num(5), theta = a.num(6);
  bool inv = a.flag(7);
  const float* x = a.f32(0, bh * t * d);
  float* out = a.f32(1, bh * t * d);
  if (a.ok()) rope(x, out, bh, t, d, static_cast<long>(pos), theta, inv);
  return undef(info);
}

bool readAttn(Args& a, size_t i, AttnShape& s) {
  s.batch = a.dim(i);
  s.heads = a.dim(i + 1);
  s.kvHeads = a.dim(i + 2);
  s.tq = a.dim(i + 3);
  s.tk = a.dim(i + 4);
  s.headDim = a.dim(i + 5);
  s.scale = static_cast<float>(a.num(i + 6));
  s.causal = a.flag(i + 7);
  if (!a.ok()) return false;
  if (s.kvHeads == 0 || s.heads % s.kvHeads != 0) return a.error("heads must be a multiple of kvHeads"), false;
  if (s.tq > s.tk) return a.error("tq must not exceed tk"), false;
  return true;
}

// attention(q, k, v, out, probs, mask|null, batch, heads, kvHeads, tq, tk, headDim, scale, causal)
Napi::Value Attention(const Napi::CallbackInfo& info) {
  Args a(info, "attention");
  AttnShape s;
  if (!readAttn(a, 6, s)) return undef(info);
  long qn = s.batch * s.heads * s.tq * s.headDim, kn = s.batch * s.kvHeads * s.tk * s.headDim;
  const float* q = a.f32(0, qn);
  const float* k = a.f32(1, kn);
  const float* v = a.f32(2, kn);
  float* out = a.f32(3, qn);
  float* probs = a.f32(4, s.batch * s.heads * s.tq * s.tk);
  const float* mask = a.f32(5, s.batch * s.tk, true);
  if (a.ok()) attention(q, k, v, out, probs, mask, s);
  return undef(info);
}

// attentionBackward(q, k, v, probs, dout, dq, dk, dv, batch, heads, kvHeads, tq, tk, headDim, scale, causal)
Napi::Value AttentionBackward(const Napi::CallbackInfo& info) {
  Args a(info, "attentionBackward");
  AttnShape s;
  if (!readAttn(a, 8, s)) return undef(info);
  long qn = s.batch * s.heads * s.tq * s.headDim, kn = s.batch * s.kvHeads * s.tk * s.headDim;
  const float* q = a.f32(0, qn);
  const float* k = a.f32(1, kn);
  const float* v = a.f32(2, kn);
  const float* probs = a.f32(3, s.batch * s.heads * s.tq * s.tk);
  const float* dout = a.f32(4, qn);
  float* dq = a.f32(5, qn);
  float* dk = a.f32(6, kn);
  float* dv = a.f32(7, kn);
  if (a.ok()) attentionBackward(q, k, v, probs, dout, dq, dk, dv, s);
  return undef(info);
}

Napi::Value Gather(const Napi::CallbackInfo& info) {
  Args a(info, "gather");
  long dim = a.dim(3);
  size_t n = a.len(1), tn = a.len(0);
  const float* table = a.f32(0, 0);
  const int32_t* ids = a.i32(1, 0);
  float* out = a.f32(2, n * dim);
  if (a.ok() && dim == 0) a.error("dim must be positive");
  if (a.ok()) raise(a, gather(table, static_cast<long>(tn / dim), ids, n, out, dim));
  return undef(info);
}

Napi::Value ScatterAdd(const Napi::CallbackInfo& info) {
  Args a(info, "scatterAdd");
  long dim = a.dim(3);
  size_t n = a.len(1), tn = a.len(2);
  const float* dout = a.f32(0, n * dim);
  const int32_t* ids = a.i32(1, 0);
  float* dtable = a.f32(2, 0);
  if (a.ok() && dim == 0) a.error("dim must be positive");
  if (a.ok()) raise(a, scatterAdd(dout, ids, n, dtable, static_cast<long>(tn / dim), dim));
  return undef(info);
}

// adamw(param, grad, m, v, lr, beta1, beta2, eps, weightDecay, step)
Napi::Value AdamW(const Napi::CallbackInfo& info) {
  Args a(info, "adamw");
  size_t n = a.len(0);
  float* p = a.f32(0, 0);
  const float* g = a.f32(1, n);
  float* m = a.f32(2, n);
  float* v = a.f32(3, n);
  double lr = a.num(4), b1 = a.num(5), b2 = a.num(6), eps = a.num(7), wd = a.num(8), step = a.num(9);
  if (a.ok()) adamw(p, g, m, v, n, lr, b1, b2, eps, wd, step);
  return undef(info);
}

Napi::Value SumSquares(const Napi::CallbackInfo& info) {
  Args a(info, "sumSquares");
  size_t n = a.len(0);
  const float* x = a.f32(0, 0);
  if (!a.ok()) return undef(info);
  return Napi::Number::New(info.Env(), sumSquares(x, n));
}

// Node allocates ArrayBuffers with calloc. Past glibc's mmap threshold every large tensor is a fresh mmap whose
// pages fault in on first write and go back to the OS on free, which measured ~20% of a training step's CPU
// time. Serving buffers up to 256 MiB from the heap (and not trimming it eagerly) lets freed tensor memory be
// reused. Process-wide, so it can be turned off with RLVR_MALLOC_TUNING=0.
void tuneMalloc() {
#if defined(__GLIBC__)
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv("RLVR_MALLOC_TUNING");
    if (env && env[0] == '0') return;
    mallopt(M_MMAP_THRESHOLD, 256 * 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 512 * 1024 * 1024);
  });
#endif
}

Napi::Value FmaPeak(const Napi::CallbackInfo& info) {
  long iters = info.Length() > 0 && info[0].IsNumber() ? info[0].As<Napi::Number>().Int64Value() : 0;
  return Napi::Number::New(info.Env(), iters > 0 ? fmaPeak(iters) : 0.0);
}

Napi::Value Simd(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), useAvx512() ? "avx512" : "avx2"); }

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  tuneMalloc();
  struct Entry {
    const char* name;
    Napi::Value (*fn)(const Napi::CallbackInfo&);
  };
  const Entry entries[] = {
      {"cpuSupported", CpuSupported}, {"threads", Threads}, {"simd", Simd}, {"matmul", Matmul}, {"unary", Unary},
      {"unaryBackward", UnaryBackward}, {"powScalar", PowScalar}, {"affine", Affine}, {"axpy", Axpy},
      {"binary", Binary}, {"binaryBackward", BinaryBackward}, {"where", Where}, {"stridedCopy", StridedCopy},
      {"sumRows", SumRows}, {"maxRows", MaxRows}, {"softmax", Softmax}, {"softmaxBackward", SoftmaxBackward},
      {"logSoftmax", LogSoftmax}, {"logSoftmaxBackward", LogSoftmaxBackward}, {"crossEntropy", CrossEntropy},
      {"crossEntropyBackward", CrossEntropyBackward}, {"layerNorm", LayerNorm}, {"layerNormBackward", LayerNormBackward},
      {"rmsNorm", RmsNorm}, {"rmsNormBackward", RmsNormBackward}, {"rope", Rope}, {"attention", Attention},
      {"attentionBackward", AttentionBackward}, {"gather", Gather}, {"scatterAdd", ScatterAdd}, {"adamw", AdamW},
      {"sumSquares", SumSquares}, {"fmaPeak", FmaPeak},
  };
  for (const Entry& e : entries) exports.Set(e.name, Napi::Function::New(env, e.fn, e.name));
  return exports;
}

}  // namespace

NODE_API_MODULE(rlvr_native, Init)
