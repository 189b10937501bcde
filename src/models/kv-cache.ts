/**
 * Key/value cache for incremental decoding: per layer, the keys and values of every position seen so far, stored
 * (B, Hkv, maxLen, D) so that appending T new positions is one copy per (batch, head).
 *
 * `Transformer.forward` with a cache appends each layer's new keys/values and then advances `length`. What the
 * attention then reads depends on the call, to avoid copying the cache on every decoding step:
 * - prefill (empty cache): the new keys/values themselves, causal;
 * - one new token: the whole buffer as it is, with causal masking off and a key mask that hides the slots not yet
 *   written (a single query may see every cached position anyway);
 * - several new tokens after a prefill: a contiguous copy of positions [0, length + T), causal.
 * Caches hold no graph: they are for sampling under `noGrad`.
 */
import { ShapeError, fmtShape } from "../util/index.js";
import { Tensor, allocZeroed, backend, releaseBuffer } from "../engine/index.js";

/** Keys, values and masking for one attention call over the cache. */
export interface CachedKV {
  /** (B, Hkv, Tk, D). */
  k: Tensor;
  v: Tensor;
  /** (B, Tk) key mask, or null for none. */
  mask: Float32Array | null;
  causal: boolean;
}

/** Cached keys and values of every layer. */
export class KVCache {
  /** Positions already cached (the next token's position). */
  length = 0;
  private readonly keys: Float32Array[];
  private readonly values: Float32Array[];
  private released = false;
  private lastSlotMask: { total: number; mask: Float32Array | null; out: Float32Array } | null = null;

  constructor(
    readonly batch: number,
    readonly maxLen: number,
    readonly layers: number,
    readonly kvHeads: number,
    readonly headDim: number,
  ) {
    const size = batch * kvHeads * maxLen * headDim;
    this.keys = Array.from({ length: layers }, () => allocZeroed(size));
    this.values = Array.from({ length: layers }, () => allocZeroed(size));
  }

  /**
   * Returns the stores to the engine's buffer pool, for the next cache of the same shape; the cache is unusable
   * after (an append throws). For a sampler that knows its cache is dead: an RL run decodes every step, and left to
   * the GC the stores are fresh arrays each time.
   */
  release(): void {
    if (this.released) return;
    this.released = true;
    for (const b of [...this.keys, ...this.values]) releaseBuffer(b);
  }

  /**
   * Writes layer `layer`'s new k, v (B, Hkv, T, D) at positions [length, length + T) and returns what attention
   * over positions [0, length + T) should read. `mask` is the caller's (B, length + T) padding mask or null.
   * `length` itself is advanced by `advance()` once every layer has appended.
   */
  append(layer: number, k: Tensor, v: Tensor, mask: Float32Array | null): CachedKV {
    const [b, h, t, d] = k.shape as [number, number, number, number];
    if (this.released) throw new Error("KVCache.append: this cache was released");
    if (b !== this.batch || h !== this.kvHeads || d !== this.headDim || this.length + t > this.maxLen) {
      throw new ShapeError(
        `KVCache.append: k ${fmtShape(k.shape)} at length ${this.length} does not fit cache (B ${this.batch}, Hkv ${this.kvHeads}, maxLen ${this.maxLen}, D ${this.headDim})`,
      );
    }
    this.store(this.keys[layer]!, k.data, t);
    this.store(this.values[layer]!, v.data, t);
    if (this.length === 0) return { k, v, mask, causal: true };
    const total = this.length + t;
    if (t === 1) {
      const shape = [this.batch, this.kvHeads, this.maxLen, d];
      return {
        k: new Tensor(this.keys[layer]!, shape),
        v: new Tensor(this.values[layer]!, shape),
        mask: this.slotMask(mask, total),
        causal: false,
      };
    }
    return { k: this.prefix(this.keys[layer]!, total), v: this.prefix(this.values[layer]!, total), mask, causal: true };
  }

  /** Moves `length` past the `t` positions just appended by every layer. */
  advance(t: number): void {
    this.length += t;
    this.lastSlotMask = null;
  }

  /** Copies src (B, Hkv, t, D) into positions [length, length + t) of the store: one strided copy. */
  private store(store: Float32Array, src: Float32Array, t: number): void {
    const d = this.headDim;
    const shape = [this.batch * this.kvHeads, t, d];
    backend().stridedCopy(src, 0, [t * d, d, 1], store, this.length * d, [this.maxLen * d, d, 1], shape, false);
  }

  /** Positions [0, total) as a contiguous (B, Hkv, total, D) tensor. */
  private prefix(store: Float32Array, total: number): Tensor {
    const d = this.headDim;
    const rows = this.batch * this.kvHeads;
    const out = new Float32Array(rows * total * d);
    for (let r = 0; r < rows; r++)
      out.set(store.subarray(r * this.maxLen * d, (r * this.maxLen + total) * d), r * total * d);
    return new Tensor(out, [this.batch, this.kvHeads, total, d]);
  }

  /**
   * (B, maxLen): the caller's mask over the first `total` slots, 0 for slots not yet written. Every layer of one
   * decoding step asks for the same one, so it is kept until `advance()`.
   */
  private slotMask(mask: Float32Array | null, total: number): Float32Array {
    const last = this.lastSlotMask;
    if (last && last.total === total && last.mask === mask) return last.out;
    const out = new Float32Array(this.batch * this.maxLen);
    this.lastSlotMask = { total, mask, out };
    for (let b = 0; b < this.batch; b++) {
      if (mask) out.set(mask.subarray(b * total, (b + 1) * total), b * this.maxLen);
      else out.fill(1, b * this.maxLen, b * this.maxLen + total);
    }
    return out;
  }
}
