/**
 * Strided iteration for the js backend: walks an n-d index space row by row so that kernels run plain inner
 * loops (one call per row, never per element). Adjacent axes that are contiguous for every operand are merged
 * first, so a same-shape elementwise op is a single row and a bias add is (rows, cols).
 */

/** Merges adjacent axes that are contiguous in every stride set; drops size-1 axes. */
export function collapse(
  shape: readonly number[],
  strides: readonly (readonly number[])[],
): { shape: number[]; strides: number[][] } {
  const outShape: number[] = [];
  const outStrides: number[][] = strides.map(() => []);
  for (let d = 0; d < shape.length; d++) {
    const n = shape[d]!;
    if (n === 1) continue;
    const last = outShape.length - 1;
    // Axis d merges into the previous kept axis when, for every operand, stride(prev) = stride(d) * n.
    const mergeable = last >= 0 && strides.every((s, i) => outStrides[i]![last] === s[d]! * n);
    if (mergeable) {
      outShape[last]! *= n;
      strides.forEach((s, i) => (outStrides[i]![last] = s[d]!));
    } else {
      outShape.push(n);
      strides.forEach((s, i) => outStrides[i]!.push(s[d]!));
    }
  }
  return { shape: outShape, strides: outStrides };
}

/** Row callback: offsets of the row's first element in each operand, row length, inner strides. */
export type RowFn = (
  o0: number,
  o1: number,
  o2: number,
  o3: number,
  n: number,
  s0: number,
  s1: number,
  s2: number,
  s3: number,
) => void;

/**
 * Calls `fn` once per innermost row of `shape` with the row's starting offset in up to four operands
 * (unused operands pass all-zero strides). `base` holds each operand's starting offset.
 */
export function forEachRow(
  shape: readonly number[],
  strides: readonly (readonly number[])[],
  base: readonly number[],
  fn: RowFn,
): void {
  const c = collapse(shape, strides);
  const nd = c.shape.length;
  const st = [0, 1, 2, 3].map((i) => c.strides[i] ?? new Array<number>(nd).fill(0));
  let o0 = base[0] ?? 0,
    o1 = base[1] ?? 0,
    o2 = base[2] ?? 0,
    o3 = base[3] ?? 0;
  if (shape.some((n) => n === 0)) return;
  if (nd === 0) {
    fn(o0, o1, o2, o3, 1, 0, 0, 0, 0);
    return;
  }
  const inner = c.shape[nd - 1]!;
  const [t0, t1, t2, t3] = st as [number[], number[], number[], number[]];
  const i0 = t0[nd - 1]!,
    i1 = t1[nd - 1]!,
    i2 = t2[nd - 1]!,
    i3 = t3[nd - 1]!;
  let rows = 1;
  for (let d = 0; d < nd - 1; d++) rows *= c.shape[d]!;
  const idx = new Array<number>(Math.max(nd - 1, 0)).fill(0);
  for (let r = 0; r < rows; r++) {
    fn(o0, o1, o2, o3, inner, i0, i1, i2, i3);
    for (let d = nd - 2; d >= 0; d--) {
      o0 += t0[d]!;
      o1 += t1[d]!;
      o2 += t2[d]!;
      o3 += t3[d]!;
      if (++idx[d]! < c.shape[d]!) break;
      const n = c.shape[d]!;
      o0 -= t0[d]! * n;
      o1 -= t1[d]! * n;
      o2 -= t2[d]! * n;
      o3 -= t3[d]! * n;
      idx[d] = 0;
    }
  }
}

/** Contiguous row-major strides of a shape. */
export function contiguousStrides(shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length);
  let acc = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    s[d] = acc;
    acc *= shape[d]!;
  }
  return s;
}
