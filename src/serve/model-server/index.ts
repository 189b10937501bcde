/** The OpenAI-compatible model server (`rlvr serve <checkpoint>`, docs/model-server.md). */
export { buildModelServer, startModelServer, type ModelServer, type RunningModelServer } from "./server.js";
export { modelServerOptionsSchema, parseModelServerOptions, API_KEY_ENV, type ModelServerOptions } from "./options.js";
export { ModelHost, loadForServing, type LoadedWeights } from "./host.js";
export { BatchScheduler, topLogprobs, type RowRequest, type RowResult, type TopLogprob } from "./scheduler.js";
export { chatFormatter, defaultChatText, type ChatFormatter, type ChatMessage } from "./chat-template.js";
export { OpenAIError } from "./errors.js";
