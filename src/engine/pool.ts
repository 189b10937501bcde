/**
 * A free list of Float32Arrays for buffers whose lifetime the engine itself controls.
 *
 * Fresh large typed arrays are expensive in V8 (an mmap, page faults on first touch, and external-memory
 * pressure that triggers GCs): measured at well under 1 GB/s, slower than the kernels that fill them. The
 * backward pass knows exactly when an intermediate gradient buffer, a saved forward statistic (attention
 * probabilities, log-sum-exp, norm statistics) or a rule's scratch array dies, and returns it here; new
 * outputs and gradients are served from here first. Tensors a caller can see are never released, so nothing
 * needs disposing and no user-visible array is ever reused behind the caller's back.
 *
 * The one exception is asked for: `tidy(fn)` returns every buffer served during `fn` to the pool when it ends,
 * except those holding the result. It is for loops that call a pure forward pass under `noGrad` many times
 * (decoding): there the outputs of every layer die at once, but only the caller knows it. Measured on the
 * wd1 sudoku decode (96 rows, 34 steps), fresh arrays and the GC took 28% of the main thread's time without it.
 */

/** Smallest buffer worth pooling (smaller ones are cheap to allocate). */
const MIN_LENGTH = 4096;
/**
 * Most bytes kept in the pool. Beyond this, a released buffer displaces pooled buffers of the sizes used least
 * recently: a pool that kept the first 512 MB it was given and refused the rest filled up with sizes a run had
 * stopped using (a wd1 run: evaluation batches, SFT shapes), after which every buffer the decoding loop released
 * went to the GC, and V8 ran a full mark-compact about four times a second for the external memory.
 */
let maxPooledBytes = 512 * 1024 * 1024;

/** Free buffers by length; the map's order is least recently used size first (see `touch`). */
const free = new Map<number, Float32Array[]>();
let pooled = new WeakSet<Float32Array>();
let pooledBytes = 0;

/** The buffers served inside each open `tidy` scope, innermost last. */
const scopes: Float32Array[][] = [];

/** A zero-filled Float32Array of `n` elements, reused from the pool when one of that size is free. */
export function allocZeroed(n: number): Float32Array {
  const b = take(n);
  if (b) b.fill(0);
  return track(b ?? new Float32Array(n));
}

/** A Float32Array of `n` elements with unspecified contents, for outputs a kernel overwrites completely. */
export function allocUninit(n: number): Float32Array {
  return track(take(n) ?? new Float32Array(n));
}

function track(b: Float32Array): Float32Array {
  if (scopes.length > 0 && b.length >= MIN_LENGTH) scopes[scopes.length - 1]!.push(b);
  return b;
}

/**
 * Runs `fn` and then returns to the pool every buffer the engine served during it (tensor outputs, scratch), except
 * the buffers behind `keep(result)` (arrays, or views into them; by default the result itself when it is a tensor or
 * an array of tensors). Kept buffers pass to the enclosing scope, if any. Only for code whose intermediate tensors
 * die with it: a forward pass under `noGrad` that stores no tensor anywhere (no graph, no cache built from pooled
 * buffers). A tensor that escapes some other way would have its storage reused behind it.
 */
export function tidy<T>(fn: () => T, keep: (result: T) => readonly Float32Array[] = dataOf): T {
  scopes.push([]);
  let result: T;
  let served: Float32Array[];
  try {
    result = fn();
  } finally {
    served = scopes.pop()!;
  }
  const kept = new Set<ArrayBufferLike>(keep(result).map((a) => a.buffer));
  const outer = scopes[scopes.length - 1];
  for (const b of served) {
    if (!kept.has(b.buffer)) release(b);
    else outer?.push(b);
  }
  return result;
}

/** The storage of a tensor-like result: `.data` of it, or of each element of an array. */
function dataOf(result: unknown): Float32Array[] {
  const one = (x: unknown) => (x as { data?: unknown } | null)?.data;
  const all = Array.isArray(result) ? result.map(one) : [one(result)];
  return all.filter((d): d is Float32Array => d instanceof Float32Array);
}

function take(n: number): Float32Array | null {
  if (n < MIN_LENGTH) return null;
  const list = free.get(n);
  const b = list?.pop();
  if (!b) return null;
  touch(n, list!);
  pooled.delete(b);
  pooledBytes -= b.byteLength;
  return b;
}

/** Marks size `n` as the most recently used: `free` iterates its sizes least recently used first. */
function touch(n: number, list: Float32Array[]): void {
  free.delete(n);
  free.set(n, list);
}

/**
 * Makes room for `bytes` more by dropping pooled buffers of the least recently used sizes (never of size `keep`);
 * false when even that cannot make room.
 */
function evictFor(bytes: number, keep: number): boolean {
  for (const [n, list] of free) {
    if (pooledBytes + bytes <= maxPooledBytes) break;
    if (n === keep) continue;
    while (list.length > 0 && pooledBytes + bytes > maxPooledBytes) {
      const b = list.pop()!;
      pooled.delete(b);
      pooledBytes -= b.byteLength;
    }
    if (list.length === 0) free.delete(n);
  }
  return pooledBytes + bytes <= maxPooledBytes;
}

/**
 * Returns a buffer the caller owns exclusively and will not touch again. Views into larger buffers, small
 * buffers and double releases are ignored.
 */
export function release(b: Float32Array): void {
  if (b.length < MIN_LENGTH || b.byteOffset !== 0 || b.byteLength !== b.buffer.byteLength || pooled.has(b)) return;
  if (b.byteLength > maxPooledBytes) return;
  if (pooledBytes + b.byteLength > maxPooledBytes && !evictFor(b.byteLength, b.length)) return;
  pooled.add(b);
  pooledBytes += b.byteLength;
  const list = free.get(b.length) ?? [];
  touch(b.length, list);
  list.push(b);
}

/**
 * Sets the most bytes the pool keeps (default 512 MiB) and returns the previous limit; a lower limit takes effect
 * as buffers are released. For memory-tight machines, and for tests.
 */
export function setPoolLimit(bytes: number): number {
  if (!(bytes >= 0)) throw new RangeError(`setPoolLimit: bytes must be >= 0, got ${bytes}`);
  const before = maxPooledBytes;
  maxPooledBytes = bytes;
  return before;
}

/** Storage that a caller holds outside the graph (a detached tensor's); `backward` never releases it. */
const escaped = new WeakSet<ArrayBufferLike>();

/** Marks `b`'s storage as the caller's: `backward(loss, { releaseIntermediates })` will not return it to the pool. */
export function markEscaped(b: Float32Array): void {
  escaped.add(b.buffer);
}

/** Whether `markEscaped` was called on storage `buf`. */
export function isEscaped(buf: ArrayBufferLike): boolean {
  return escaped.has(buf);
}

/** Bytes currently held in the pool (for tests and diagnostics). */
export function pooledByteCount(): number {
  return pooledBytes;
}

/** Drops every pooled buffer (the GC reclaims them). */
export function clearPool(): void {
  free.clear();
  pooled = new WeakSet(); // else a dropped buffer could never be pooled again (release ignores "double releases")
  pooledBytes = 0;
}
