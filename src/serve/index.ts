/**
 * surfaces layer: the reward service (`rlvr serve-rewards`), rlvr's reward registry behind HTTP
 * (docs/reward-service.md), and its Redis queue workers (`rlvr reward-worker`).
 */
export { buildRewardServer, type RewardServer, type RewardServerConfig } from "./server.js";
export { startRewardServer, type RunningRewardServer } from "./start.js";
export { serveOptionsSchema, parseServeOptions, TOKEN_ENV, RETRY_AFTER_S, type ServeOptions } from "./options.js";
export { rewardCatalog, describeOptions, type RewardDoc, type OptionDoc } from "./catalog.js";
export { openApiDocument } from "./openapi.js";
export { scoreItems, toScored, itemError, type ScoringContext } from "./score-items.js";
export { ServiceMetrics, type PoolSnapshot } from "./metrics.js";
export * from "./schemas.js";
export { RewardClient, RewardServiceError, type RewardClientOptions } from "./client.js";
export { QueueScorer, type QueueScorerOptions, type QueueSnapshot } from "./queue-scorer.js";
export { DEFAULT_QUEUE, contentHashOf, jobIdOf, probeRedis, redactUrl, type ScoreJobData } from "./queue-settings.js";
export { startRewardWorker, type RewardWorkerConfig, type RunningRewardWorker } from "./worker.js";
export { workerOptionsSchema, parseWorkerOptions, type WorkerOptions } from "./worker-options.js";
export * from "./model-server/index.js";
