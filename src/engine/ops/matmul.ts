/**
 * Batched matrix product with transpose flags and broadcast leading dims, and its gradient.
 *
 * Transposes never materialise: op(A) and op(B) are kernel flags. `bmm` plans each product (forward and both
 * gradients) as few kernel calls as it can: one call when batches line up or one side is shared, folding a
 * shared right-hand matrix into the rows (a Linear layer over (B, T, D) is one (B*T, D) product) or a
 * reduced gradient into the inner dimension (dW sums over the batch inside one product).
 */
import { ShapeError, fmtShape } from "../../util/errors.js";
import { backend } from "../backends/index.js";
import { Tensor, emptyUninit, record, shapeSize } from "../tensor.js";
import type { RuleTable } from "./op-set.js";
import { broadcastShapes, broadcastStrides } from "./shape-util.js";

/** Options of matmul: use A or B transposed (their last two axes swapped). */
export interface MatmulOptions {
  transA?: boolean;
  transB?: boolean;
}

/** One operand of a planned product: data, per-batch strides over the iteration shape, matrix size. */
interface Operand {
  data: Float32Array;
  strides: number[];
  matSize: number;
}

function isContiguous(strides: readonly number[], shape: readonly number[], matSize: number): boolean {
  let acc = matSize;
  for (let d = shape.length - 1; d >= 0; d--) {
    if (shape[d]! !== 1 && strides[d] !== acc) return false;
    acc *= shape[d]!;
  }
  return true;
}
const isShared = (s: readonly number[]): boolean => s.every((v) => v === 0);

/**
 * C (+)= op(A) @ op(B) for every index of `iter` (the broadcast batch shape); A, B and C each step through
 * the batch by their own strides (0 = shared or, for C with accumulate, summed over).
 */
function bmm(
  A: Operand,
  B: Operand,
  C: Operand,
  iter: number[],
  m: number,
  n: number,
  k: number,
  transA: boolean,
  transB: boolean,
  accumulate: boolean,
): void {
  const kern = backend();
  const batch = shapeSize(iter);
  const aC = isContiguous(A.strides, iter, A.matSize),
    bC = isContiguous(B.strides, iter, B.matSize);
  const cC = isContiguous(C.strides, iter, C.matSize);
  const aS = isShared(A.strides),
    bS = isShared(B.strides),
    cS = isShared(C.strides);
  if (batch === 1 || (cC && (aC || aS) && (bC || bS))) {
    if (cC && aC && bS && !transA && batch > 1) {
      // Shared B: stack A's batch into rows.
      kern.matmul(A.data, B.data, C.data, {
        batch: 1,
        m: batch * m,
        n,
        k,
        transA,
        transB,
        strideA: 0,
        strideB: 0,
        accumulate,
      });
    } else {
      kern.matmul(A.data, B.data, C.data, {
        batch,
        m,
        n,
        k,
        transA,
        transB,
        strideA: aS ? 0 : A.matSize,
        strideB: bS ? 0 : B.matSize,
        accumulate,
      });
    }
    return;
  }
  if (cS && aC && bC && transA && !transB) {
    // C summed over the batch: sum_b A_b^T B_b = [A_0; A_1; ...]^T [B_0; B_1; ...], one product with k' = batch*k.
    kern.matmul(A.data, B.data, C.data, {
      batch: 1,
      m,
      n,
      k: batch * k,
      transA,
      transB,
      strideA: 0,
      strideB: 0,
      accumulate,
    });
    return;
  }
  // General case: one kernel call per batch index.
  const idx = new Array<number>(iter.length).fill(0);
  const cleared = new Set<number>();
  for (let bi = 0; bi < batch; bi++) {
    let oa = 0,
      ob = 0,
      oc = 0;
    for (let d = 0; d < iter.length; d++) {
      oa += idx[d]! * A.strides[d]!;
      ob += idx[d]! * B.strides[d]!;
      oc += idx[d]! * C.strides[d]!;
    }
    const acc = accumulate || cleared.has(oc);
    cleared.add(oc);
    kern.matmul(
      A.data.subarray(oa, oa + A.matSize),
      B.data.subarray(ob, ob + B.matSize),
      C.data.subarray(oc, oc + C.matSize),
      {
        batch: 1,
        m,
        n,
        k,
        transA,
        transB,
        strideA: 0,
        strideB: 0,
        accumulate: acc,
      },
    );
    for (let d = iter.length - 1; d >= 0; d--) {
      if (++idx[d]! < iter[d]!) break;
      idx[d] = 0;
    }
  }
}

/** Batch strides (in matrices' elements) of an operand with batch shape `batch` over the iteration shape. */
function batchStrides(batch: readonly number[], iter: readonly number[], matSize: number): number[] {
  return broadcastStrides(batch, iter).map((s) => s * matSize);
}

/** (..., m, k) @ (..., k, n) → (..., m, n), with optional transposes and broadcast leading dims. */
export function matmul(a: Tensor, b: Tensor, opts: MatmulOptions = {}): Tensor {
  const transA = opts.transA ?? false,
    transB = opts.transB ?? false;
  // Built only for error messages.
  const desc = (): string => `${fmtShape(a.shape)}${transA ? "^T" : ""} @ ${fmtShape(b.shape)}${transB ? "^T" : ""}`;
  if (a.ndim < 2 || b.ndim < 2) throw new ShapeError(`matmul: ${desc()}: both operands need at least 2 dims`);
  const [ar, ac] = a.shape.slice(-2) as [number, number];
  const [br, bc] = b.shape.slice(-2) as [number, number];
  const m = transA ? ac : ar,
    ka = transA ? ar : ac;
  const kb = transB ? bc : br,
    n = transB ? br : bc;
  if (ka !== kb) throw new ShapeError(`matmul: ${desc()}: inner dims ${ka} != ${kb}`);
  const batchA = a.shape.slice(0, -2),
    batchB = b.shape.slice(0, -2);
  const batchShape =
    batchA.length === 0 && batchB.length === 0
      ? []
      : broadcastShapes(() => `matmul: ${desc()}: batch dims`, batchA, batchB);
  const out = emptyUninit([...batchShape, m, n]);
  bmm(
    { data: a.data, strides: batchStrides(batchA, batchShape, ar * ac), matSize: ar * ac },
    { data: b.data, strides: batchStrides(batchB, batchShape, br * bc), matSize: br * bc },
    { data: out.data, strides: batchStrides(batchShape, batchShape, m * n), matSize: m * n },
    batchShape,
    m,
    n,
    ka,
    transA,
    transB,
    false,
  );
  return record(out, "matmul", [a, b], { transA, transB, m, n, k: ka, batchShape });
}

/**
 * A fully connected layer in one op: x (..., in) @ w^T + b with w (out, in), b (out) or null → (..., out).
 * The bias is written into the output first and the product accumulates onto it, so no separate add pass.
 */
export function linear(x: Tensor, w: Tensor, b: Tensor | null): Tensor {
  const inF = x.shape[x.ndim - 1]!;
  if (x.ndim < 1 || w.ndim !== 2 || w.shape[1] !== inF || (b && (b.ndim !== 1 || b.shape[0] !== w.shape[0]))) {
    throw new ShapeError(
      `linear: x ${fmtShape(x.shape)}, weight ${fmtShape(w.shape)}${b ? `, bias ${fmtShape(b.shape)}` : ""}: need weight (out, ${inF}) and bias (out)`,
    );
  }
  const outF = w.shape[0]!;
  const rows = x.size / inF;
  const out = emptyUninit([...x.shape.slice(0, -1), outF]);
  const k = backend();
  if (b) k.stridedCopy(b.data, 0, [0, 1], out.data, 0, [outF, 1], [rows, outF], false); // every row = b
  k.matmul(x.data, w.data, out.data, {
    batch: 1,
    m: rows,
    n: outF,
    k: inF,
    transA: false,
    transB: true,
    strideA: 0,
    strideB: 0,
    accumulate: b !== null,
  });
  return record(out, "linear", b ? [x, w, b] : [x, w], { rows, inF, outF });
}

/** Matmul and linear rules. */
export const matmulRules: RuleTable<"matmul" | "linear"> = {
  // y = x w^T + b:  dx = dy w,  dw = dy^T x,  db = sum over rows of dy
  linear: ({ rows, inF, outF }, dy, _out, [x, w, b], grad) => {
    const k = backend();
    const dx = grad(0),
      dw = grad(1),
      db = b ? grad(2) : null;
    const flat = { batch: 1, transA: false, transB: false, strideA: 0, strideB: 0, accumulate: true };
    if (dx) k.matmul(dy, w!.data, dx, { ...flat, m: rows, n: inF, k: outF });
    if (dw) k.matmul(dy, x!.data, dw, { ...flat, m: outF, n: inF, k: rows, transA: true });
    if (db) k.stridedCopy(dy, 0, [outF, 1], db, 0, [0, 1], [rows, outF], true);
  },
  // C = op(A) op(B):  d op(A) = dC op(B)^T,  d op(B) = op(A)^T dC  (then undo each op's transpose)
  matmul: ({ transA, transB, m, n, k, batchShape }, dy, _out, [a, b], grad) => {
    const A = a!,
      B = b!;
    const aMat = m * k,
      bMat = k * n,
      cMat = m * n;
    const opA = { data: A.data, strides: batchStrides(A.shape.slice(0, -2), batchShape, aMat), matSize: aMat };
    const opB = { data: B.data, strides: batchStrides(B.shape.slice(0, -2), batchShape, bMat), matSize: bMat };
    const opC = { data: dy, strides: batchStrides(batchShape, batchShape, cMat), matSize: cMat };
    const da = grad(0),
      db = grad(1);
    if (da) {
      const dA = { ...opA, data: da };
      // A used plain: dA (m,k) = dC (m,n) @ op(B)^T.  A used transposed: dA (k,m) = op(B) (k,n) @ dC^T.
      if (!transA) bmm(opC, opB, dA, batchShape, m, k, n, false, !transB, true);
      else bmm(opB, opC, dA, batchShape, k, m, n, transB, true, true);
    }
    if (db) {
      const dB = { ...opB, data: db };
      // B used plain: dB (k,n) = op(A)^T (k,m) @ dC.  B used transposed: dB (n,k) = dC^T (n,m) @ op(A).
      if (!transB) bmm(opA, opC, dB, batchShape, k, n, m, !transA, false, true);
      else bmm(opC, opA, dB, batchShape, n, k, m, true, transA, true);
    }
  },
};
