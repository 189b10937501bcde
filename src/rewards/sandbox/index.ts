/** Sandbox for model-written code: isolated-vm runner, realm preparation and the reward worker pool (spec §12). */
export { runInSandbox, runTrustedSync, type SandboxRequest, type SandboxResult, type SandboxFailure } from "./run.js";
export { FIXED_TIME_MS, realmScript, type RealmOptions, type SandboxAllow } from "./realm.js";
export { WorkerPool, sharedPool, configureSharedPool, closeSharedPool, moduleUrl, type PoolJob, type PoolOutcome, type PoolOptions } from "./pool.js";
