/**
 * The Conductor (issue 13, docs/conductor.md): the worker pool, the plan executor and the "conductor" task wired to
 * them. Importing this module registers the task (src/trainer/builtins.ts imports it, so recipes can name it).
 */
import { registerConductorTask } from "./task.js";

export * from "./pool.js";
export * from "./executor.js";
export { buildPool, buildWorker, createConductor, loadWorkerCheckpoint, registerConductorTask } from "./task.js";
export type { ConductorRuntime } from "./task.js";

registerConductorTask();
