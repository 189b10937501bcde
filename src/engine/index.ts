/**
 * The engine's public API (docs/engine-api.md): tensors and autograd, ops, backends, nn modules, optimisers
 * and safetensors I/O. Other layers import from here only.
 */
export {
  Tensor,
  tensor,
  zeros,
  ones,
  full,
  randn,
  randUniform,
  param,
  noGrad,
  isGradEnabled,
  shapeSize,
} from "./tensor.js";
export type { TensorLike } from "./tensor.js";
export { backward } from "./autograd.js";
export { allocZeroed, release as releaseBuffer, setPoolLimit, tidy } from "./pool.js";
export * from "./ops/index.js";
export type { OpName } from "./ops/op-set.js";
export { backend, setBackend, availableBackends, type BackendName } from "./backends/index.js";
export { profileKernels, type KernelTiming } from "./backends/profile.js";
export type { Kernels, MatmulParams, AttentionParams, UnaryOp, BinaryOp } from "./backends/kernels.js";
export * from "./nn/index.js";
export * from "./optim/index.js";
export * from "./safetensors.js";
