/**
 * The rewards layer: contract, registry and every built-in checker. Importing this module registers the built-in
 * rewards in the process-wide registry (`rewards`). Each reward family adds one line below and registers itself when
 * imported (the text-checkable families through text-rewards.ts).
 */
export * from "./types.js";
export * from "./registry.js";
export * from "./text-rewards.js";
export * from "./sandbox/index.js";
export * from "./solver/index.js";
export * from "./kernel/index.js";
export * from "./car/index.js";
export * from "./countdown.js";
export * from "./boxed-format.js";
export * from "./working-steps.js";
