/**
 * `rlvr reward-worker --redis URL`: consumes the score jobs of `rlvr serve-rewards --redis URL` and scores them
 * (docs/reward-service.md "Workers and the Redis queue"). Run any number, on any machines that reach the Redis.
 * Flags and their help come from the worker's options schema. A bad flag exits 2 naming the option; an unreachable
 * Redis exits 1 naming the URL; SIGINT or SIGTERM finishes the jobs in hand, closes the sandbox pool and exits 0.
 */
import type { Command } from "commander";
import { parseWorkerOptions, redactUrl, startRewardWorker, workerOptionsSchema } from "../../serve/index.js";
import { addSchemaFlags, flagValues } from "../schema-flags.js";

const FLAGS = [
  ["redis", "--redis <url>"],
  ["queue", "--queue <name>"],
  ["concurrency", "--concurrency <n>"],
  ["lockMs", "--lock-ms <n>"],
  ["stalledIntervalMs", "--stalled-interval-ms <n>"],
  ["progressMs", "--progress-ms <n>"],
  ["maxStalled", "--max-stalled <n>"],
] as const;

type Flags = Partial<Record<(typeof FLAGS)[number][0], string>>;

/** The flag values as worker options: numbers where the schema wants numbers. */
export function workerOptionsFromFlags(flags: Flags): Record<string, unknown> {
  return flagValues(flags, FLAGS, new Set(["redis", "queue"]));
}

/** Registers `reward-worker`. */
export function register(program: Command): void {
  const cmd = program
    .command("reward-worker")
    .description("score the jobs that `rlvr serve-rewards --redis URL` puts on a Redis queue");
  addSchemaFlags(cmd, FLAGS, workerOptionsSchema.shape, new Set(["redis"]));
  cmd.action(async (flags: Flags) => {
    let options;
    try {
      options = parseWorkerOptions(workerOptionsFromFlags(flags));
    } catch (err) {
      console.error(`rlvr: ${err instanceof Error ? err.message : String(err)}`);
      process.exitCode = 2;
      return;
    }
    let worker;
    try {
      worker = await startRewardWorker({ ...options, onError: (m) => console.error(`rlvr: reward-worker: ${m}`) });
    } catch (err) {
      console.error(`rlvr: reward-worker: ${err instanceof Error ? err.message : String(err)}`);
      process.exitCode = 1;
      return;
    }
    const where = `queue "${options.queue}" at ${redactUrl(options.redis)}`;
    console.log(`rlvr reward worker consuming ${where} (concurrency ${options.concurrency})`);
    const stop = (signal: string) => {
      console.log(`rlvr: ${signal}: finishing the jobs in hand and closing the sandbox pool`);
      worker.close().then(
        () => {
          console.log(`rlvr: reward worker stopped after ${worker.processed()} jobs`);
          process.exit(0);
        },
        (err: unknown) => {
          console.error(`rlvr: shutdown failed: ${err instanceof Error ? err.message : String(err)}`);
          process.exit(1);
        },
      );
    };
    process.once("SIGINT", () => stop("SIGINT"));
    process.once("SIGTERM", () => stop("SIGTERM"));
  });
}
