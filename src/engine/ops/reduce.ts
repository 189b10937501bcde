/** Reductions: sum and mean over any axes, max over one axis, each beside its gradient rule. */
import { ShapeError, fmtShape } from "../../util/errors.js";
import { backend } from "../backends/index.js";
import { Tensor, empty, emptyUninit, needsGrad, record } from "../tensor.js";
import { affine } from "./elementwise.js";
import type { RuleTable } from "./op-set.js";
import { normAxis, stridesOf } from "./shape-util.js";
import { permute, reshape } from "./shape.js";

/** Sorted, de-duplicated, non-negative axes; all axes when `axes` is undefined. */
function resolveAxes(op: string, axes: number | number[] | undefined, ndim: number): number[] {
  if (axes === undefined) return Array.from({ length: ndim }, (_, i) => i);
  const list = (typeof axes === "number" ? [axes] : axes).map((a) => normAxis(op, a, ndim));
  return [...new Set(list)].sort((a, b) => a - b);
}

/** Sum over `axes` (all when omitted); `keepDims` keeps them as size 1. */
export function sum(x: Tensor, axes?: number | number[], keepDims = false): Tensor {
  const ax = resolveAxes("sum", axes, x.ndim);
  const kept = x.shape.map((d, i) => (ax.includes(i) ? 1 : d));
  const outShape = keepDims ? kept : x.shape.filter((_, i) => !ax.includes(i));
  const out = empty(outShape);
  const k = backend();
  // Output strides over the input shape: 0 on reduced axes.
  const keptStrides = stridesOf(kept);
  const stridesOut = x.shape.map((_, i) => (ax.includes(i) ? 0 : keptStrides[i]!));
  const trailing = ax.length > 0 && ax.every((a, i) => a === x.ndim - ax.length + i);
  if (trailing) {
    let cols = 1;
    for (const a of ax) cols *= x.shape[a]!;
    k.sumRows(x.data, out.data, x.size / Math.max(cols, 1), cols);
  } else if (ax.length > 0) {
    k.stridedCopy(x.data, 0, stridesOf(x.shape), out.data, 0, stridesOut, x.shape, true);
  } else out.data.set(x.data);
  return record(out, "sum", [x], { stridesOut });
}

/** Mean over `axes` (all when omitted). */
export function mean(x: Tensor, axes?: number | number[], keepDims = false): Tensor {
  const ax = resolveAxes("mean", axes, x.ndim);
  let n = 1;
  for (const a of ax) n *= x.shape[a]!;
  return affine(sum(x, ax, keepDims), 1 / n, 0);
}

/** Max over one axis (first index wins ties; the gradient goes to it). */
export function max(x: Tensor, axis: number, keepDims = false): Tensor {
  if (x.size === 0) throw new ShapeError(`max: empty tensor ${fmtShape(x.shape)}`);
  const a = normAxis("max", axis, x.ndim);
  if (a !== x.ndim - 1) {
    // Move the axis last, reduce there, and put the result back in place.
    const dims = x.shape.map((_, i) => i).filter((i) => i !== a);
    dims.push(a);
    const m = max(permute(x, dims), -1, false);
    const kept = x.shape.map((d, i) => (i === a ? 1 : d));
    return keepDims ? reshape(m, kept) : m;
  }
  const cols = x.shape[a]!;
  const rows = x.size / cols;
  const outShape = keepDims ? [...x.shape.slice(0, -1), 1] : x.shape.slice(0, -1);
  const out = emptyUninit(outShape);
  const argmax = new Int32Array(rows);
  backend().maxRows(x.data, out.data, argmax, rows, cols);
  if (!needsGrad(x)) return out;
  return record(out, "max", [x], { argmax, cols });
}

/** Reduction rules, each with its derivative. */
export const reduceRules: RuleTable<"sum" | "max"> = {
  // d(sum x) = broadcast(dy) over the reduced axes
  sum: ({ stridesOut }, dy, _out, [x], grad) => {
    const dx = grad(0);
    if (dx) backend().stridedCopy(dy, 0, stridesOut, dx, 0, stridesOf(x!.shape), x!.shape, true);
  },
  // d(max_j x_j) = dy at the argmax, 0 elsewhere
  max: ({ argmax, cols }, dy, _out, _inputs, grad) => {
    const dx = grad(0);
    if (!dx) return;
    // Flat positions of each row's argmax; scatterAdd with dim 1 adds dy[r] there.
    const pos = new Int32Array(argmax.length);
    for (let r = 0; r < argmax.length; r++) pos[r] = r * cols + argmax[r]!;
    backend().scatterAdd(dy, pos, dx, 1);
  },
};
