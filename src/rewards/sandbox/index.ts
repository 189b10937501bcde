/** Sandbox for model-written code: isolated-vm runner, realm preparation and the reward worker pool (spec §12). */
export {
  runInSandbox,
  runInIsolate,
  runTrustedSync,
  KILL_GRACE_MS,
  type SandboxRequest,
  type SandboxResult,
  type SandboxFailure,
} from "./run.js";
export { FIXED_TIME_MS, realmScript, type RealmOptions, type SandboxAllow } from "./realm.js";
export {
  WorkerPool,
  sharedPool,
  configureSharedPool,
  closeSharedPool,
  moduleUrl,
  jobFault,
  SANDBOX_SETUP_MS,
  type PoolJob,
  type PoolOutcome,
  type PoolOptions,
  type PoolFailureKind,
  type PoolStats,
} from "./pool.js";
export { setJobDeadline } from "./deadline.js";
