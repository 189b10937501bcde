/**
 * surfaces layer: the reward service (`rlvr serve-rewards`), rlvr's reward registry behind HTTP
 * (docs/reward-service.md). The Redis queue workers and the trainer clients of issue 17 are not built yet.
 */
export { buildRewardServer, type RewardServer, type RewardServerConfig } from "./server.js";
export { startRewardServer, type RunningRewardServer } from "./start.js";
export { serveOptionsSchema, parseServeOptions, TOKEN_ENV, RETRY_AFTER_S, type ServeOptions } from "./options.js";
export { rewardCatalog, describeOptions, type RewardDoc, type OptionDoc } from "./catalog.js";
export { openApiDocument } from "./openapi.js";
export { scoreItems, toScored, itemError, type ScoringContext } from "./score-items.js";
export { ServiceMetrics, type PoolSnapshot } from "./metrics.js";
export * from "./schemas.js";
