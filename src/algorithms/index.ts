/**
 * algorithms layer entry: the recipe schema of the `algorithm` section, `buildAlgorithm` (what the training loop
 * calls), advantage estimators over number arrays, the policy-loss pieces and the loss over per-token arrays,
 * reward shaping, presets and step metrics. See docs/algorithms.md.
 */
export * from "./schema.js";
export * from "./build.js";
export * from "./reward-shaping.js";
export * from "./advantage-options.js";
export {
  computeAdvantages,
  isZeroStd,
  checkNullRewards,
  zScore,
  meanOnly,
  rloo,
  whiten,
  tokenReturns,
  NullRewardError,
  ZERO_STD,
  type AdvantageResult,
} from "./advantages.js";
export * from "./loss-options.js";
export * from "./pieces.js";
export { policyLoss, lossNormalizer, type PolicyLossInput, type PolicyLossResult } from "./policy-loss.js";
export * from "./presets.js";
export * from "./metrics.js";
export * from "./zero-std.js";
export * from "./off-policy.js";
export * from "./multi-term.js";
export * from "./replay-buffer.js";
export * from "./exgrpo-loss.js";
export * from "./trl-options.js";
export * from "./masked-estimator.js";
export * from "./wd1.js";
export * from "./diffusion-loss.js";
