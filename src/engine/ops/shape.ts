/** Shape ops: reshape (shares storage), permute/transpose, slice and concat (strided copies), with gradients. */
import { ShapeError, fmtShape } from "../../util/errors.js";
import { backend } from "../backends/index.js";
import { Tensor, emptyUninit, record, shapeSize } from "../tensor.js";
import type { RuleTable } from "./op-set.js";
import { normAxis, sameShape, stridesOf } from "./shape-util.js";

/** Same values in a new shape (one -1 is inferred); shares storage. */
export function reshape(x: Tensor, shape: readonly number[]): Tensor {
  const infer = shape.indexOf(-1);
  let target = shape.slice();
  if (infer >= 0) {
    if (shape.indexOf(-1, infer + 1) >= 0) throw new ShapeError(`reshape: ${fmtShape(shape)} has more than one -1`);
    const rest = shapeSize(shape.filter((_, i) => i !== infer));
    if (rest === 0 || x.size % rest !== 0)
      throw new ShapeError(`reshape: cannot view ${fmtShape(x.shape)} as ${fmtShape(shape)}`);
    target[infer] = x.size / rest;
  }
  if (shapeSize(target) !== x.size) {
    throw new ShapeError(`reshape: cannot view ${fmtShape(x.shape)} (${x.size} elements) as ${fmtShape(shape)}`);
  }
  if (sameShape(target, x.shape)) return x;
  return record(new Tensor(x.data, target), "reshape", [x], {});
}

/**
 * Reorders axes: out.shape[i] = x.shape[dims[i]]. A copy, except when the axes of size above 1 keep their order
 * (a decoding step's (B, 1, H, D) → (B, H, 1, D) head split): the values then sit in the same order in memory, so the
 * result is a reshape that shares storage.
 */
export function permute(x: Tensor, dims: readonly number[]): Tensor {
  if (dims.length !== x.ndim) throw new ShapeError(`permute: ${dims.length} dims given for ${fmtShape(x.shape)}`);
  const d = dims.map((a) => normAxis("permute", a, x.ndim));
  if (new Set(d).size !== d.length) throw new ShapeError(`permute: dims (${dims.join(", ")}) repeat an axis`);
  if (d.every((a, i) => a === i)) return x;
  const shape = d.map((a) => x.shape[a]!);
  if (keepsMemoryOrder(x.shape, d)) return reshape(x, shape);
  const xs = stridesOf(x.shape);
  const stridesX = d.map((a) => xs[a]!);
  const out = emptyUninit(shape);
  backend().stridedCopy(x.data, 0, stridesX, out.data, 0, stridesOf(shape), shape, false);
  return record(out, "permute", [x], { stridesX });
}

/** Whether permuting `shape` by `dims` leaves the axes of size above 1 in the same order. */
function keepsMemoryOrder(shape: readonly number[], dims: readonly number[]): boolean {
  let last = -1;
  for (const a of dims) {
    if (shape[a] === 1) continue;
    if (a < last) return false;
    last = a;
  }
  return true;
}

/** Swaps two axes (a copy, or a view as `permute` says). */
export function transpose(x: Tensor, dim0: number, dim1: number): Tensor {
  const a = normAxis("transpose", dim0, x.ndim),
    b = normAxis("transpose", dim1, x.ndim);
  const dims = x.shape.map((_, i) => i);
  dims[a] = b;
  dims[b] = a;
  return permute(x, dims);
}

/** x[..., start:end, ...] along `axis` (a copy; negative start/end count from the end). */
export function slice(x: Tensor, axis: number, start: number, end: number): Tensor {
  const a = normAxis("slice", axis, x.ndim);
  const n = x.shape[a]!;
  const s = start < 0 ? start + n : start,
    e = end < 0 ? end + n : end;
  if (!(Number.isInteger(s) && Number.isInteger(e) && 0 <= s && s <= e && e <= n)) {
    throw new ShapeError(`slice: [${start}, ${end}) out of range for axis ${axis} of ${fmtShape(x.shape)}`);
  }
  const shape = x.shape.slice();
  shape[a] = e - s;
  const stridesX = stridesOf(x.shape);
  const offset = s * stridesX[a]!;
  const out = emptyUninit(shape);
  backend().stridedCopy(x.data, offset, stridesX, out.data, 0, stridesOf(shape), shape, false);
  return record(out, "slice", [x], { offset, stridesX });
}

/** Joins tensors along `axis`; all other dims must match. */
export function concat(xs: readonly Tensor[], axis: number): Tensor {
  if (xs.length === 0) throw new ShapeError("concat: no tensors given");
  const first = xs[0]!;
  const a = normAxis("concat", axis, first.ndim);
  for (const x of xs) {
    const ok = x.ndim === first.ndim && x.shape.every((d, i) => i === a || d === first.shape[i]);
    if (!ok)
      throw new ShapeError(`concat: shapes ${xs.map((t) => fmtShape(t.shape)).join(", ")} differ off axis ${axis}`);
  }
  if (xs.length === 1) return first;
  const shape = first.shape.slice();
  shape[a] = xs.reduce((s, x) => s + x.shape[a]!, 0);
  const out = emptyUninit(shape);
  const stridesOut = stridesOf(shape);
  const k = backend();
  const offsets: number[] = [];
  let at = 0;
  for (const x of xs) {
    offsets.push(at * stridesOut[a]!);
    k.stridedCopy(x.data, 0, stridesOf(x.shape), out.data, at * stridesOut[a]!, stridesOut, x.shape, false);
    at += x.shape[a]!;
  }
  return record(out, "concat", xs.slice(), { offsets, stridesOut });
}

/** Shape-op rules, each with its derivative. */
export const shapeRules: RuleTable<"reshape" | "permute" | "slice" | "concat"> = {
  // d reshape(x) = reshape(dy) back to x's shape (same storage order)
  reshape: (_ctx, dy, _out, _inputs, _grad, pass) => pass(0, dy),
  // d permute(x) = inverse permutation of dy
  permute: ({ stridesX }, dy, out, _inputs, grad) => {
    const dx = grad(0);
    if (dx) backend().stridedCopy(dy, 0, stridesOf(out.shape), dx, 0, stridesX, out.shape, true);
  },
  // d slice(x) = dy placed in the sliced window, 0 elsewhere
  slice: ({ offset, stridesX }, dy, out, _inputs, grad) => {
    const dx = grad(0);
    if (dx) backend().stridedCopy(dy, 0, stridesOf(out.shape), dx, offset, stridesX, out.shape, true);
  },
  // d concat(x_i) = the window of dy that x_i occupies
  concat: ({ offsets, stridesOut }, dy, _out, inputs, grad) => {
    const k = backend();
    inputs.forEach((x, i) => {
      const dx = grad(i);
      if (dx) k.stridedCopy(dy, offsets[i]!, stridesOut, dx, 0, stridesOf(x.shape), x.shape, true);
    });
  },
};
