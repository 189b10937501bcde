/**
 * Options of the model server (`rlvr serve <checkpoint>`), with defaults and limits documented once here
 * (docs/model-server.md "Options"; the CLI flags and their help come from this schema).
 *
 * Memory is bounded by construction: a request body is at most `maxBodyBytes`, a batch holds at most `maxBatchRows`
 * rows (one row per prompt × n), and at most `maxWaitingRows` rows wait for a batch (429 beyond).
 */
import { z } from "zod";

/** The environment variable that supplies the API key when `--api-key` is not given. */
export const API_KEY_ENV = "RLVR_MODEL_SERVER_KEY";

/** Model-server options; every field has a default. */
export const modelServerOptionsSchema = z
  .object({
    port: z.number().int().min(0).max(65535).default(8000).describe("TCP port (0 picks a free one)"),
    host: z.string().min(1).default("127.0.0.1").describe("address to bind (loopback by default)"),
    apiKey: z
      .string()
      .min(1)
      .optional()
      .describe(`API key every /v1 request must carry as a bearer token (default: $${API_KEY_ENV}, else none)`),
    modelName: z
      .string()
      .min(1)
      .optional()
      .describe("model id clients name in requests (default: the checkpoint folder's name)"),
    maxBatchRows: z
      .number()
      .int()
      .min(1)
      .default(32)
      .describe("most rows (prompts × n) decoded together in one KV-cache batch"),
    batchWindowMs: z
      .number()
      .min(0)
      .max(1000)
      .default(5)
      .describe("how long the scheduler waits for more requests before starting a batch"),
    maxWaitingRows: z
      .number()
      .int()
      .min(1)
      .default(1024)
      .describe("rows allowed to wait for a batch; the next request gets 429"),
    maxN: z.number().int().min(1).default(64).describe("largest `n` one request may ask for"),
    maxBodyBytes: z
      .number()
      .int()
      .min(1024)
      .default(8 * 1024 * 1024)
      .describe("largest request body in bytes (413 beyond)"),
    seed: z.number().int().min(0).default(0).describe("seed of the server's stream that seeds requests without `seed`"),
  })
  .strict();

/** Parsed model-server options. */
export type ModelServerOptions = z.output<typeof modelServerOptionsSchema>;

/** Parses options (missing fields take their defaults); the error names the field. */
export function parseModelServerOptions(input: unknown): ModelServerOptions {
  const r = modelServerOptionsSchema.safeParse(input ?? {});
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => `${i.path.join(".") || "(options)"}: ${i.message}`).join("; ");
  throw new RangeError(`model server options: ${issues}`);
}
