/** The shared harness of rlvr's effect benchmarks (docs/benchmarks.md): controls, baselines, splits, gates. */
export { shuffleWithinGroups, withinGroupControl } from "./controls.js";
export {
  DECODINGS,
  ENDPOINT_DECODINGS,
  bestDecoding,
  gainOverBest,
  type Decoding,
  type PassByDecoding,
} from "./decoding.js";
export { benchLine, comparativeGate, summarize, type GateVerdict, type SeedGains } from "./gates.js";
export { heldOutExamples, heldOutHalf, splitFromEnv } from "./splits.js";
export { SFT_START_SOURCES, sourceHash } from "./source-hash.js";
export { countFromEnv, seedsFromEnv } from "./seeds.js";
export {
  seedResult,
  sourcesDiffer,
  storedRecords,
  storedResult,
  type SeedCacheOptions,
  type SeedRecord,
} from "./seed-cache.js";
