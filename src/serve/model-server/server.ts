/**
 * The model server (issue 18, first part): a checkpoint behind an OpenAI-compatible HTTP API on Fastify, so OpenAI
 * clients, evaluation harnesses and RL samplers can use rlvr models. Routes and fields are documented in
 * docs/model-server.md; this file wires them: auth, OpenAI-style errors for everything (bad JSON, too large, unknown
 * model, bad fields), the generation routes (./handlers.ts), `/v1/models`, `/health`, and `POST /v1/load_weights`,
 * which swaps in new weights between batches (rlvr's analogue of vLLM's and SGLang's weight-update routes).
 *
 * Starting and stopping follow the reward service (src/serve/start.ts): listen on the configured address; on close,
 * new requests get 503 while the batches in flight finish, then the remaining connections are closed.
 */
import Fastify, { type FastifyError, type FastifyInstance } from "fastify";
import { Rng } from "../../util/index.js";
import { bearerMatches, listenWithDrain, type Listening } from "../listen.js";
import { badRequest, OpenAIError } from "./errors.js";
import { chatCompletions, completions, type HandlerContext } from "./handlers.js";
import { ModelHost } from "./host.js";
import { parseModelServerOptions, type ModelServerOptions } from "./options.js";
import { BatchScheduler } from "./scheduler.js";
import { loadWeightsSchema, parseBody } from "./schemas.js";

/** A built model server (not listening yet). */
export interface ModelServer {
  app: FastifyInstance;
  options: ModelServerOptions;
  host: ModelHost;
  scheduler: BatchScheduler;
  /** Resolves when no request is in flight (now, or when the last one is answered). */
  idle(): Promise<void>;
}

/** Builds the server for the checkpoint folder `checkpoint`; `options` as in `modelServerOptionsSchema`. */
export function buildModelServer(checkpoint: string, options: Partial<ModelServerOptions> = {}): ModelServer {
  const opts = parseModelServerOptions(options);
  const host = new ModelHost(checkpoint, opts.modelName);
  const scheduler = new BatchScheduler(host, opts);
  const ctx: HandlerContext = { host, scheduler, options: opts, seeds: new Rng(opts.seed) };
  const app = Fastify({ bodyLimit: opts.maxBodyBytes, logger: false, return503OnClosing: true });

  // Requests in flight (a streamed one until its last event is written), so that close can wait for them.
  let active = 0;
  const idleWaiters: (() => void)[] = [];
  const idle = () => (active === 0 ? Promise.resolve() : new Promise<void>((r) => idleWaiters.push(r)));
  app.addHook("onRequest", async (_req, reply) => {
    active++;
    reply.raw.once("close", () => {
      if (--active === 0) for (const wake of idleWaiters.splice(0)) wake();
    });
  });
  app.addHook("onRequest", async (req, reply) => {
    if (opts.apiKey === undefined || !req.url.startsWith("/v1/")) return;
    if (!bearerMatches(req.headers.authorization, opts.apiKey)) {
      reply.header("www-authenticate", "Bearer");
      throw new OpenAIError(
        401,
        "invalid_request_error",
        "this server needs `Authorization: Bearer <api key>`",
        null,
        "invalid_api_key",
      );
    }
  });
  app.setErrorHandler((err: FastifyError | OpenAIError, _req, reply) => {
    const e = toOpenAIError(err);
    return reply.code(e.status).send(e.body());
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_req, body, done) => {
    try {
      done(null, JSON.parse(body as string));
    } catch (err) {
      done(badRequest(`the body is not valid JSON: ${(err as Error).message}`, null, "bad_json"), undefined);
    }
  });
  app.setNotFoundHandler((req) => {
    throw new OpenAIError(
      404,
      "invalid_request_error",
      `no route ${req.method} ${req.url.split("?")[0]}`,
      null,
      "not_found",
    );
  });

  app.get("/health", async () => ({ status: "ok" }));
  app.get("/v1/models", async () => ({
    object: "list",
    data: [
      {
        id: host.name,
        object: "model",
        created: host.created,
        owned_by: "rlvr",
        max_model_len: host.contextLength,
        weights_version: host.version,
      },
    ],
  }));
  app.post("/v1/completions", (req, reply) => completions(ctx, req.body, reply));
  app.post("/v1/chat/completions", (req, reply) => chatCompletions(ctx, req.body, reply));
  app.post("/v1/load_weights", async (req) => {
    const { path } = parseBody(loadWeightsSchema, req.body);
    const loaded = host.reload(path);
    return { status: "ok", model: host.name, path: loaded.path, weights_version: host.version };
  });
  return { app, options: opts, host, scheduler, idle };
}

/** A listening model server. */
export interface RunningModelServer extends ModelServer, Listening {
  /** Base URL, e.g. `http://127.0.0.1:8000` (OpenAI clients take `${url}/v1`). */
  url: string;
  /** Stops accepting (503), lets the batches in flight finish, then closes every connection. */
  close(): Promise<void>;
}

/** Builds the server and starts listening. */
export async function startModelServer(
  checkpoint: string,
  options: Partial<ModelServerOptions> = {},
): Promise<RunningModelServer> {
  const server = buildModelServer(checkpoint, options);
  return { ...server, ...(await listenWithDrain(server)) };
}

/** Fastify's own errors (body too large, wrong content type) and ours, as OpenAI error objects. */
function toOpenAIError(err: FastifyError | OpenAIError): OpenAIError {
  if (err instanceof OpenAIError) return err;
  const status = err.statusCode ?? 500;
  if (status === 413) return new OpenAIError(413, "invalid_request_error", err.message, null, "body_too_large");
  if (status >= 400 && status < 500)
    return new OpenAIError(status, "invalid_request_error", err.message, null, err.code ?? null);
  return new OpenAIError(500, "server_error", `internal error: ${err.message}`, null, null);
}
