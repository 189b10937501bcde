/** util layer: seeded RNG, errors, atomic files and JSONL, small statistics, shared formulas. Imports nothing of ours. */
export * from "./rng.js";
export * from "./errors.js";
export * from "./files.js";
export * from "./stats.js";
export * from "./overlong.js";
