/**
 * Number formats of the GGUF export: IEEE half floats (GGML type F16) and llama.cpp's Q8_0 blocks.
 *
 * F16: float32 → binary16 with round-to-nearest-even, overflow to ±Inf, subnormals kept (as numpy's astype does,
 * which is what llama.cpp's `convert_hf_to_gguf.py` uses).
 * Q8_0 (ggml `block_q8_0`, ggml/src/ggml-quants.c `quantize_row_q8_0_ref`): each run of 32 values along the first
 * ggml dimension becomes a half-float scale d = max|x| / 127 followed by 32 int8 values round(x / d); 34 bytes per
 * block. The value read back is f16(d) * q.
 */

/** Bytes of one Q8_0 block: an f16 scale and 32 int8 quants. */
export const Q8_0_BLOCK_BYTES = 34;
/** Values per Q8_0 block. */
export const Q8_0_BLOCK = 32;

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The binary16 bit pattern of `x` (round to nearest, ties to even). */
export function toHalfBits(x: number): number {
  f32[0] = x;
  const bits = u32[0]!;
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  let mant = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant !== 0 ? 0x200 : 0); // Inf / NaN
  const e = exp - 127 + 15; // rebias
  if (e >= 0x1f) return sign | 0x7c00; // overflow → Inf
  if (e <= 0) {
    if (e < -10) return sign; // underflows to ±0
    mant |= 0x800000; // implicit leading 1
    const shift = 14 - e;
    let half = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    if (rem > mid || (rem === mid && (half & 1) === 1)) half++;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (half & 1) === 1)) half++; // may carry into the exponent: still right
  return sign | half;
}

/** The value of a binary16 bit pattern. */
export function fromHalfBits(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** float32 values → little-endian binary16 bytes. */
export function encodeF16(data: Float32Array): Uint8Array {
  const out = new Uint8Array(data.length * 2);
  const view = new DataView(out.buffer);
  for (let i = 0; i < data.length; i++) view.setUint16(2 * i, toHalfBits(data[i]!), true);
  return out;
}

/** Little-endian binary16 bytes → float32 values. */
export function decodeF16(bytes: Uint8Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(bytes.byteLength / 2);
  for (let i = 0; i < out.length; i++) out[i] = fromHalfBits(view.getUint16(2 * i, true));
  return out;
}

/** float32 values (a multiple of 32 of them, rows contiguous) → Q8_0 blocks. */
export function encodeQ8_0(data: Float32Array): Uint8Array {
  if (data.length % Q8_0_BLOCK !== 0) throw new RangeError(`Q8_0 needs a multiple of 32 values, got ${data.length}`);
  const blocks = data.length / Q8_0_BLOCK;
  const out = new Uint8Array(blocks * Q8_0_BLOCK_BYTES);
  const view = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    const base = b * Q8_0_BLOCK;
    let amax = 0;
    for (let j = 0; j < Q8_0_BLOCK; j++) amax = Math.max(amax, Math.abs(data[base + j]!));
    const d = Math.fround(amax / 127);
    const id = d !== 0 ? Math.fround(1 / d) : 0;
    const o = b * Q8_0_BLOCK_BYTES;
    view.setUint16(o, toHalfBits(d), true);
    for (let j = 0; j < Q8_0_BLOCK; j++) {
      const q = roundHalfAway(Math.fround(data[base + j]! * id)); // C roundf: halves away from zero
      view.setInt8(o + 2 + j, Math.max(-128, Math.min(127, q)));
    }
  }
  return out;
}

/** Q8_0 blocks → float32 values (f16(d) * q). */
export function decodeQ8_0(bytes: Uint8Array): Float32Array {
  const blocks = bytes.byteLength / Q8_0_BLOCK_BYTES;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(blocks * Q8_0_BLOCK);
  for (let b = 0; b < blocks; b++) {
    const o = b * Q8_0_BLOCK_BYTES;
    const d = fromHalfBits(view.getUint16(o, true));
    for (let j = 0; j < Q8_0_BLOCK; j++) out[b * Q8_0_BLOCK + j] = d * view.getInt8(o + 2 + j);
  }
  return out;
}

function roundHalfAway(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}
