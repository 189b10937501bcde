/** trainer layer: config schema and recipes, the RLVR loop, SFT, evaluation, checkpoints, reporters. */
export * from "./config.js";
export { loadRecipe, resolveConfig } from "./recipe.js";
export { PRESETS, type PresetName } from "./presets.js";
export { train, type TrainOptions, type TrainResult } from "./train.js";
export { evaluate, passAtK, type EvalOptions, type EvalResult } from "./evaluate.js";
export { saveCheckpoint, loadCheckpoint, latestCheckpoint, completeSteps } from "./checkpoints.js";
export {
  consoleReporter,
  jsonlReporter,
  svgReporter,
  type Reporter,
  type StepMetrics,
  type EvalMetrics,
} from "./reporters.js";
export { RunDir } from "./run-dir.js";
export * from "./sft.js";
