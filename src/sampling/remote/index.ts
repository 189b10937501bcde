/** The remote sampler: generation on an OpenAI-compatible server (docs/remote-sampler.md). */
export * from "./options.js";
export * from "./client.js";
export * from "./remote-sampler.js";
