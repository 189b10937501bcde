/** Kernel speed reward, CPU edition: backend interface, V8 backend, timing harness and reward specs (spec §10). */
export {
  kernelSpeedReward,
  kernelCorrectReward,
  kernelOptions,
  scoreKernel,
  speedScore,
  extractKernel,
  naiveKernelCompletion,
  type KernelGold,
  type KernelOptions,
} from "./reward.js";
export { evaluateKernel, referenceMatmul, deriveSeed, DEFAULT_HARNESS, type HarnessOptions } from "./harness.js";
export { decideSpeedup, DEFAULT_SIGNIFICANCE, type Significance, type SignificanceOptions } from "./significance.js";
export { structuralProbes, probeShapes } from "./probes.js";
export { v8Backend } from "./js-backend.js";
export { staticScreen } from "./static-screen.js";
export { NAIVE_MATMUL, BLOCKED_MATMUL, BASELINES } from "./baselines.js";
export {
  PROFILES,
  type KernelBackend,
  type LoadedKernel,
  type KernelEvaluation,
  type MatmulShape,
  type TimingProfile,
  type CheckRecord,
  type PlacedBuffers,
  type OperandRef,
  type TimedCall,
} from "./types.js";
export { compileWat, watGlueSource, NAIVE_MATMUL_WAT } from "./wat.js";
