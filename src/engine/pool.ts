/**
 * A free list of Float32Arrays for buffers whose lifetime the engine itself controls.
 *
 * Fresh large typed arrays are expensive in V8 (an mmap, page faults on first touch, and external-memory
 * pressure that triggers GCs): measured at well under 1 GB/s, slower than the kernels that fill them. The
 * backward pass knows exactly when an intermediate gradient buffer, a saved forward statistic (attention
 * probabilities, log-sum-exp, norm statistics) or a rule's scratch array dies, and returns it here; new
 * outputs and gradients are served from here first. Tensors a caller can see are never released, so nothing
 * needs disposing and no user-visible array is ever reused behind the caller's back.
 */

/** Smallest buffer worth pooling (smaller ones are cheap to allocate). */
const MIN_LENGTH = 4096;
/** Most bytes kept in the pool; beyond this, released buffers are left to the GC. */
const MAX_POOLED_BYTES = 512 * 1024 * 1024;

const free = new Map<number, Float32Array[]>();
const pooled = new WeakSet<Float32Array>();
let pooledBytes = 0;

/** A zero-filled Float32Array of `n` elements, reused from the pool when one of that size is free. */
export function allocZeroed(n: number): Float32Array {
  const b = take(n);
  if (b) {
    b.fill(0);
    return b;
  }
  return new Float32Array(n);
}

/** A Float32Array of `n` elements with unspecified contents, for outputs a kernel overwrites completely. */
export function allocUninit(n: number): Float32Array {
  return take(n) ?? new Float32Array(n);
}

function take(n: number): Float32Array | null {
  if (n < MIN_LENGTH) return null;
  const list = free.get(n);
  const b = list?.pop();
  if (!b) return null;
  pooled.delete(b);
  pooledBytes -= b.byteLength;
  return b;
}

/**
 * Returns a buffer the caller owns exclusively and will not touch again. Views into larger buffers, small
 * buffers and double releases are ignored.
 */
export function release(b: Float32Array): void {
  if (b.length < MIN_LENGTH || b.byteOffset !== 0 || b.byteLength !== b.buffer.byteLength || pooled.has(b)) return;
  if (pooledBytes + b.byteLength > MAX_POOLED_BYTES) return;
  pooled.add(b);
  pooledBytes += b.byteLength;
  let list = free.get(b.length);
  if (!list) {
    list = [];
    free.set(b.length, list);
  }
  list.push(b);
}

/** Bytes currently held in the pool (for tests and diagnostics). */
export function pooledByteCount(): number {
  return pooledBytes;
}

/** Drops every pooled buffer (the GC reclaims them). */
export function clearPool(): void {
  free.clear();
  pooledBytes = 0;
}
