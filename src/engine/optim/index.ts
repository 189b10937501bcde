/** Optimisers: update rules, the Optimizer that applies them, gradient clipping and LR schedules. */
export * from "./rules.js";
export * from "./optimizer.js";
export * from "./clip.js";
export * from "./schedules.js";
