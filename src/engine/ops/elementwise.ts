/**
 * Elementwise ops: broadcasting binary arithmetic, unary functions, pow, scalar affine and where, each beside
 * its gradient rule. Scalars (plain numbers) take the affine path instead of a broadcast, so `mul(x, 0.5)` is
 * one pass with no scalar tensor.
 */
import { backend } from "../backends/index.js";
import type { BinaryOp, UnaryOp } from "../backends/kernels.js";
import { release, allocUninit } from "../pool.js";
import { Tensor, asTensor, emptyUninit, needsGrad, record, type TensorLike } from "../tensor.js";
import type { GradRule, RuleTable } from "./op-set.js";
import { broadcastShapes, broadcastStrides, sameShape, stridesOf } from "./shape-util.js";

type ElementwiseOp = BinaryOp | UnaryOp | "pow" | "affine" | "where";

// ---- binary ----

function binaryOp(op: BinaryOp, a: Tensor, b: Tensor): Tensor {
  const same = sameShape(a.shape, b.shape);
  const shape = same ? (a.shape as number[]) : broadcastShapes(op, a.shape, b.shape);
  const sa = same ? stridesOf(shape) : broadcastStrides(a.shape, shape);
  const sb = same ? sa : broadcastStrides(b.shape, shape);
  const out = emptyUninit(shape);
  backend().binary(op, a.data, sa, b.data, sb, out.data, shape);
  return record(out, op, [a, b], { stridesA: sa, stridesB: sb });
}

/** One rule serves all six binary ops: the kernel knows each derivative and reduces onto broadcast inputs. */
function binaryRule(op: BinaryOp): GradRule<BinaryOp> {
  return (ctx, dy, out, [a, b], grad, pass) => {
    if ((op === "add" || op === "sub") && a!.size === out.size) {
      // a's gradient is dy itself: hand dy over after b's share is taken (residual adds, bias adds).
      if (b!.requiresGrad)
        backend().binaryBackward(op, a!.data, ctx.stridesA, b!.data, ctx.stridesB, dy, null, grad(1), out.shape);
      pass(0, dy);
      return;
    }
    backend().binaryBackward(op, a!.data, ctx.stridesA, b!.data, ctx.stridesB, dy, grad(0), grad(1), out.shape);
  };
}

/** a + b (broadcasting). */
export function add(a: TensorLike, b: TensorLike): Tensor {
  if (typeof b === "number") return affine(asTensor(a), 1, b);
  if (typeof a === "number") return affine(b, 1, a);
  return binaryOp("add", a, b);
}

/** a - b (broadcasting). */
export function sub(a: TensorLike, b: TensorLike): Tensor {
  if (typeof b === "number") return affine(asTensor(a), 1, -b);
  if (typeof a === "number") return affine(b, -1, a);
  return binaryOp("sub", a, b);
}

/** a * b (broadcasting). */
export function mul(a: TensorLike, b: TensorLike): Tensor {
  if (typeof b === "number") return affine(asTensor(a), b, 0);
  if (typeof a === "number") return affine(b, a, 0);
  return binaryOp("mul", a, b);
}

/** a / b (broadcasting). */
export function div(a: TensorLike, b: TensorLike): Tensor {
  if (typeof b === "number") return affine(asTensor(a), 1 / b, 0);
  return binaryOp("div", asTensor(a), b);
}

/** Elementwise max (ties split the gradient evenly). */
export function maximum(a: TensorLike, b: TensorLike): Tensor {
  return binaryOp("maximum", asTensor(a), asTensor(b));
}

/** Elementwise min (ties split the gradient evenly). */
export function minimum(a: TensorLike, b: TensorLike): Tensor {
  return binaryOp("minimum", asTensor(a), asTensor(b));
}

/** Clamps into [lo, hi]; the gradient is dy inside the interval and 0 outside. */
export function clamp(x: Tensor, lo: number, hi: number): Tensor {
  return minimum(maximum(x, lo), hi);
}

// ---- unary ----

function unaryOp(op: UnaryOp, x: Tensor): Tensor {
  const out = emptyUninit(x.shape);
  backend().unary(op, x.data, out.data);
  return record(out, op, [x], {});
}

/** The kernel holds each unary derivative; this rule only routes buffers. */
function unaryRule(op: UnaryOp): GradRule<UnaryOp> {
  return (_ctx, dy, out, [x], grad) => {
    const dx = grad(0);
    if (dx) backend().unaryBackward(op, x!.data, out.data, dy, dx);
  };
}

/** -x */
export const neg = (x: Tensor): Tensor => unaryOp("neg", x);
/** e^x */
export const exp = (x: Tensor): Tensor => unaryOp("exp", x);
/** Natural log. */
export const log = (x: Tensor): Tensor => unaryOp("log", x);
/** Square root. */
export const sqrt = (x: Tensor): Tensor => unaryOp("sqrt", x);
/** 1 / sqrt(x). */
export const rsqrt = (x: Tensor): Tensor => unaryOp("rsqrt", x);
/** Hyperbolic tangent. */
export const tanh = (x: Tensor): Tensor => unaryOp("tanh", x);
/** GELU, tanh approximation (GPT-2 "gelu_new"): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
export const gelu = (x: Tensor): Tensor => unaryOp("gelu", x);
/** SiLU / swish: x * sigmoid(x). */
export const silu = (x: Tensor): Tensor => unaryOp("silu", x);
/** max(x, 0). */
export const relu = (x: Tensor): Tensor => unaryOp("relu", x);
/** |x| */
export const abs = (x: Tensor): Tensor => unaryOp("abs", x);
/** 1 / (1 + e^-x). */
export const sigmoid = (x: Tensor): Tensor => unaryOp("sigmoid", x);

// ---- pow, affine, where ----

/** x ** p for a constant exponent. */
export function pow(x: Tensor, p: number): Tensor {
  const out = emptyUninit(x.shape);
  backend().powScalar(x.data, p, out.data);
  return record(out, "pow", [x], { p });
}

/** x * s + t for constants (the scalar path of add/sub/mul/div). */
export function affine(x: Tensor, s: number, t: number): Tensor {
  const out = emptyUninit(x.shape);
  backend().affine(x.data, s, t, out.data);
  return record(out, "affine", [x], { s });
}

/** cond ? a : b elementwise with broadcasting; cond is 0/1 and constant (no gradient). */
export function where(cond: Tensor, a: TensorLike, b: TensorLike): Tensor {
  const at = asTensor(a),
    bt = asTensor(b);
  const shape = broadcastShapes("where", cond.shape, at.shape, bt.shape);
  const sc = broadcastStrides(cond.shape, shape);
  const sa = broadcastStrides(at.shape, shape);
  const sb = broadcastStrides(bt.shape, shape);
  const out = emptyUninit(shape);
  backend().where(cond.data, sc, at.data, sa, bt.data, sb, out.data, shape);
  if (!needsGrad(at, bt)) return out;
  return record(out, "where", [at, bt], { cond: cond.data, stridesCond: sc, stridesA: sa, stridesB: sb });
}

/** x with `value` wherever mask is 1 (mask broadcasts against x). */
export function maskedFill(x: Tensor, mask: Tensor, value: number): Tensor {
  return where(mask, value, x);
}

const ZERO = Float32Array.of(0);

/** Elementwise rules, each with its derivative. */
export const elementwiseRules: RuleTable<ElementwiseOp> = {
  add: binaryRule("add"), // d(a + b) = da + db
  sub: binaryRule("sub"), // d(a - b) = da - db
  mul: binaryRule("mul"), // d(a b) = b da + a db
  div: binaryRule("div"), // d(a / b) = da / b - a db / b^2
  maximum: binaryRule("maximum"), // d max(a, b) = [a > b] da + [b > a] db (ties: half each)
  minimum: binaryRule("minimum"), // d min(a, b) = [a < b] da + [b < a] db (ties: half each)
  neg: unaryRule("neg"), // d(-x) = -dx
  exp: unaryRule("exp"), // d(e^x) = e^x dx
  log: unaryRule("log"), // d(log x) = dx / x
  sqrt: unaryRule("sqrt"), // d(sqrt x) = dx / (2 sqrt x)
  rsqrt: unaryRule("rsqrt"), // d(x^-1/2) = -1/2 x^-3/2 dx
  tanh: unaryRule("tanh"), // d(tanh x) = (1 - tanh^2 x) dx
  gelu: unaryRule("gelu"), // d gelu = [0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 c x^2)] dx, t = tanh(...)
  silu: unaryRule("silu"), // d(x s(x)) = s(x) (1 + x (1 - s(x))) dx
  relu: unaryRule("relu"), // d relu = [x > 0] dx
  abs: unaryRule("abs"), // d|x| = sign(x) dx
  sigmoid: unaryRule("sigmoid"), // d s(x) = s(x) (1 - s(x)) dx
  // d(x^p) = p x^(p-1) dx
  pow: ({ p }, dy, out, [x], grad) => {
    const dx = grad(0);
    if (!dx) return;
    const k = backend();
    const slope = allocUninit(x!.size);
    k.powScalar(x!.data, p - 1, slope);
    k.affine(slope, p, 0, slope);
    const s = stridesOf(out.shape);
    // dx += dy * slope (the "mul" rule's da; its a-operand is unused for da)
    k.binaryBackward("mul", slope, s, slope, s, dy, dx, null, out.shape);
    release(slope);
  },
  // d(s x + t) = s dx
  affine: ({ s }, dy, _out, _inputs, grad, pass) => {
    if (s === 1) return pass(0, dy);
    const dx = grad(0);
    if (dx) backend().axpy(s, dy, dx);
  },
  // d(c ? a : b) = c da + (1 - c) db, each reduced onto its input's broadcast layout
  where: ({ cond, stridesCond, stridesA, stridesB }, dy, out, _inputs, grad) => {
    const k = backend();
    const shape = out.shape;
    const sy = stridesOf(shape);
    const zeros = shape.map(() => 0);
    const tmp = allocUninit(out.size);
    const da = grad(0),
      db = grad(1);
    if (da) {
      k.where(cond, stridesCond, dy, sy, ZERO, zeros, tmp, shape);
      k.stridedCopy(tmp, 0, sy, da, 0, stridesA, shape, true);
    }
    if (db) {
      k.where(cond, stridesCond, ZERO, zeros, dy, sy, tmp, shape);
      k.stridedCopy(tmp, 0, sy, db, 0, stridesB, shape, true);
    }
    release(tmp);
  },
};
