/**
 * Options of a reward worker (`rlvr reward-worker`, worker.ts), with their defaults documented once; the CLI flags
 * and their help come from here (docs/reward-service.md "Workers and the Redis queue").
 *
 * Lock and stall settings are much shorter than BullMQ's defaults (30 s lock, 30 s stall check) so that the job of
 * a worker killed mid-job (SIGKILL, a lost machine) is handed to another worker within about
 * lockMs + stalledIntervalMs (4 s by default), well inside the server's default 60 s per-item limit. A live worker
 * renews its locks every lockMs / 2; a synchronous checker that blocked its event loop longer than lockMs would have
 * its job run again elsewhere (a second run, never a second result; the maths checks yield every 2 ms). With the
 * earlier 10 s lock and 5 s check, bench:serve's fault run (a worker SIGKILLed every 4 s) left its sandboxed solver
 * jobs in limbo more than in work: 22–26 items/s, and 64–156 items answered `timeout`; with 3 s and 1 s, 70 items/s
 * and none lost (docs/reward-service.md). A short lock also counts stalls faster: at maxStalled 5, one run of that
 * bench failed a 64-item job that had lost its worker six times; the default is now 10. A job whose request has
 * stopped waiting is answered `timeout` without being scored, so a poison job stops killing workers at its deadline.
 *
 * A job that runs longer than progressMs saves the results of its finished items to Redis (as the job's progress)
 * every progressMs, so the worker that takes it over after a crash scores only the items not yet saved. Without it, a
 * job of slow items (sandboxed solvers) restarted from its first item after every lost worker, and under frequent
 * losses it could run out of the request's time: bench:serve's fault run once lost a 64-item solver job that way.
 */
import { z } from "zod";
import { checkRedisUrl, DEFAULT_QUEUE } from "./queue-settings.js";

/** Worker options; every field but `redis` has a default. */
export const workerOptionsSchema = z
  .object({
    redis: z.string().min(1).describe("Redis URL of the queue (redis://host:port[/db]), as given to serve-rewards"),
    queue: z
      .string()
      .regex(/^[^:\s]+$/, "a queue name without ':' or spaces")
      .default(DEFAULT_QUEUE)
      .describe("queue name, as given to serve-rewards"),
    concurrency: z
      .number()
      .int()
      .min(1)
      .max(1024)
      .default(8)
      .describe("jobs scored at once (sandboxed rewards overlap; text checks share one thread)"),
    lockMs: z
      .number()
      .int()
      .min(100)
      .default(3000)
      .describe("job lock time; a worker that stops renewing it (killed) loses the job after this long"),
    stalledIntervalMs: z
      .number()
      .int()
      .min(50)
      .default(1000)
      .describe("how often this worker looks for jobs whose worker died, and puts them back in the queue"),
    progressMs: z
      .number()
      .int()
      .min(50)
      .default(1000)
      .describe(
        "how often a job in hand saves its scored items to Redis, so a worker that takes the job after this one died scores only the rest",
      ),
    maxStalled: z
      .number()
      .int()
      .min(0)
      .default(10)
      .describe("times a job may lose its worker and be retried before it fails (a job that kills every worker)"),
  })
  .strict()
  .superRefine((o, ctx) => {
    try {
      checkRedisUrl(o.redis);
    } catch (err) {
      ctx.addIssue({ code: "custom", path: ["redis"], message: (err as Error).message.replace(/^redis: /, "") });
    }
  });

/** Parsed worker options. */
export type WorkerOptions = z.output<typeof workerOptionsSchema>;

/** Parses worker options (missing fields take their defaults); the error names the field. */
export function parseWorkerOptions(input: unknown): WorkerOptions {
  const r = workerOptionsSchema.safeParse(input ?? {});
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => `${i.path.join(".") || "(options)"}: ${i.message}`).join("; ");
  throw new RangeError(`reward worker options: ${issues}`);
}
