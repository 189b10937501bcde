/**
 * The closed set of differentiable ops and what each saves for its backward pass.
 *
 * `OpCtx` maps every op name to its saved context, so `OpName = keyof OpCtx` is the whole op set. The gradient
 * table in ../grad-table.ts is typed `{ [K in OpName]: GradRule<K> }`: adding an op here without a gradient rule
 * is a compile error. Each op's forward function and its rule sit side by side in the files of this folder.
 */
import type { AttentionParams, BinaryOp, UnaryOp } from "../backends/kernels.js";
import type { Tensor } from "../tensor.js";

/** Saved by broadcasting binary ops: each input's strides over the output shape (0 on broadcast axes). */
export interface BinaryCtx {
  stridesA: number[];
  stridesB: number[];
}
/** Unary ops need only their input and output, which the node already holds. */
export type UnaryCtx = Record<string, never>;

/** Every op and its saved context. */
export interface OpCtx {
  add: BinaryCtx;
  sub: BinaryCtx;
  mul: BinaryCtx;
  div: BinaryCtx;
  maximum: BinaryCtx;
  minimum: BinaryCtx;
  neg: UnaryCtx;
  exp: UnaryCtx;
  log: UnaryCtx;
  sqrt: UnaryCtx;
  rsqrt: UnaryCtx;
  tanh: UnaryCtx;
  gelu: UnaryCtx;
  silu: UnaryCtx;
  relu: UnaryCtx;
  abs: UnaryCtx;
  sigmoid: UnaryCtx;
  /** x ** p for a constant p. */
  pow: { p: number };
  /** x * s + t for constants s, t. */
  affine: { s: number };
  /** cond ? a : b; cond is a constant. */
  where: { cond: Float32Array; stridesCond: number[]; stridesA: number[]; stridesB: number[] };
  /** Sum over axes; `stridesOut` are the output's strides over the input shape (0 on reduced axes). */
  sum: { stridesOut: number[] };
  /** Max over the last axis; `argmax` per row. */
  max: { argmax: Int32Array; cols: number };
  reshape: Record<string, never>;
  /** out = x.permute(dims); `stridesX` are x's strides permuted into output order. */
  permute: { stridesX: number[] };
  /** out = x[..., start:start+len, ...] along `axis`; `offset` = start * stride(axis). */
  slice: { offset: number; stridesX: number[] };
  /** Inputs laid side by side along `axis`; `offsets[i]` is input i's element offset in the output. */
  concat: { offsets: number[]; stridesOut: number[] };
  matmul: { transA: boolean; transB: boolean; m: number; n: number; k: number; batchShape: number[] };
  /** x (rows, in) @ w^T (+ b): a Linear layer's forward in one op. */
  linear: { rows: number; inF: number; outF: number };
  /** Rows of the table gathered by `ids`. */
  embedding: { ids: Int32Array };
  softmax: { rows: number; cols: number };
  logSoftmax: { rows: number; cols: number };
  /** Per-row cross-entropy; `lse` saved from the forward pass. */
  crossEntropy: { targets: Int32Array; lse: Float32Array; ignoreIndex: number };
  layerNorm: { mean: Float32Array; rstd: Float32Array; rows: number; cols: number };
  rmsNorm: { rstd: Float32Array; rows: number; cols: number };
  rope: { batchHeads: number; t: number; headDim: number; posOffset: number; theta: number };
  attention: { probs: Float32Array; params: AttentionParams };
}

/** Name of a differentiable op. */
export type OpName = keyof OpCtx;

/** A recorded application of op K: its inputs and saved context. */
export interface Node<K extends OpName = OpName> {
  op: K;
  inputs: Tensor[];
  ctx: OpCtx[K];
}

/**
 * A gradient rule: given the upstream gradient `dy` (contiguous, the output's shape), accumulate into the
 * buffer `grad(i)` of each input i that needs a gradient (`null` when it does not). `pass(i, g)` adds a whole
 * buffer of input i's size and may adopt it without copying: call it last, at most once per buffer, and do
 * not touch that buffer afterwards (dy itself may be passed when the input has the output's size).
 */
export type GradRule<K extends OpName> = (
  ctx: OpCtx[K],
  dy: Float32Array,
  out: Tensor,
  inputs: readonly Tensor[],
  grad: (i: number) => Float32Array | null,
  pass: (i: number, g: Float32Array) => void,
) => void;

/** Ops of the given names, for typing one file's slice of the table. */
export type RuleTable<K extends OpName> = { [P in K]: GradRule<P> };

export type { BinaryOp, UnaryOp };
