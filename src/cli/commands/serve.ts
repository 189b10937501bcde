/**
 * `rlvr serve <checkpoint>`: serves a checkpoint over an OpenAI-compatible HTTP API (docs/model-server.md) until
 * SIGINT or SIGTERM, then lets the batches in flight finish and exits. Flags and their help come from the server's
 * options schema; the API key may come from $RLVR_MODEL_SERVER_KEY so it need not appear in the process list.
 */
import type { Command } from "commander";
import {
  API_KEY_ENV,
  modelServerOptionsSchema,
  parseModelServerOptions,
  startModelServer,
} from "../../serve/model-server/index.js";
import { addSchemaFlags, flagValues } from "../schema-flags.js";
import { resolveModelDir } from "./eval.js";

const FLAGS = [
  ["port", "--port <n>"],
  ["host", "--host <address>"],
  ["apiKey", "--api-key <key>"],
  ["modelName", "--model-name <name>"],
  ["maxBatchRows", "--max-batch-rows <n>"],
  ["batchWindowMs", "--batch-window-ms <ms>"],
  ["maxWaitingRows", "--max-waiting-rows <n>"],
  ["maxN", "--max-n <n>"],
  ["maxBodyBytes", "--max-body-bytes <n>"],
  ["seed", "--seed <n>"],
] as const;

/** Flags whose values are strings; the others are numbers. */
const TEXT_FLAGS = new Set(["host", "apiKey", "modelName"]);

type Flags = Partial<Record<(typeof FLAGS)[number][0], string>>;

/** The flag values as server options: numbers where the schema wants numbers, the key from the environment. */
export function modelServerOptionsFromFlags(
  flags: Flags,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, unknown> {
  const out = flagValues(flags, FLAGS, TEXT_FLAGS);
  if (out.apiKey === undefined && env[API_KEY_ENV]) out.apiKey = env[API_KEY_ENV];
  return out;
}

/** Registers `serve`. */
export function register(program: Command): void {
  const cmd = program
    .command("serve")
    .description("serve a checkpoint over an OpenAI-compatible API: /v1/completions, /v1/chat/completions, /v1/models")
    .argument("<checkpoint>", "run folder or checkpoint/model folder");
  addSchemaFlags(cmd, FLAGS, modelServerOptionsSchema.shape, new Set(["apiKey", "modelName"]));
  cmd.action(async (path: string, flags: Flags) => {
    let options;
    try {
      options = parseModelServerOptions(modelServerOptionsFromFlags(flags));
    } catch (err) {
      console.error(`rlvr: ${err instanceof Error ? err.message : String(err)}`);
      process.exitCode = 2;
      return;
    }
    let server;
    try {
      server = await startModelServer(resolveModelDir(path).dir, options);
    } catch (err) {
      console.error(`rlvr: serve: ${err instanceof Error ? err.message : String(err)}`);
      process.exitCode = 1;
      return;
    }
    const auth = options.apiKey ? "API key required" : "no API key";
    console.log(
      `rlvr model server listening on ${server.url} (model "${server.host.name}", ${auth}; ` +
        `OpenAI base URL ${server.url}/v1)`,
    );
    const stop = (signal: string) => {
      console.log(`rlvr: ${signal}: finishing the batches in flight`);
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
