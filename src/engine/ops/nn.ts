/**
 * Neural-network ops, each fused into one kernel with its gradient: embedding gather, softmax and log-softmax,
 * cross-entropy with an ignore index, LayerNorm, RMSNorm, RoPE and scaled-dot-product attention (causal,
 * padding mask, grouped KV heads, KV-cache offsets). Dropout is a composition (mask multiply).
 */
import type { Rng } from "../../util/rng.js";
import { ShapeError, fmtShape } from "../../util/errors.js";
import { backend } from "../backends/index.js";
import type { AttentionParams } from "../backends/kernels.js";
import { allocUninit, allocZeroed, release } from "../pool.js";
import { Tensor, emptyUninit, needsGrad, record } from "../tensor.js";
import { affine, mul } from "./elementwise.js";
import type { RuleTable } from "./op-set.js";
import { sum } from "./reduce.js";
import { normAxis } from "./shape-util.js";
import { transpose } from "./shape.js";

/** Rows of `table` (V, D) picked by `ids`: (...idsShape, D). */
export function embedding(table: Tensor, ids: Int32Array, idsShape: readonly number[] = [ids.length]): Tensor {
  if (table.ndim !== 2) throw new ShapeError(`embedding: table must be (V, D), got ${fmtShape(table.shape)}`);
  const [v, d] = table.shape as [number, number];
  let n = 1;
  for (const s of idsShape) n *= s;
  if (n !== ids.length)
    throw new ShapeError(`embedding: ${ids.length} ids do not fill ids shape ${fmtShape(idsShape)}`);
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    if (id < 0 || id >= v)
      throw new ShapeError(`embedding: id ${id} at position ${i} out of range for table ${fmtShape(table.shape)}`);
  }
  const out = emptyUninit([...idsShape, d]);
  backend().gather(table.data, ids, out.data, d);
  return record(out, "embedding", [table], { ids });
}

/** Moves `axis` last, applies a last-axis op, and moves it back. */
function alongAxis(x: Tensor, axis: number, op: string, f: (t: Tensor) => Tensor): Tensor {
  const a = normAxis(op, axis, x.ndim);
  if (a === x.ndim - 1) return f(x);
  return transpose(f(transpose(x, a, -1)), a, -1);
}

/** Softmax along `axis` (default last). */
export function softmax(x: Tensor, axis = -1): Tensor {
  return alongAxis(x, axis, "softmax", (t) => {
    const cols = t.shape[t.ndim - 1]!,
      rows = t.size / cols;
    const out = emptyUninit(t.shape);
    backend().softmax(t.data, out.data, rows, cols);
    return record(out, "softmax", [t], { rows, cols });
  });
}

/** Log-softmax along `axis` (default last). */
export function logSoftmax(x: Tensor, axis = -1): Tensor {
  return alongAxis(x, axis, "logSoftmax", (t) => {
    const cols = t.shape[t.ndim - 1]!,
      rows = t.size / cols;
    const out = emptyUninit(t.shape);
    backend().logSoftmax(t.data, out.data, rows, cols);
    return record(out, "logSoftmax", [t], { rows, cols });
  });
}

/** Options of crossEntropy. */
export interface CrossEntropyOptions {
  /** Target value that contributes no loss and no gradient (default -100, as PyTorch). */
  ignoreIndex?: number;
  /** "mean" over non-ignored rows (0 when all are ignored), "sum", or "none" for per-row (N,). */
  reduction?: "mean" | "sum" | "none";
}

/** Fused log-softmax + negative log-likelihood of `targets` under `logits` (N, V). */
export function crossEntropy(logits: Tensor, targets: Int32Array, opts: CrossEntropyOptions = {}): Tensor {
  const ignoreIndex = opts.ignoreIndex ?? -100;
  const reduction = opts.reduction ?? "mean";
  if (logits.ndim !== 2) throw new ShapeError(`crossEntropy: logits must be (N, V), got ${fmtShape(logits.shape)}`);
  const [rows, cols] = logits.shape as [number, number];
  if (targets.length !== rows)
    throw new ShapeError(`crossEntropy: ${targets.length} targets for logits ${fmtShape(logits.shape)}`);
  let count = 0;
  for (let r = 0; r < rows; r++) {
    const t = targets[r]!;
    if (t === ignoreIndex) continue;
    if (t < 0 || t >= cols)
      throw new ShapeError(`crossEntropy: target ${t} at row ${r} out of range for logits ${fmtShape(logits.shape)}`);
    count++;
  }
  const loss = emptyUninit([rows]);
  const lse = new Float32Array(rows);
  backend().crossEntropy(logits.data, targets, loss.data, lse, rows, cols, ignoreIndex);
  const perRow = record(loss, "crossEntropy", [logits], { targets, lse, ignoreIndex });
  if (reduction === "none") return perRow;
  const total = sum(perRow);
  return reduction === "sum" ? total : affine(total, count > 0 ? 1 / count : 0, 0);
}

function checkNormWeight(op: string, x: Tensor, w: Tensor, b: Tensor | null): number {
  const cols = x.shape[x.ndim - 1] ?? 1;
  if (w.ndim !== 1 || w.shape[0] !== cols || (b && (b.ndim !== 1 || b.shape[0] !== cols))) {
    throw new ShapeError(
      `${op}: x ${fmtShape(x.shape)} needs weight${b ? " and bias" : ""} of shape (${cols}), got ${fmtShape(w.shape)}${b ? ` and ${fmtShape(b.shape)}` : ""}`,
    );
  }
  return cols;
}

/** LayerNorm over the last axis: (x - mean) / sqrt(var + eps) * w + b. */
export function layerNorm(x: Tensor, w: Tensor, b: Tensor | null, eps = 1e-5): Tensor {
  const cols = checkNormWeight("layerNorm", x, w, b);
  const rows = x.size / cols;
  const out = emptyUninit(x.shape);
  const mean = new Float32Array(rows),
    rstd = new Float32Array(rows);
  backend().layerNorm(x.data, w.data, b ? b.data : null, out.data, mean, rstd, rows, cols, eps);
  return record(out, "layerNorm", b ? [x, w, b] : [x, w], { mean, rstd, rows, cols });
}

/** RMSNorm over the last axis: x / sqrt(mean(x^2) + eps) * w. */
export function rmsNorm(x: Tensor, w: Tensor, eps = 1e-6): Tensor {
  const cols = checkNormWeight("rmsNorm", x, w, null);
  const rows = x.size / cols;
  const out = emptyUninit(x.shape);
  const rstd = new Float32Array(rows);
  backend().rmsNorm(x.data, w.data, out.data, rstd, rows, cols, eps);
  return record(out, "rmsNorm", [x, w], { rstd, rows, cols });
}

/** Options of rope. */
export interface RopeOptions {
  posOffset?: number;
  theta?: number;
}

/** Rotary position embedding of x (B, H, T, D), Hugging Face rotate-half convention. */
export function rope(x: Tensor, opts: RopeOptions = {}): Tensor {
  if (x.ndim !== 4 || x.shape[3]! % 2 !== 0)
    throw new ShapeError(`rope: x must be (B, H, T, D) with even D, got ${fmtShape(x.shape)}`);
  const [b, h, t, d] = x.shape as [number, number, number, number];
  const posOffset = opts.posOffset ?? 0,
    theta = opts.theta ?? 10000;
  const out = emptyUninit(x.shape);
  backend().rope(x.data, out.data, b * h, t, d, posOffset, theta, false);
  return record(out, "rope", [x], { batchHeads: b * h, t, headDim: d, posOffset, theta });
}

/** Zeroes each element with probability p and scales survivors by 1/(1-p); identity when p = 0 or !training. */
export function dropout(x: Tensor, p: number, rng: Rng, training = true): Tensor {
  if (!(p >= 0 && p < 1)) throw new ShapeError(`dropout: p must be in [0, 1), got ${p}`);
  if (p === 0 || !training) return x;
  const mask = emptyUninit(x.shape);
  const keep = 1 / (1 - p);
  const m = mask.data;
  for (let i = 0; i < m.length; i++) m[i] = rng.random() < p ? 0 : keep;
  return mul(x, mask);
}

/** Options of scaledDotProductAttention. */
export interface AttentionOptions {
  /** Mask keys after each query's absolute position (default true). */
  causal?: boolean;
  /** (B, Tk), 1 = attend, 0 = padding. */
  mask?: Tensor | Float32Array | null;
  /** Score scale (default 1/sqrt(D)). */
  scale?: number;
}

/**
 * softmax(q k^T * scale + mask) v for q (B, H, Tq, D), k and v (B, Hkv, Tk, D) → (B, H, Tq, D).
 * With Tk > Tq the queries are the last Tq positions (a KV cache holds the first Tk - Tq).
 */
export function scaledDotProductAttention(q: Tensor, k: Tensor, v: Tensor, opts: AttentionOptions = {}): Tensor {
  const desc = (): string => `q ${fmtShape(q.shape)}, k ${fmtShape(k.shape)}, v ${fmtShape(v.shape)}`;
  if (q.ndim !== 4 || k.ndim !== 4 || v.ndim !== 4)
    throw new ShapeError(`scaledDotProductAttention: ${desc()}: expected 4-d (B, H, T, D)`);
  const [batch, heads, tq, headDim] = q.shape as [number, number, number, number];
  const [kb, kvHeads, tk, kd] = k.shape as [number, number, number, number];
  const sameKV = v.shape.every((s, i) => s === k.shape[i]);
  if (kb !== batch || kd !== headDim || !sameKV || kvHeads === 0 || heads % kvHeads !== 0 || tk < tq) {
    throw new ShapeError(
      `scaledDotProductAttention: ${desc()}: need matching B and D, k and v alike, H divisible by Hkv, Tk >= Tq`,
    );
  }
  let mask: Float32Array | null = null;
  if (opts.mask) {
    mask = opts.mask instanceof Tensor ? opts.mask.data : opts.mask;
    if (mask.length !== batch * tk)
      throw new ShapeError(
        `scaledDotProductAttention: ${desc()}: mask has ${mask.length} values, expected (B, Tk) = (${batch}, ${tk})`,
      );
  }
  const params: AttentionParams = {
    batch,
    heads,
    kvHeads,
    tq,
    tk,
    headDim,
    scale: opts.scale ?? 1 / Math.sqrt(headDim),
    causal: opts.causal ?? true,
  };
  const out = emptyUninit(q.shape);
  const probs = allocZeroed(batch * heads * tq * tk);
  backend().attention(q.data, k.data, v.data, out.data, probs, mask, params);
  if (!needsGrad(q, k, v)) {
    release(probs);
    return out;
  }
  return record(out, "attention", [q, k, v], { probs, params });
}

// Throwaway gradient outputs for inputs that need none (fused backward kernels write all of them).
const scratchList: Float32Array[] = [];
function scratch(n: number): Float32Array {
  const b = allocZeroed(n);
  scratchList.push(b);
  return b;
}
function releaseScratch(): void {
  for (const b of scratchList) release(b);
  scratchList.length = 0;
}

/** NN-op rules, each with its derivative. */
export const nnRules: RuleTable<
  "embedding" | "softmax" | "logSoftmax" | "crossEntropy" | "layerNorm" | "rmsNorm" | "rope" | "attention"
> = {
  // d table[ids[i]] += dy[i]  (scatter-add; repeated ids accumulate)
  embedding: ({ ids }, dy, _out, [table], grad) => {
    const dt = grad(0);
    if (dt) backend().scatterAdd(dy, ids, dt, table!.shape[1]!);
  },
  // dx = y * (dy - sum(dy * y))
  softmax: ({ rows, cols }, dy, out, _inputs, grad) => {
    const dx = grad(0);
    if (dx) backend().softmaxBackward(out.data, dy, dx, rows, cols);
  },
  // dx = dy - softmax(x) * sum(dy)
  logSoftmax: ({ rows, cols }, dy, out, _inputs, grad) => {
    const dx = grad(0);
    if (dx) backend().logSoftmaxBackward(out.data, dy, dx, rows, cols);
  },
  // d(lse(x) - x_t) = (softmax(x) - onehot(t)) dloss, none for ignored rows
  crossEntropy: ({ targets, lse, ignoreIndex }, dy, _out, [logits], grad) => {
    const dx = grad(0);
    const [rows, cols] = logits!.shape as [number, number];
    if (dx) backend().crossEntropyBackward(logits!.data, targets, lse, dy, dx, rows, cols, ignoreIndex);
  },
  // xhat = (x - mu) rstd: dx = rstd (g - mean(g) - xhat mean(g xhat)), g = dy w; dw = sum dy xhat; db = sum dy
  layerNorm: ({ mean, rstd, rows, cols }, dy, _out, [x, w, b], grad) => {
    const dx = grad(0) ?? scratch(x!.size);
    const dw = grad(1) ?? scratch(cols);
    const db = b ? (grad(2) ?? scratch(cols)) : null;
    backend().layerNormBackward(x!.data, w!.data, mean, rstd, dy, dx, dw, db, rows, cols);
    releaseScratch();
  },
  // xhat = x rstd: dx = rstd (g - xhat mean(g xhat)), g = dy w; dw = sum dy xhat
  rmsNorm: ({ rstd, rows, cols }, dy, _out, [x, w], grad) => {
    const dx = grad(0) ?? scratch(x!.size);
    const dw = grad(1) ?? scratch(cols);
    backend().rmsNormBackward(x!.data, w!.data, rstd, dy, dx, dw, rows, cols);
    releaseScratch();
  },
  // y = R(pos) x with R orthogonal: dx = R(pos)^T dy = R(-pos) dy
  rope: ({ batchHeads, t, headDim, posOffset, theta }, dy, _out, _inputs, grad) => {
    const dx = grad(0);
    if (!dx) return;
    const k = backend();
    const tmp = allocUninit(dy.length);
    k.rope(dy, tmp, batchHeads, t, headDim, posOffset, theta, true);
    k.axpy(1, tmp, dx);
    release(tmp);
  },
  // o = P v, P = softmax(s q k^T): dv = P^T do; dP = do v^T; dS = P (dP - rowsum(P dP)); dq = s dS k; dk = s dS^T q
  attention: ({ probs, params }, dy, _out, [q, k, v], grad) => {
    const dq = grad(0) ?? scratch(q!.size);
    const dk = grad(1) ?? scratch(k!.size);
    const dv = grad(2) ?? scratch(v!.size);
    backend().attentionBackward(q!.data, k!.data, v!.data, probs, dy, dq, dk, dv, params);
    releaseScratch();
    release(probs); // saved state dies with the node
  },
};
