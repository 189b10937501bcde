/** sampling layer: batched KV-cache generation with temperature, top-k, top-p, stop strings and log-probs; diffusion unmasking. */
export * from "./sample.js";
export { drawToken, type DrawOptions, type Draw } from "./filter.js";
export { StopWatcher } from "./stop.js";
export { sampleDiffusion, transferSchedule, type DiffusionSample, type DiffusionSampleOptions } from "./diffusion.js";
