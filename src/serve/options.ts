/**
 * Options of the reward service, with their defaults and limits documented once (docs/reward-service.md "Limits";
 * the `rlvr serve-rewards` flags and their help come from here).
 *
 * Memory is bounded by construction: at most `concurrency` score requests are admitted at once (the next one gets
 * 429 before its body is read), each body is at most `maxBodyBytes` and holds at most `maxItems` items, so the
 * service holds at most concurrency × maxBodyBytes of request data however hard it is pushed.
 *
 * With `redis` set, items are scored by queue workers instead of in process (docs/reward-service.md "Workers and
 * the Redis queue"); the same limits apply to the requests, and `itemTimeoutMs` bounds each item's wait for its job.
 */
import { z } from "zod";
import { checkRedisUrl, DEFAULT_QUEUE } from "./queue-settings.js";

/** The environment variable that supplies the bearer token when `--token` is not given. */
export const TOKEN_ENV = "RLVR_REWARD_TOKEN";

/** Seconds a client told "429 too busy" should wait before retrying (the Retry-After header). */
export const RETRY_AFTER_S = 1;

/** Service options; every field has a default. */
export const serveOptionsSchema = z
  .object({
    port: z.number().int().min(0).max(65535).default(8765).describe("TCP port (0 picks a free one)"),
    host: z.string().min(1).default("127.0.0.1").describe("address to bind (loopback by default)"),
    token: z
      .string()
      .min(1)
      .optional()
      .describe(`bearer token every request but /healthz must carry (default: $${TOKEN_ENV}, else none)`),
    maxItems: z.number().int().min(1).default(512).describe("most items in one score request (413 beyond)"),
    maxBodyBytes: z
      .number()
      .int()
      .min(1024)
      .default(16 * 1024 * 1024)
      .describe("largest request body in bytes (413 beyond)"),
    itemTimeoutMs: z
      .number()
      .int()
      .min(1)
      .default(60_000)
      .describe("time one item may take before it is answered with a timeout error"),
    concurrency: z
      .number()
      .int()
      .min(1)
      .default(8)
      .describe("score requests served at once; the next one gets 429 with Retry-After"),
    redis: z
      .string()
      .min(1)
      .optional()
      .describe("Redis URL (redis://host:port[/db]): score through a queue that `rlvr reward-worker`s consume"),
    queue: z
      .string()
      .regex(/^[^:\s]+$/, "a queue name without ':' or spaces")
      .default(DEFAULT_QUEUE)
      .describe("queue name (with --redis); workers must use the same"),
    queueGraceMs: z
      .number()
      .int()
      .min(0)
      .default(5000)
      .describe("with --redis: how long Redis may be unreachable before waiting items get queue-unavailable"),
    jobItems: z
      .number()
      .int()
      .min(1)
      .default(256)
      .describe("with --redis: items per queue job (more saves Redis round trips; 1 spreads a batch widest)"),
    heapBudgetMb: z
      .number()
      .min(0)
      .default(8)
      .describe(
        "run a full garbage collection when the old heap has grown this many MB since the last (0: leave it to V8)",
      ),
  })
  .strict()
  .superRefine((o, ctx) => {
    if (o.redis === undefined) return;
    try {
      checkRedisUrl(o.redis);
    } catch (err) {
      ctx.addIssue({ code: "custom", path: ["redis"], message: (err as Error).message.replace(/^redis: /, "") });
    }
  });

/** Parsed service options. */
export type ServeOptions = z.output<typeof serveOptionsSchema>;

/** Parses options (missing fields take their defaults); the error names the field. */
export function parseServeOptions(input: unknown): ServeOptions {
  const r = serveOptionsSchema.safeParse(input ?? {});
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => `${i.path.join(".") || "(options)"}: ${i.message}`).join("; ");
  throw new RangeError(`reward service options: ${issues}`);
}
