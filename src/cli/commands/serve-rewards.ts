/**
 * `rlvr serve-rewards`: runs the reward service (docs/reward-service.md) until SIGINT or SIGTERM, then drains
 * in-flight requests and closes the sandbox pool. Flags and their help come from the service's options schema;
 * the token may come from $RLVR_REWARD_TOKEN so it need not appear in the process list. With `--redis URL` items are
 * scored by `rlvr reward-worker`s through a Redis queue; an unreachable Redis fails the start (exit 1, naming it).
 */
import type { Command } from "commander";
import { parseServeOptions, redactUrl, serveOptionsSchema, startRewardServer, TOKEN_ENV } from "../../serve/index.js";
import { addSchemaFlags, flagValues } from "../schema-flags.js";

const FLAGS = [
  ["port", "--port <n>"],
  ["host", "--host <address>"],
  ["token", "--token <token>"],
  ["maxItems", "--max-items <n>"],
  ["maxBodyBytes", "--max-body-bytes <n>"],
  ["itemTimeoutMs", "--item-timeout-ms <n>"],
  ["concurrency", "--concurrency <n>"],
  ["redis", "--redis <url>"],
  ["queue", "--queue <name>"],
  ["queueGraceMs", "--queue-grace-ms <n>"],
  ["jobItems", "--job-items <n>"],
  ["heapBudgetMb", "--heap-budget-mb <n>"],
] as const;

/** Flags whose values are strings; the others are numbers. */
const TEXT_FLAGS = new Set(["host", "token", "redis", "queue"]);

type Flags = Partial<Record<(typeof FLAGS)[number][0], string>>;

/** The flag values as service options: numbers where the schema wants numbers, the token from the environment. */
export function optionsFromFlags(flags: Flags, env: NodeJS.ProcessEnv = process.env): Record<string, unknown> {
  const out = flagValues(flags, FLAGS, TEXT_FLAGS);
  if (out.token === undefined && env[TOKEN_ENV]) out.token = env[TOKEN_ENV];
  return out;
}

/** Registers `serve-rewards`. */
export function register(program: Command): void {
  const cmd = program
    .command("serve-rewards")
    .description("serve the reward registry over HTTP: POST /v1/score, GET /v1/rewards, /healthz, /metrics");
  addSchemaFlags(cmd, FLAGS, serveOptionsSchema.shape, new Set(["token", "redis"]));
  cmd.action(async (flags: Flags) => {
    let options;
    try {
      options = parseServeOptions(optionsFromFlags(flags));
    } catch (err) {
      console.error(`rlvr: ${err instanceof Error ? err.message : String(err)}`);
      process.exitCode = 2;
      return;
    }
    let server;
    try {
      server = await startRewardServer(options);
    } catch (err) {
      console.error(`rlvr: serve-rewards: ${err instanceof Error ? err.message : String(err)}`);
      process.exitCode = 1;
      return;
    }
    const auth = options.token ? "bearer token required" : "no token";
    const via = options.redis ? `; queue "${options.queue}" at ${redactUrl(options.redis)}` : "";
    console.log(`rlvr reward service listening on ${server.url} (${auth}; POST ${server.url}/v1/score${via})`);
    const stop = (signal: string) => {
      console.log(`rlvr: ${signal}: draining and closing the sandbox pool`);
      server.close().then(
        () => process.exit(0),
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
