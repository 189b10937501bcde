/**
 * The kernel interface: every numeric hot path the engine runs, as flat functions over Float32Array.
 *
 * Two backends implement it: `js` (pure TypeScript, always available, the reference) and `native` (the C++ addon
 * in native/, reached only through ./native.ts). Autograd, shapes and allocation live above this line; kernels
 * only compute, writing into caller-allocated outputs. All arrays are dense and row-major. A kernel never keeps
 * a reference to its arguments after it returns.
 *
 * Conventions
 * - "Backward" kernels ACCUMULATE into their gradient outputs (`dx[i] += ...`) so that a tensor used twice
 *   collects both contributions; callers zero-initialise gradient buffers.
 * - Shapes are passed as plain numbers; rows x cols means a contiguous (rows, cols) matrix.
 * - Broadcasting binary ops receive the output shape and per-input strides over that shape (0 on broadcast
 *   axes), so both backends see the same general problem; implementations fast-path stride-1 inner loops.
 */

/** Unary elementwise ops with a kernel. */
export type UnaryOp = "neg" | "exp" | "log" | "sqrt" | "rsqrt" | "tanh" | "gelu" | "silu" | "relu" | "abs" | "sigmoid";

/** Binary elementwise ops with a kernel. */
export type BinaryOp = "add" | "sub" | "mul" | "div" | "maximum" | "minimum";

/** Parameters of a (batched) matrix product C = op(A) @ op(B). */
export interface MatmulParams {
  /** Number of independent products. */
  batch: number;
  /** Rows of op(A) and C. */
  m: number;
  /** Columns of op(B) and C. */
  n: number;
  /** Inner dimension. */
  k: number;
  /** A is stored (k, m) and used transposed. */
  transA: boolean;
  /** B is stored (n, k) and used transposed. */
  transB: boolean;
  /** Element offset between consecutive A matrices (0 broadcasts one A over the batch). */
  strideA: number;
  /** Element offset between consecutive B matrices (0 broadcasts one B over the batch). */
  strideB: number;
  /** Add into C instead of overwriting it (used by backward passes). */
  accumulate: boolean;
}

/** Parameters of causal scaled-dot-product attention. */
export interface AttentionParams {
  /** Batch size. */
  batch: number;
  /** Query heads. */
  heads: number;
  /** Key/value heads (grouped-query attention when < heads; heads % kvHeads === 0). */
  kvHeads: number;
  /** Query positions in this call. */
  tq: number;
  /** Key positions (cache plus new); query i sits at absolute position tk - tq + i. */
  tk: number;
  /** Head dimension. */
  headDim: number;
  /** Scale applied to q.k (usually 1/sqrt(headDim)). */
  scale: number;
  /** Mask key j for query i when j > tk - tq + i. */
  causal: boolean;
}

/** Every kernel a backend provides. */
export interface Kernels {
  readonly name: "js" | "native";

  // ---- matrix products ----
  /** C[b] (m, n) (+)= op(A[b]) @ op(B[b]); uses a matrix-vector path when m is small. */
  matmul(a: Float32Array, b: Float32Array, c: Float32Array, p: MatmulParams): void;

  // ---- elementwise ----
  /** out[i] = f(x[i]). */
  unary(op: UnaryOp, x: Float32Array, out: Float32Array): void;
  /** dx[i] += dy[i] * f'(x[i]); `y` is the forward output (used by exp, sqrt, rsqrt, tanh, sigmoid). */
  unaryBackward(op: UnaryOp, x: Float32Array, y: Float32Array, dy: Float32Array, dx: Float32Array): void;
  /** out[i] = x[i] ** p. */
  powScalar(x: Float32Array, p: number, out: Float32Array): void;
  /** out[idx] = a[idx . stridesA] (op) b[idx . stridesB] over `shape` (the broadcast output shape). */
  binary(
    op: BinaryOp,
    a: Float32Array,
    stridesA: readonly number[],
    b: Float32Array,
    stridesB: readonly number[],
    out: Float32Array,
    shape: readonly number[],
  ): void;
  /** out[i] = x[i] * s + t (scalar affine; covers add/mul/sub by a constant). */
  affine(x: Float32Array, s: number, t: number, out: Float32Array): void;
  /** y[i] += alpha * x[i]. */
  axpy(alpha: number, x: Float32Array, y: Float32Array): void;
  /**
   * Gradient of a broadcasting binary op, accumulated and reduced onto each input's own layout:
   * da[idx . stridesA] += dy[idx] * d(a op b)/da and db[idx . stridesB] += dy[idx] * d(a op b)/db over `shape`.
   * `dy` is contiguous over `shape`; `da`/`db` may be null (no gradient wanted). For maximum/minimum a tie
   * sends half of dy to each side (as PyTorch does).
   */
  binaryBackward(
    op: BinaryOp,
    a: Float32Array,
    stridesA: readonly number[],
    b: Float32Array,
    stridesB: readonly number[],
    dy: Float32Array,
    da: Float32Array | null,
    db: Float32Array | null,
    shape: readonly number[],
  ): void;
  /** out[idx] = cond[idx . stridesCond] !== 0 ? a[idx . stridesA] : b[idx . stridesB]; `out` is contiguous over `shape`. */
  where(
    cond: Float32Array,
    stridesCond: readonly number[],
    a: Float32Array,
    stridesA: readonly number[],
    b: Float32Array,
    stridesB: readonly number[],
    out: Float32Array,
    shape: readonly number[],
  ): void;
  /**
   * General strided copy over `shape`: out[outOffset + idx . outStrides] (+)= x[xOffset + idx . xStrides].
   * Covers permute/transpose (permuted x strides), slice and concat (offsets), broadcast expansion (0 in
   * xStrides) and, with `accumulate` and 0 in outStrides, sum-reduction over those axes.
   */
  stridedCopy(
    x: Float32Array,
    xOffset: number,
    xStrides: readonly number[],
    out: Float32Array,
    outOffset: number,
    outStrides: readonly number[],
    shape: readonly number[],
    accumulate: boolean,
  ): void;

  // ---- reductions over the last axis of a (rows, cols) matrix ----
  /** out[r] = sum_c x[r, c]. */
  sumRows(x: Float32Array, out: Float32Array, rows: number, cols: number): void;
  /** out[r] = max_c x[r, c]; argmax[r] = first c attaining it. */
  maxRows(x: Float32Array, out: Float32Array, argmax: Int32Array, rows: number, cols: number): void;

  // ---- softmax family over the last axis ----
  softmax(x: Float32Array, out: Float32Array, rows: number, cols: number): void;
  /** dx += y * (dy - sum(dy * y)) per row. */
  softmaxBackward(y: Float32Array, dy: Float32Array, dx: Float32Array, rows: number, cols: number): void;
  logSoftmax(x: Float32Array, out: Float32Array, rows: number, cols: number): void;
  /** dx += dy - exp(y) * sum(dy) per row, with y = logSoftmax(x). */
  logSoftmaxBackward(y: Float32Array, dy: Float32Array, dx: Float32Array, rows: number, cols: number): void;
  /**
   * Fused cross-entropy: loss[r] = logsumexp(x[r]) - x[r, t[r]], or 0 where t[r] === ignoreIndex.
   * Also writes lse[r] (log-sum-exp) for the backward pass.
   */
  crossEntropy(
    logits: Float32Array,
    targets: Int32Array,
    loss: Float32Array,
    lse: Float32Array,
    rows: number,
    cols: number,
    ignoreIndex: number,
  ): void;
  /** dlogits[r] += dloss[r] * (softmax(x[r]) - onehot(t[r])); rows with t === ignoreIndex get nothing. */
  crossEntropyBackward(
    logits: Float32Array,
    targets: Int32Array,
    lse: Float32Array,
    dloss: Float32Array,
    dlogits: Float32Array,
    rows: number,
    cols: number,
    ignoreIndex: number,
  ): void;

  // ---- normalisation over the last axis ----
  /** out = (x - mean) * rstd * w + b; saves mean[r], rstd[r]. `b` may be null. */
  layerNorm(
    x: Float32Array,
    w: Float32Array,
    b: Float32Array | null,
    out: Float32Array,
    mean: Float32Array,
    rstd: Float32Array,
    rows: number,
    cols: number,
    eps: number,
  ): void;
  /** Accumulates dx, dw, db (db may be null). */
  layerNormBackward(
    x: Float32Array,
    w: Float32Array,
    mean: Float32Array,
    rstd: Float32Array,
    dy: Float32Array,
    dx: Float32Array,
    dw: Float32Array,
    db: Float32Array | null,
    rows: number,
    cols: number,
  ): void;
  /** out = x * rstd * w with rstd = 1/sqrt(mean(x^2) + eps); saves rstd[r]. */
  rmsNorm(
    x: Float32Array,
    w: Float32Array,
    out: Float32Array,
    rstd: Float32Array,
    rows: number,
    cols: number,
    eps: number,
  ): void;
  /** Accumulates dx and dw. */
  rmsNormBackward(
    x: Float32Array,
    w: Float32Array,
    rstd: Float32Array,
    dy: Float32Array,
    dx: Float32Array,
    dw: Float32Array,
    rows: number,
    cols: number,
  ): void;

  // ---- rotary position embedding (Hugging Face "rotate half" convention) ----
  /**
   * x: (rows = batch*heads*T, headDim) laid out as (B, H, T, D); position of row r is posOffset + (r % T).
   * out[.., i] = x[i] * cos - x[i + D/2] * sin, out[.., i + D/2] = x[i + D/2] * cos + x[i] * sin, for i < D/2,
   * with angle = pos * theta^(-2i/D). `inverse` applies the transpose rotation (the backward pass).
   */
  rope(
    x: Float32Array,
    out: Float32Array,
    batchHeads: number,
    t: number,
    headDim: number,
    posOffset: number,
    theta: number,
    inverse: boolean,
  ): void;

  // ---- attention ----
  /**
   * q: (B, H, tq, D), k/v: (B, Hkv, tk, D), out: (B, H, tq, D), probs: (B, H, tq, tk) saved for backward.
   * `mask`, when given, is (B, tk) with 0 for keys to ignore (padding); masked scores are -inf.
   * A query row whose keys are all masked gets all-zero probs and a zero output (never NaN).
   */
  attention(
    q: Float32Array,
    k: Float32Array,
    v: Float32Array,
    out: Float32Array,
    probs: Float32Array,
    mask: Float32Array | null,
    p: AttentionParams,
  ): void;
  /** Accumulates dq, dk, dv from dout using the saved probs. */
  attentionBackward(
    q: Float32Array,
    k: Float32Array,
    v: Float32Array,
    probs: Float32Array,
    dout: Float32Array,
    dq: Float32Array,
    dk: Float32Array,
    dv: Float32Array,
    p: AttentionParams,
  ): void;

  // ---- embedding ----
  /** out[i, :] = table[ids[i], :]. */
  gather(table: Float32Array, ids: Int32Array, out: Float32Array, dim: number): void;
  /** dtable[ids[i], :] += dout[i, :]. */
  scatterAdd(dout: Float32Array, ids: Int32Array, dtable: Float32Array, dim: number): void;

  // ---- optimiser ----
  /**
   * One AdamW step in place (decoupled weight decay, bias-corrected):
   * p -= lr * (mHat / (sqrt(vHat) + eps) + wd * p).
   */
  adamw(
    param: Float32Array,
    grad: Float32Array,
    m: Float32Array,
    v: Float32Array,
    lr: number,
    beta1: number,
    beta2: number,
    eps: number,
    weightDecay: number,
    step: number,
  ): void;
  /** Sum of squares (float64 accumulation), for global-norm clipping. */
  sumSquares(x: Float32Array): number;
}
