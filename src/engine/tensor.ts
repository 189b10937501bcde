/**
 * Tensor: a dense, row-major float32 array with a shape, and the node that produced it when autograd is on.
 *
 * Tensors are immutable from the outside: ops return new tensors (reshape and detach share storage). A tensor
 * records its producing op only when grad mode is on and some input requires a gradient, so inference under
 * `noGrad` builds no graph. Memory is plain Float32Array owned by the GC: nothing needs disposing.
 */
import type { Rng } from "../util/rng.js";
import { NonFiniteError, ShapeError, fmtShape } from "../util/errors.js";
import { allocUninit, allocZeroed, markEscaped } from "./pool.js";
import type { Node, OpCtx, OpName } from "./ops/op-set.js";

let gradEnabled = true;

/** Whether ops currently record a graph. */
export function isGradEnabled(): boolean {
  return gradEnabled;
}

/** Runs `fn` with graph recording off (inference, sampling, optimiser updates). */
export function noGrad<T>(fn: () => T): T {
  const prev = gradEnabled;
  gradEnabled = false;
  try {
    return fn();
  } finally {
    gradEnabled = prev;
  }
}

/** Product of a shape's dimensions (1 for a scalar). */
export function shapeSize(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** A dense float32 tensor. */
export class Tensor {
  /** Dimensions, outermost first. */
  readonly shape: readonly number[];
  /** Contiguous row-major storage. */
  readonly data: Float32Array;
  /** Number of elements. */
  readonly size: number;
  /** Whether backward() computes a gradient for this tensor (settable on leaves to freeze/unfreeze). */
  requiresGrad: boolean;
  /** Accumulated gradient of a leaf after backward(); null until then (and after zeroGrad). */
  grad: Float32Array | null = null;
  /** The op that produced this tensor (internal; null for leaves and outside grad mode). */
  node: Node | null = null;
  /** Set when backward() freed the node of this non-leaf (internal). */
  graphFreed = false;

  constructor(data: Float32Array, shape: readonly number[], requiresGrad = false) {
    const size = shapeSize(shape);
    for (const d of shape) {
      if (!Number.isInteger(d) || d < 0) throw new ShapeError(`tensor: invalid shape ${fmtShape(shape)}`);
    }
    if (data.length !== size) {
      throw new ShapeError(`tensor: ${data.length} values do not fill shape ${fmtShape(shape)} (${size} elements)`);
    }
    this.shape = Object.freeze(shape.slice());
    this.data = data;
    this.size = size;
    this.requiresGrad = requiresGrad;
  }

  /** Number of dimensions. */
  get ndim(): number {
    return this.shape.length;
  }

  /** The single value of a one-element tensor. */
  item(): number {
    if (this.size !== 1)
      throw new ShapeError(`item: tensor of shape ${fmtShape(this.shape)} has ${this.size} elements, expected 1`);
    return this.data[0]!;
  }

  /** Values as a flat JS array. */
  toArray(): number[] {
    return Array.from(this.data);
  }

  /**
   * The same values with no graph and no gradient (shares storage, which `backward`'s releaseIntermediates then
   * leaves alone: a detached copy is the caller's).
   */
  detach(): Tensor {
    markEscaped(this.data);
    return new Tensor(this.data, this.shape, false);
  }

  /** The gradient as a tensor of this shape (null before backward). */
  gradTensor(): Tensor | null {
    return this.grad ? new Tensor(this.grad, this.shape) : null;
  }

  toString(): string {
    return `Tensor${fmtShape(this.shape)}`;
  }
}

/** A number or a tensor; numbers broadcast as scalars. */
export type TensorLike = Tensor | number;

/** Wraps a number as a scalar tensor. */
export function asTensor(x: TensorLike): Tensor {
  return typeof x === "number" ? new Tensor(Float32Array.of(x), []) : x;
}

/** A zero-filled output tensor (ops write into it); storage may come from the engine's buffer pool. */
export function empty(shape: readonly number[]): Tensor {
  return new Tensor(allocZeroed(shapeSize(shape)), shape);
}

/** An output tensor with unspecified contents, for ops whose kernel writes every element. */
export function emptyUninit(shape: readonly number[]): Tensor {
  return new Tensor(allocUninit(shapeSize(shape)), shape);
}

/**
 * Attaches op K to `out` when grad mode is on and an input requires a gradient; returns `out`.
 * Ops with costly saved state check `needsGrad` first.
 */
export function record<K extends OpName>(out: Tensor, op: K, inputs: Tensor[], ctx: OpCtx[K]): Tensor {
  if (!gradEnabled) return out;
  for (const t of inputs) {
    if (t.requiresGrad) {
      out.requiresGrad = true;
      out.node = { op, inputs, ctx } as Node;
      return out;
    }
  }
  return out;
}

/** Whether an op on these inputs will record a node (lets ops skip saving state). */
export function needsGrad(...inputs: Tensor[]): boolean {
  if (!gradEnabled) return false;
  for (const t of inputs) if (t.requiresGrad) return true;
  return false;
}

/** A tensor from values and a shape (copied into a new Float32Array). */
export function tensor(
  data: ArrayLike<number>,
  shape: readonly number[],
  opts: { requiresGrad?: boolean } = {},
): Tensor {
  return new Tensor(Float32Array.from(data), shape, opts.requiresGrad ?? false);
}

/** All zeros. */
export function zeros(shape: readonly number[]): Tensor {
  return new Tensor(new Float32Array(shapeSize(shape)), shape);
}

/** All ones. */
export function ones(shape: readonly number[]): Tensor {
  return full(shape, 1);
}

/** Filled with `value`. */
export function full(shape: readonly number[], value: number): Tensor {
  const t = zeros(shape);
  t.data.fill(value);
  return t;
}

/** Normal(0, std^2) samples from a seeded stream. */
export function randn(shape: readonly number[], rng: Rng, std = 1): Tensor {
  const t = zeros(shape);
  const d = t.data;
  for (let i = 0; i < d.length; i++) d[i] = rng.normal() * std;
  return t;
}

/** Uniform samples in [lo, hi) from a seeded stream. */
export function randUniform(shape: readonly number[], rng: Rng, lo: number, hi: number): Tensor {
  const t = zeros(shape);
  const d = t.data;
  for (let i = 0; i < d.length; i++) d[i] = lo + (hi - lo) * rng.random();
  return t;
}

/** A trainable leaf: `init` is a fill value, the values themselves, or a tensor whose data is copied. */
export function param(shape: readonly number[], init: number | ArrayLike<number> | Tensor): Tensor {
  let t: Tensor;
  if (typeof init === "number") t = full(shape, init);
  else if (init instanceof Tensor) t = new Tensor(init.data.slice(), shape);
  else t = new Tensor(Float32Array.from(init), shape);
  t.requiresGrad = true;
  return t;
}
