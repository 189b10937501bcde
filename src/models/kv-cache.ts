/**
 * Key/value cache for incremental decoding: per layer, the keys and values of every position seen so far, stored
 * (B, Hkv, maxLen, D) so that appending T new positions is one copy per (batch, head).
 *
 * `Transformer.forward` with a cache appends each layer's new keys/values, attends over positions [0, length + T)
 * and then advances `length`. Caches hold no graph: they are for sampling under `noGrad`.
 */
import { ShapeError, fmtShape } from "../util/index.js";
import { Tensor } from "../engine/index.js";

/** Cached keys and values of every layer. */
export class KVCache {
  /** Positions already cached (the next token's position). */
  length = 0;
  private readonly keys: Float32Array[];
  private readonly values: Float32Array[];

  constructor(
    readonly batch: number,
    readonly maxLen: number,
    readonly layers: number,
    readonly kvHeads: number,
    readonly headDim: number,
  ) {
    const size = batch * kvHeads * maxLen * headDim;
    this.keys = Array.from({ length: layers }, () => new Float32Array(size));
    this.values = Array.from({ length: layers }, () => new Float32Array(size));
  }

  /**
   * Writes layer `layer`'s new k, v (B, Hkv, T, D) at positions [length, length + T) and returns the keys and
   * values of positions [0, length + T) as (B, Hkv, length + T, D) tensors. `length` itself is advanced by
   * `advance()` once every layer has appended.
   */
  append(layer: number, k: Tensor, v: Tensor): [Tensor, Tensor] {
    const [b, h, t, d] = k.shape as [number, number, number, number];
    if (b !== this.batch || h !== this.kvHeads || d !== this.headDim || this.length + t > this.maxLen) {
      throw new ShapeError(`KVCache.append: k ${fmtShape(k.shape)} at length ${this.length} does not fit cache (B ${this.batch}, Hkv ${this.kvHeads}, maxLen ${this.maxLen}, D ${this.headDim})`);
    }
    const total = this.length + t;
    return [this.write(this.keys[layer]!, k.data, t, total), this.write(this.values[layer]!, v.data, t, total)];
  }

  /** Moves `length` past the `t` positions just appended by every layer. */
  advance(t: number): void {
    this.length += t;
  }

  private write(store: Float32Array, src: Float32Array, t: number, total: number): Tensor {
    const d = this.headDim;
    const rows = this.batch * this.kvHeads;
    const out = new Float32Array(rows * total * d); // (B, Hkv, total, D)
    for (let r = 0; r < rows; r++) {
      const base = r * this.maxLen * d;
      store.set(src.subarray(r * t * d, (r + 1) * t * d), base + this.length * d);
      out.set(store.subarray(base, base + total * d), r * total * d);
    }
    return new Tensor(out, [this.batch, this.kvHeads, total, d]);
  }
}
