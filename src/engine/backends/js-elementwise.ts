/**
 * js backend: elementwise kernels (unary, binary with broadcasting, their gradients, where, strided copies).
 * Unary ops are one typed table of forward and derivative loops (`UNARY`); binary ops switch outside the loop.
 * Either way there is no per-element closure call.
 */
import type { BinaryOp, UnaryOp } from "./kernels.js";
import { contiguousStrides, forEachRow } from "./js-strided.js";

const SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);
const GELU_C = 0.044715;

/** One unary op in the js backend: its forward loop and its derivative loop, side by side. */
interface UnaryKernel {
  /** out[i] = f(x[i]). */
  forward(x: Float32Array, out: Float32Array, n: number): void;
  /** dx[i] += dy[i] * f'(x[i]), reading the forward output y where that is cheaper. */
  backward(x: Float32Array, y: Float32Array, dy: Float32Array, dx: Float32Array, n: number): void;
}

/**
 * Every unary op's forward and derivative, typed over the closed set `UnaryOp`: an op added to the set without a
 * derivative here does not compile. Each loop is written out (no per-element closure call) for speed.
 */
const UNARY: { [K in UnaryOp]: UnaryKernel } = {
  // d(-x) = -dx
  neg: {
    forward: (x, out, n) => {
      for (let i = 0; i < n; i++) out[i] = -x[i]!;
    },
    backward: (_x, _y, dy, dx, n) => {
      for (let i = 0; i < n; i++) dx[i]! -= dy[i]!;
    },
  },
  // d(e^x) = e^x dx = y dx
  exp: {
    forward: (x, out, n) => {
      for (let i = 0; i < n; i++) out[i] = Math.exp(x[i]!);
    },
    backward: (_x, y, dy, dx, n) => {
      for (let i = 0; i < n; i++) dx[i]! += dy[i]! * y[i]!;
    },
  },
  // d(log x) = dx / x
  log: {
    forward: (x, out, n) => {
      for (let i = 0; i < n; i++) out[i] = Math.log(x[i]!);
    },
    backward: (x, _y, dy, dx, n) => {
      for (let i = 0; i < n; i++) dx[i]! += dy[i]! / x[i]!;
    },
  },
  // d(sqrt x) = dx / (2 sqrt x) = dx / (2 y)
  sqrt: {
    forward: (x, out, n) => {
      for (let i = 0; i < n; i++) out[i] = Math.sqrt(x[i]!);
    },
    backward: (_x, y, dy, dx, n) => {
      for (let i = 0; i < n; i++) dx[i]! += (dy[i]! * 0.5) / y[i]!;
    },
  },
  // d(x^-1/2) = -1/2 x^-3/2 dx = -1/2 y^3 dx
  rsqrt: {
    forward: (x, out, n) => {
      for (let i = 0; i < n; i++) out[i] = 1 / Math.sqrt(x[i]!);
    },
    backward: (_x, y, dy, dx, n) => {
      for (let i = 0; i < n; i++) {
        const v = y[i]!;
        dx[i]! += dy[i]! * -0.5 * v * v * v;
      }
    },
  },
  // d(tanh x) = (1 - tanh^2 x) dx = (1 - y^2) dx
  tanh: {
    forward: (x, out, n) => {
      for (let i = 0; i < n; i++) out[i] = Math.tanh(x[i]!);
    },
    backward: (_x, y, dy, dx, n) => {
      for (let i = 0; i < n; i++) {
        const v = y[i]!;
        dx[i]! += dy[i]! * (1 - v * v);
      }
    },
  },
  // gelu(x) = x/2 (1 + t), t = tanh(sqrt(2/pi) (x + c x^3));
  // d gelu = [1/2 (1 + t) + 1/2 x (1 - t^2) sqrt(2/pi) (1 + 3 c x^2)] dx
  gelu: {
    forward: (x, out, n) => {
      for (let i = 0; i < n; i++) {
        const v = x[i]!;
        out[i] = 0.5 * v * (1 + Math.tanh(SQRT_2_OVER_PI * (v + GELU_C * v * v * v)));
      }
    },
    backward: (x, _y, dy, dx, n) => {
      for (let i = 0; i < n; i++) {
        const v = x[i]!;
        const t = Math.tanh(SQRT_2_OVER_PI * (v + GELU_C * v * v * v));
        const dt = (1 - t * t) * SQRT_2_OVER_PI * (1 + 3 * GELU_C * v * v);
        dx[i]! += dy[i]! * (0.5 * (1 + t) + 0.5 * v * dt);
      }
    },
  },
  // d(x s(x)) = s(x) (1 + x (1 - s(x))) dx, s = sigmoid
  silu: {
    forward: (x, out, n) => {
      for (let i = 0; i < n; i++) {
        const v = x[i]!;
        out[i] = v / (1 + Math.exp(-v));
      }
    },
    backward: (x, _y, dy, dx, n) => {
      for (let i = 0; i < n; i++) {
        const v = x[i]!;
        const s = 1 / (1 + Math.exp(-v));
        dx[i]! += dy[i]! * s * (1 + v * (1 - s));
      }
    },
  },
  // d relu(x) = [x > 0] dx
  relu: {
    forward: (x, out, n) => {
      for (let i = 0; i < n; i++) {
        const v = x[i]!;
        out[i] = v > 0 ? v : 0;
      }
    },
    backward: (x, _y, dy, dx, n) => {
      for (let i = 0; i < n; i++) if (x[i]! > 0) dx[i]! += dy[i]!;
    },
  },
  // d|x| = sign(x) dx (0 at x = 0)
  abs: {
    forward: (x, out, n) => {
      for (let i = 0; i < n; i++) out[i] = Math.abs(x[i]!);
    },
    backward: (x, _y, dy, dx, n) => {
      for (let i = 0; i < n; i++) {
        const v = x[i]!;
        dx[i]! += v > 0 ? dy[i]! : v < 0 ? -dy[i]! : 0;
      }
    },
  },
  // d s(x) = s(x) (1 - s(x)) dx = y (1 - y) dx
  sigmoid: {
    forward: (x, out, n) => {
      for (let i = 0; i < n; i++) out[i] = 1 / (1 + Math.exp(-x[i]!));
    },
    backward: (_x, y, dy, dx, n) => {
      for (let i = 0; i < n; i++) {
        const v = y[i]!;
        dx[i]! += dy[i]! * v * (1 - v);
      }
    },
  },
};

/** out[i] = f(x[i]). */
export function unary(op: UnaryOp, x: Float32Array, out: Float32Array): void {
  UNARY[op].forward(x, out, x.length);
}

/** dx[i] += dy[i] * f'(x[i]), using the forward output y where that is cheaper. */
export function unaryBackward(op: UnaryOp, x: Float32Array, y: Float32Array, dy: Float32Array, dx: Float32Array): void {
  UNARY[op].backward(x, y, dy, dx, x.length);
}

/** out[i] = x[i] ** p. */
export function powScalar(x: Float32Array, p: number, out: Float32Array): void {
  const n = x.length;
  if (p === 2) for (let i = 0; i < n; i++) out[i] = x[i]! * x[i]!;
  else if (p === 1) out.set(x);
  else for (let i = 0; i < n; i++) out[i] = Math.pow(x[i]!, p);
}

/** out[i] = x[i] * s + t. */
export function affine(x: Float32Array, s: number, t: number, out: Float32Array): void {
  const n = x.length;
  for (let i = 0; i < n; i++) out[i] = x[i]! * s + t;
}

/** y[i] += alpha * x[i]. */
export function axpy(alpha: number, x: Float32Array, y: Float32Array): void {
  const n = x.length;
  if (alpha === 1) for (let i = 0; i < n; i++) y[i]! += x[i]!;
  else for (let i = 0; i < n; i++) y[i]! += alpha * x[i]!;
}

/** Broadcasting binary op; out is contiguous over `shape`. */
export function binary(
  op: BinaryOp,
  a: Float32Array,
  sa: readonly number[],
  b: Float32Array,
  sb: readonly number[],
  out: Float32Array,
  shape: readonly number[],
): void {
  if (a.length === out.length && b.length === out.length && isContiguous(sa, shape) && isContiguous(sb, shape)) {
    BINARY[op].row(a, 0, 1, b, 0, 1, out, 0, out.length);
    return;
  }
  forEachRow(shape, [sa, sb, contiguousStrides(shape)], [0, 0, 0], (oa, ob, oo, _o3, n, ia, ib) =>
    BINARY[op].row(a, oa, ia, b, ob, ib, out, oo, n),
  );
}

/** Whether strides are the contiguous strides of shape (size-1 axes ignored). */
function isContiguous(strides: readonly number[], shape: readonly number[]): boolean {
  let acc = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    if (shape[d] !== 1 && strides[d] !== acc) return false;
    acc *= shape[d]!;
  }
  return true;
}

type GradRow = (oa: number, ob: number, oo: number, n: number, ia: number, ib: number) => void;

/** One binary op in the js backend: its row loop and its derivative's row loop, side by side. */
interface BinaryKernel {
  /** One row: out[oo + j] = a[oa + j ia] op b[ob + j ib]. */
  row(
    a: Float32Array,
    oa: number,
    ia: number,
    b: Float32Array,
    ob: number,
    ib: number,
    out: Float32Array,
    oo: number,
    n: number,
  ): void;
  /** The per-row gradient loop, accumulating into da and db where they are not null. */
  gradRow(
    a: Float32Array,
    b: Float32Array,
    dy: Float32Array,
    da: Float32Array | null,
    db: Float32Array | null,
  ): GradRow;
}

/** d(a ± b) = da ± db. */
const sumGradRow =
  (sign: 1 | -1): BinaryKernel["gradRow"] =>
  (_a, _b, dy, da, db) =>
  (oa, ob, oo, n, ia, ib) => {
    if (da) for (let j = 0; j < n; j++) da[oa + j * ia]! += dy[oo + j]!;
    if (db) for (let j = 0; j < n; j++) db[ob + j * ib]! += sign * dy[oo + j]!;
  };

/** d max(a, b) = [a > b] da + [b > a] db, and min likewise; a tie splits the gradient half and half. */
const extremumGradRow =
  (isMax: boolean): BinaryKernel["gradRow"] =>
  (a, b, dy, da, db) =>
  (oa, ob, oo, n, ia, ib) => {
    for (let j = 0; j < n; j++) {
      const av = a[oa + j * ia]!,
        bv = b[ob + j * ib]!,
        g = dy[oo + j]!;
      const wa = av === bv ? 0.5 : (isMax ? av > bv : av < bv) ? 1 : 0;
      if (da) da[oa + j * ia]! += g * wa;
      if (db) db[ob + j * ib]! += g * (1 - wa);
    }
  };

/** Every binary op's row loop and derivative, typed over the closed set `BinaryOp` (a missing one fails to compile). */
const BINARY: { [K in BinaryOp]: BinaryKernel } = {
  // d(a + b) = da + db
  add: {
    row: (a, oa, ia, b, ob, ib, out, oo, n) => {
      for (let j = 0; j < n; j++) out[oo + j] = a[oa + j * ia]! + b[ob + j * ib]!;
    },
    gradRow: sumGradRow(1),
  },
  // d(a - b) = da - db
  sub: {
    row: (a, oa, ia, b, ob, ib, out, oo, n) => {
      for (let j = 0; j < n; j++) out[oo + j] = a[oa + j * ia]! - b[ob + j * ib]!;
    },
    gradRow: sumGradRow(-1),
  },
  // d(a b) = b da + a db
  mul: {
    row: (a, oa, ia, b, ob, ib, out, oo, n) => {
      for (let j = 0; j < n; j++) out[oo + j] = a[oa + j * ia]! * b[ob + j * ib]!;
    },
    gradRow: (a, b, dy, da, db) => (oa, ob, oo, n, ia, ib) => {
      if (da) for (let j = 0; j < n; j++) da[oa + j * ia]! += dy[oo + j]! * b[ob + j * ib]!;
      if (db) for (let j = 0; j < n; j++) db[ob + j * ib]! += dy[oo + j]! * a[oa + j * ia]!;
    },
  },
  // d(a / b) = da / b - a db / b^2
  div: {
    row: (a, oa, ia, b, ob, ib, out, oo, n) => {
      for (let j = 0; j < n; j++) out[oo + j] = a[oa + j * ia]! / b[ob + j * ib]!;
    },
    gradRow: (a, b, dy, da, db) => (oa, ob, oo, n, ia, ib) => {
      if (da) for (let j = 0; j < n; j++) da[oa + j * ia]! += dy[oo + j]! / b[ob + j * ib]!;
      if (db) {
        for (let j = 0; j < n; j++) {
          const bv = b[ob + j * ib]!;
          db[ob + j * ib]! -= (dy[oo + j]! * a[oa + j * ia]!) / (bv * bv);
        }
      }
    },
  },
  // d max(a, b) = [a > b] da + [b > a] db (ties: half each)
  maximum: {
    row: (a, oa, ia, b, ob, ib, out, oo, n) => {
      for (let j = 0; j < n; j++) out[oo + j] = Math.max(a[oa + j * ia]!, b[ob + j * ib]!);
    },
    gradRow: extremumGradRow(true),
  },
  // d min(a, b) = [a < b] da + [b < a] db (ties: half each)
  minimum: {
    row: (a, oa, ia, b, ob, ib, out, oo, n) => {
      for (let j = 0; j < n; j++) out[oo + j] = Math.min(a[oa + j * ia]!, b[ob + j * ib]!);
    },
    gradRow: extremumGradRow(false),
  },
};

/** Gradient of a broadcasting binary op, reduced onto each input's layout (see Kernels.binaryBackward). */
export function binaryBackward(
  op: BinaryOp,
  a: Float32Array,
  sa: readonly number[],
  b: Float32Array,
  sb: readonly number[],
  dy: Float32Array,
  da: Float32Array | null,
  db: Float32Array | null,
  shape: readonly number[],
): void {
  const row = BINARY[op].gradRow(a, b, dy, da, db);
  forEachRow(shape, [sa, sb, contiguousStrides(shape)], [0, 0, 0], (oa, ob, oo, _o3, n, ia, ib) =>
    row(oa, ob, oo, n, ia, ib),
  );
}

/** out[idx] = cond[idx . sc] !== 0 ? a[idx . sa] : b[idx . sb]. */
export function where(
  cond: Float32Array,
  sc: readonly number[],
  a: Float32Array,
  sa: readonly number[],
  b: Float32Array,
  sb: readonly number[],
  out: Float32Array,
  shape: readonly number[],
): void {
  forEachRow(shape, [sc, sa, sb, contiguousStrides(shape)], [0, 0, 0, 0], (oc, oa, ob, oo, n, ic, ia, ib) => {
    for (let j = 0; j < n; j++) out[oo + j] = cond[oc + j * ic] !== 0 ? a[oa + j * ia]! : b[ob + j * ib]!;
  });
}

/** out[outOffset + idx . outStrides] (+)= x[xOffset + idx . xStrides] over `shape`. */
export function stridedCopy(
  x: Float32Array,
  xOffset: number,
  xStrides: readonly number[],
  out: Float32Array,
  outOffset: number,
  outStrides: readonly number[],
  shape: readonly number[],
  accumulate: boolean,
): void {
  forEachRow(shape, [xStrides, outStrides], [xOffset, outOffset], (ox, oo, _o2, _o3, n, ix, io) => {
    if (accumulate) {
      if (io === 0) {
        let s = 0;
        for (let j = 0; j < n; j++) s += x[ox + j * ix]!;
        out[oo]! += s;
      } else for (let j = 0; j < n; j++) out[oo + j * io]! += x[ox + j * ix]!;
    } else if (ix === 1 && io === 1) {
      // A view object per row costs more than it saves on short rows.
      if (n >= 256) out.set(x.subarray(ox, ox + n), oo);
      else for (let j = 0; j < n; j++) out[oo + j] = x[ox + j]!;
    } else for (let j = 0; j < n; j++) out[oo + j * io] = x[ox + j * ix]!;
  });
}
