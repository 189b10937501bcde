/** Shape arithmetic shared by the ops: broadcasting, strides, axis normalisation. Pure functions, no tensors. */
import { ShapeError, fmtShape } from "../../util/errors.js";

/** Contiguous row-major strides of a shape (one definition, shared with the js backend). */
import { contiguousStrides } from "../backends/js-strided.js";
export const stridesOf = contiguousStrides;

/** NumPy broadcast of shapes; the error names the op (a string, or a thunk built only on error) and every shape. */
export function broadcastShapes(op: string | (() => string), ...shapes: (readonly number[])[]): number[] {
  const nd = Math.max(...shapes.map((s) => s.length));
  const out = new Array<number>(nd).fill(1);
  for (const s of shapes) {
    for (let i = 0; i < s.length; i++) {
      const d = nd - s.length + i;
      const v = s[i]!;
      if (v === out[d] || v === 1) continue;
      if (out[d] === 1) out[d] = v;
      else
        throw new ShapeError(
          `${typeof op === "string" ? op : op()}: shapes ${shapes.map(fmtShape).join(", ")} do not broadcast (axis ${d}: ${out[d]} vs ${v})`,
        );
    }
  }
  return out;
}

/** Strides of `shape` read over the broadcast `outShape`: 0 on axes it is broadcast along. */
export function broadcastStrides(shape: readonly number[], outShape: readonly number[]): number[] {
  const own = stridesOf(shape);
  const off = outShape.length - shape.length;
  return outShape.map((_, d) => (d < off || shape[d - off] === 1 ? 0 : own[d - off]!));
}

/** Resolves a possibly negative axis against `ndim`; the error names the op. */
export function normAxis(op: string, axis: number, ndim: number): number {
  const a = axis < 0 ? axis + ndim : axis;
  if (!Number.isInteger(a) || a < 0 || a >= ndim)
    throw new ShapeError(`${op}: axis ${axis} out of range for ${ndim} dims`);
  return a;
}

/** Whether two shapes are equal. */
export function sameShape(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
