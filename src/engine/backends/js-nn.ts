/**
 * js backend: row-wise neural-network kernels (softmax family, cross-entropy, LayerNorm, RMSNorm, RoPE,
 * attention, embedding gather/scatter). Statistics accumulate in float64 (JS numbers) and are stored as float32.
 */
import type { AttentionParams } from "./kernels.js";

/** Row-wise softmax of a (rows, cols) matrix. */
export function softmax(x: Float32Array, out: Float32Array, rows: number, cols: number): void {
  for (let r = 0; r < rows; r++) {
    const o = r * cols;
    let mx = -Infinity;
    for (let c = 0; c < cols; c++) if (x[o + c]! > mx) mx = x[o + c]!;
    if (mx === -Infinity) {
      out.fill(0, o, o + cols);
      continue;
    }
    let s = 0;
    for (let c = 0; c < cols; c++) {
      const e = Math.exp(x[o + c]! - mx);
      out[o + c] = e;
      s += e;
    }
    const inv = 1 / s;
    for (let c = 0; c < cols; c++) out[o + c]! *= inv;
  }
}

/** dx += y * (dy - sum(dy * y)) per row. */
export function softmaxBackward(y: Float32Array, dy: Float32Array, dx: Float32Array, rows: number, cols: number): void {
  for (let r = 0; r < rows; r++) {
    const o = r * cols;
    let dot = 0;
    for (let c = 0; c < cols; c++) dot += dy[o + c]! * y[o + c]!;
    for (let c = 0; c < cols; c++) dx[o + c]! += y[o + c]! * (dy[o + c]! - dot);
  }
}

/** Log-sum-exp of one row. */
function rowLse(x: Float32Array, o: number, cols: number): number {
  let mx = -Infinity;
  for (let c = 0; c < cols; c++) if (x[o + c]! > mx) mx = x[o + c]!;
  if (mx === -Infinity) return -Infinity;
  let s = 0;
  for (let c = 0; c < cols; c++) s += Math.exp(x[o + c]! - mx);
  return mx + Math.log(s);
}

/** Row-wise log-softmax. */
export function logSoftmax(x: Float32Array, out: Float32Array, rows: number, cols: number): void {
  for (let r = 0; r < rows; r++) {
    const o = r * cols;
    const lse = rowLse(x, o, cols);
    for (let c = 0; c < cols; c++) out[o + c] = x[o + c]! - lse;
  }
}

/** dx += dy - exp(y) * sum(dy) per row. */
export function logSoftmaxBackward(
  y: Float32Array,
  dy: Float32Array,
  dx: Float32Array,
  rows: number,
  cols: number,
): void {
  for (let r = 0; r < rows; r++) {
    const o = r * cols;
    let s = 0;
    for (let c = 0; c < cols; c++) s += dy[o + c]!;
    for (let c = 0; c < cols; c++) dx[o + c]! += dy[o + c]! - Math.exp(y[o + c]!) * s;
  }
}

/** loss[r] = lse(x[r]) - x[r, t[r]] (0 where ignored); saves lse. */
export function crossEntropy(
  logits: Float32Array,
  targets: Int32Array,
  loss: Float32Array,
  lse: Float32Array,
  rows: number,
  cols: number,
  ignoreIndex: number,
): void {
  for (let r = 0; r < rows; r++) {
    const o = r * cols;
    const l = rowLse(logits, o, cols);
    lse[r] = l;
    const t = targets[r]!;
    loss[r] = t === ignoreIndex ? 0 : l - logits[o + t]!;
  }
}

/** dlogits[r] += dloss[r] * (softmax(x[r]) - onehot(t[r])). */
export function crossEntropyBackward(
  logits: Float32Array,
  targets: Int32Array,
  lse: Float32Array,
  dloss: Float32Array,
  dlogits: Float32Array,
  rows: number,
  cols: number,
  ignoreIndex: number,
): void {
  for (let r = 0; r < rows; r++) {
    const t = targets[r]!;
    if (t === ignoreIndex) continue;
    const g = dloss[r]!;
    if (g === 0) continue;
    const o = r * cols;
    const l = lse[r]!;
    for (let c = 0; c < cols; c++) dlogits[o + c]! += g * Math.exp(logits[o + c]! - l);
    dlogits[o + t]! -= g;
  }
}

/** LayerNorm forward; saves mean and rstd per row. */
export function layerNorm(
  x: Float32Array,
  w: Float32Array,
  b: Float32Array | null,
  out: Float32Array,
  mean: Float32Array,
  rstd: Float32Array,
  rows: number,
  cols: number,
  eps: number,
): void {
  for (let r = 0; r < rows; r++) {
    const o = r * cols;
    let s = 0;
    for (let c = 0; c < cols; c++) s += x[o + c]!;
    const mu = s / cols;
    let v = 0;
    for (let c = 0; c < cols; c++) {
      const d = x[o + c]! - mu;
      v += d * d;
    }
    const rs = 1 / Math.sqrt(v / cols + eps);
    mean[r] = mu;
    rstd[r] = rs;
    if (b) for (let c = 0; c < cols; c++) out[o + c] = (x[o + c]! - mu) * rs * w[c]! + b[c]!;
    else for (let c = 0; c < cols; c++) out[o + c] = (x[o + c]! - mu) * rs * w[c]!;
  }
}

/** LayerNorm backward: dx += rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * w. */
export function layerNormBackward(
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
): void {
  for (let r = 0; r < rows; r++) {
    const o = r * cols;
    const mu = mean[r]!,
      rs = rstd[r]!;
    let sg = 0,
      sgx = 0;
    for (let c = 0; c < cols; c++) {
      const xh = (x[o + c]! - mu) * rs;
      const g = dy[o + c]! * w[c]!;
      sg += g;
      sgx += g * xh;
      dw[c]! += dy[o + c]! * xh;
      if (db) db[c]! += dy[o + c]!;
    }
    sg /= cols;
    sgx /= cols;
    for (let c = 0; c < cols; c++) {
      const xh = (x[o + c]! - mu) * rs;
      dx[o + c]! += rs * (dy[o + c]! * w[c]! - sg - xh * sgx);
    }
  }
}

/** RMSNorm forward; saves rstd per row. */
export function rmsNorm(
  x: Float32Array,
  w: Float32Array,
  out: Float32Array,
  rstd: Float32Array,
  rows: number,
  cols: number,
  eps: number,
): void {
  for (let r = 0; r < rows; r++) {
    const o = r * cols;
    let ss = 0;
    for (let c = 0; c < cols; c++) ss += x[o + c]! * x[o + c]!;
    const rs = 1 / Math.sqrt(ss / cols + eps);
    rstd[r] = rs;
    for (let c = 0; c < cols; c++) out[o + c] = x[o + c]! * rs * w[c]!;
  }
}

/** RMSNorm backward: dx += rstd * (g - xhat * mean(g * xhat)) with g = dy * w, xhat = x * rstd. */
export function rmsNormBackward(
  x: Float32Array,
  w: Float32Array,
  rstd: Float32Array,
  dy: Float32Array,
  dx: Float32Array,
  dw: Float32Array,
  rows: number,
  cols: number,
): void {
  for (let r = 0; r < rows; r++) {
    const o = r * cols;
    const rs = rstd[r]!;
    let sgx = 0;
    for (let c = 0; c < cols; c++) {
      const xh = x[o + c]! * rs;
      sgx += dy[o + c]! * w[c]! * xh;
      dw[c]! += dy[o + c]! * xh;
    }
    sgx /= cols;
    for (let c = 0; c < cols; c++) dx[o + c]! += rs * (dy[o + c]! * w[c]! - x[o + c]! * rs * sgx);
  }
}

/** Rotary embedding, rotate-half convention; `inverse` rotates by the negative angle. */
export function rope(
  x: Float32Array,
  out: Float32Array,
  batchHeads: number,
  t: number,
  headDim: number,
  posOffset: number,
  theta: number,
  inverse: boolean,
): void {
  const half = headDim >> 1;
  const cos = new Float64Array(t * half),
    sin = new Float64Array(t * half);
  for (let i = 0; i < half; i++) {
    const invFreq = Math.pow(theta, (-2 * i) / headDim);
    for (let tt = 0; tt < t; tt++) {
      const ang = (posOffset + tt) * invFreq;
      cos[tt * half + i] = Math.cos(ang);
      sin[tt * half + i] = inverse ? -Math.sin(ang) : Math.sin(ang);
    }
  }
  for (let bh = 0; bh < batchHeads; bh++) {
    for (let tt = 0; tt < t; tt++) {
      const o = (bh * t + tt) * headDim;
      const co = tt * half;
      for (let i = 0; i < half; i++) {
        const x1 = x[o + i]!,
          x2 = x[o + i + half]!;
        const c = cos[co + i]!,
          s = sin[co + i]!;
        out[o + i] = x1 * c - x2 * s;
        out[o + i + half] = x2 * c + x1 * s;
      }
    }
  }
}

/** Causal/masked scaled-dot-product attention with grouped KV heads; saves probs (B, H, tq, tk). */
export function attention(
  q: Float32Array,
  k: Float32Array,
  v: Float32Array,
  out: Float32Array,
  probs: Float32Array,
  mask: Float32Array | null,
  p: AttentionParams,
): void {
  const { batch, heads, kvHeads, tq, tk, headDim: d, scale, causal } = p;
  const group = heads / kvHeads;
  for (let b = 0; b < batch; b++) {
    for (let h = 0; h < heads; h++) {
      const kvBase = (b * kvHeads + Math.floor(h / group)) * tk * d;
      for (let i = 0; i < tq; i++) {
        const qo = ((b * heads + h) * tq + i) * d;
        const po = ((b * heads + h) * tq + i) * tk;
        const limit = causal ? Math.min(tk - 1, tk - tq + i) : tk - 1;
        let mx = -Infinity;
        for (let j = 0; j < tk; j++) {
          if (j > limit || (mask && mask[b * tk + j] === 0)) {
            probs[po + j] = -Infinity;
            continue;
          }
          const ko = kvBase + j * d;
          let s = 0;
          for (let c = 0; c < d; c++) s += q[qo + c]! * k[ko + c]!;
          s *= scale;
          probs[po + j] = s;
          if (s > mx) mx = s;
        }
        out.fill(0, qo, qo + d);
        if (mx === -Infinity) {
          probs.fill(0, po, po + tk);
          continue;
        }
        let sum = 0;
        for (let j = 0; j < tk; j++) {
          const e = Math.exp(probs[po + j]! - mx);
          probs[po + j] = e;
          sum += e;
        }
        const inv = 1 / sum;
        for (let j = 0; j < tk; j++) {
          const pj = probs[po + j]! * inv;
          probs[po + j] = pj;
          if (pj === 0) continue;
          const vo = kvBase + j * d;
          for (let c = 0; c < d; c++) out[qo + c]! += pj * v[vo + c]!;
        }
      }
    }
  }
}

/** Attention backward from saved probs; accumulates dq, dk, dv. */
export function attentionBackward(
  q: Float32Array,
  k: Float32Array,
  v: Float32Array,
  probs: Float32Array,
  dout: Float32Array,
  dq: Float32Array,
  dk: Float32Array,
  dv: Float32Array,
  p: AttentionParams,
): void {
  const { batch, heads, kvHeads, tq, tk, headDim: d, scale } = p;
  const group = heads / kvHeads;
  const dp = new Float64Array(tk);
  for (let b = 0; b < batch; b++) {
    for (let h = 0; h < heads; h++) {
      const kvBase = (b * kvHeads + Math.floor(h / group)) * tk * d;
      for (let i = 0; i < tq; i++) {
        const qo = ((b * heads + h) * tq + i) * d;
        const po = ((b * heads + h) * tq + i) * tk;
        let dot = 0;
        for (let j = 0; j < tk; j++) {
          const pj = probs[po + j]!;
          if (pj === 0) {
            dp[j] = 0;
            continue;
          }
          const vo = kvBase + j * d;
          let s = 0;
          for (let c = 0; c < d; c++) {
            s += dout[qo + c]! * v[vo + c]!;
            dv[vo + c]! += pj * dout[qo + c]!;
          }
          dp[j] = s;
          dot += pj * s;
        }
        for (let j = 0; j < tk; j++) {
          const pj = probs[po + j]!;
          if (pj === 0) continue;
          const ds = pj * (dp[j]! - dot) * scale;
          const ko = kvBase + j * d;
          for (let c = 0; c < d; c++) {
            dq[qo + c]! += ds * k[ko + c]!;
            dk[ko + c]! += ds * q[qo + c]!;
          }
        }
      }
    }
  }
}

/** out[i, :] = table[ids[i], :]. */
export function gather(table: Float32Array, ids: Int32Array, out: Float32Array, dim: number): void {
  for (let i = 0; i < ids.length; i++) {
    const src = ids[i]! * dim;
    out.set(table.subarray(src, src + dim), i * dim);
  }
}

/** dtable[ids[i], :] += dout[i, :]. */
export function scatterAdd(dout: Float32Array, ids: Int32Array, dtable: Float32Array, dim: number): void {
  for (let i = 0; i < ids.length; i++) {
    const dst = ids[i]! * dim,
      src = i * dim;
    for (let c = 0; c < dim; c++) dtable[dst + c]! += dout[src + c]!;
  }
}
