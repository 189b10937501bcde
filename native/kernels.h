// C++ declarations of every native kernel (the semantics are those of src/engine/backends/kernels.ts).
// Kernels return nullptr on success or a static message naming the problem (e.g. an id out of range), which
// the binding turns into a JS error.
#pragma once
#include <cstdint>

namespace rlvr {

enum UnaryOp { kNeg, kExp, kLog, kSqrt, kRsqrt, kTanh, kGelu, kSilu, kRelu, kAbs, kSigmoid, kUnaryCount };
enum BinaryOp { kAdd, kSub, kMul, kDiv, kMaximum, kMinimum, kBinaryCount };

// elementwise.cc
/** Runs `iters` rounds of independent FMA chains on every pool thread; returns the FLOP done (peak.cc). */
double fmaPeak(long iters);

void unary(int op, const float* x, float* out, long n);
void unaryBackward(int op, const float* x, const float* y, const float* dy, float* dx, long n);
void powScalar(const float* x, double p, float* out, long n);
void affine(const float* x, float s, float t, float* out, long n);
void axpy(float alpha, const float* x, float* y, long n);
/** `strides` points at nops int32 arrays of length rank; returns an error message or nullptr. */
const char* binary(int op, const float* a, const int32_t* sa, const float* b, const int32_t* sb, float* out,
                   const int32_t* shape, int rank);
const char* binaryBackward(int op, const float* a, const int32_t* sa, const float* b, const int32_t* sb, const float* dy,
                           float* da, float* db, const int32_t* shape, int rank);
const char* where(const float* cond, const int32_t* sc, const float* a, const int32_t* sa, const float* b,
                  const int32_t* sb, float* out, const int32_t* shape, int rank);
const char* stridedCopy(const float* x, const int32_t* sx, float* out, const int32_t* so, const int32_t* shape, int rank,
                        bool accumulate);

// rows.cc
void sumRows(const float* x, float* out, long rows, long cols);
void maxRows(const float* x, float* out, int32_t* argmax, long rows, long cols);
void softmax(const float* x, float* out, long rows, long cols);
void softmaxBackward(const float* y, const float* dy, float* dx, long rows, long cols);
void logSoftmax(const float* x, float* out, long rows, long cols);
void logSoftmaxBackward(const float* y, const float* dy, float* dx, long rows, long cols);
const char* crossEntropy(const float* logits, const int32_t* targets, float* loss, float* lse, long rows, long cols,
                         int32_t ignoreIndex);
const char* crossEntropyBackward(const float* logits, const int32_t* targets, const float* lse, const float* dloss,
                                 float* dlogits, long rows, long cols, int32_t ignoreIndex);
void layerNorm(const float* x, const float* w, const float* b, float* out, float* mean, float* rstd, long rows, long cols,
               float eps);
void layerNormBackward(const float* x, const float* w, const float* mean, const float* rstd, const float* dy, float* dx,
                       float* dw, float* db, long rows, long cols);
void rmsNorm(const float* x, const float* w, float* out, float* rstd, long rows, long cols, float eps);
void rmsNormBackward(const float* x, const float* w, const float* rstd, const float* dy, float* dx, float* dw, long rows,
                     long cols);

// attention.cc
struct AttnShape {
  long batch, heads, kvHeads, tq, tk, headDim;
  float scale;
  bool causal;
};
void rope(const float* x, float* out, long batchHeads, long t, long headDim, long posOffset, double theta, bool inverse);
void attention(const float* q, const float* k, const float* v, float* out, float* probs, const float* mask,
               const AttnShape& s);
void attentionBackward(const float* q, const float* k, const float* v, const float* probs, const float* dout, float* dq,
                       float* dk, float* dv, const AttnShape& s);

// misc.cc
const char* gather(const float* table, long tableRows, const int32_t* ids, long n, float* out, long dim);
const char* scatterAdd(const float* dout, const int32_t* ids, long n, float* dtable, long tableRows, long dim);
void adamw(float* p, const float* g, float* m, float* v, long n, double lr, double beta1, double beta2, double eps,
           double wd, double step);
double sumSquares(const float* x, long n);

}  // namespace rlvr
