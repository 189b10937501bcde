/** rollout layer: token-in/token-out rollout records, batched group sampling and scoring. */
export * from "./types.js";
export * from "./groups.js";
export * from "./episode.js";
export * from "./conductor/index.js";
