/**
 * The reward service (issue 17, first slice): rlvr's reward registry behind HTTP on Fastify, so external trainers
 * (TRL, verl) can score completions with rlvr's verifiers. Routes, limits, auth and metrics are documented in
 * docs/reward-service.md; this file wires them. Scoring is in process by default (code-running rewards run in the
 * sandbox worker pool, never on the server's thread); with `redis` set, items go through a Redis queue to
 * `rlvr reward-worker` processes (queue-scorer.ts) that score them with the same function.
 *
 * Order of checks for a score request: bearer token (401), concurrency (429 with Retry-After, before the body is
 * read), body size and JSON (413, 400, 415: Fastify's parser), item count (413), item shapes (400 naming the
 * field), then each item is scored alone (an item error never fails the batch).
 */
import { createHash, randomUUID } from "node:crypto";
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { z } from "zod";
import { rewards as defaultRewards, type RewardRegistry } from "../rewards/index.js";
import { sharedPoolStats } from "../rewards/sandbox/pool.js";
import { tasks as defaultTasks, type TaskRegistry } from "../tasks/index.js";
import { rewardCatalog } from "./catalog.js";
import { bearerMatches } from "./listen.js";
import { ServiceMetrics, type PoolSnapshot } from "./metrics.js";
import { openApiDocument } from "./openapi.js";
import { parseServeOptions, RETRY_AFTER_S, type ServeOptions } from "./options.js";
import { rewardItemSchema, taskItemSchema, type ItemResult, type ScoreItem } from "./schemas.js";
import { scoreItems } from "./score-items.js";
import type { QueueScorer } from "./queue-scorer.js";

/** What `buildRewardServer` takes: the service options plus the registries and pool it serves. */
export interface RewardServerConfig extends Partial<ServeOptions> {
  /** Reward registry (default: the process-wide one with every built-in reward). */
  rewards?: RewardRegistry;
  /** Task registry for `{task}` items (default: the built-in tasks). */
  tasks?: TaskRegistry;
  /** Sandbox pool counters for /metrics (default: the shared pool's, read without starting it). */
  poolStats?: () => PoolSnapshot;
  /** Version in the OpenAPI document. */
  version?: string;
  /** The Redis queue that scores items when `redis` is set (`startRewardServer` connects it). */
  queueScorer?: QueueScorer;
}

/** A built server and its parsed options and metrics. */
export interface RewardServer {
  app: FastifyInstance;
  options: ServeOptions;
  metrics: ServiceMetrics;
  /** Resolves when no score request is in flight (now, or when the last one ends). */
  idle(): Promise<void>;
}

/** A request error: status, code and message (and the issues naming fields, for validation). */
class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues?: { path: string; message: string }[],
  ) {
    super(message);
  }
}

const envelopeSchema = z.object({ items: z.array(z.unknown()) }).strict();

/** Builds the server (not listening yet: call `app.listen`, or use `startRewardServer`). */
export function buildRewardServer(config: RewardServerConfig = {}): RewardServer {
  const {
    rewards = defaultRewards,
    tasks = defaultTasks,
    poolStats = sharedPoolStats,
    version,
    queueScorer: queue,
    ...rest
  } = config;
  const options = parseServeOptions(rest);
  if ((options.redis === undefined) !== (queue === undefined)) {
    throw new RangeError("reward service options: redis needs a connected queue (use startRewardServer)");
  }
  const metrics = new ServiceMetrics(poolStats);
  if (queue) metrics.queueMetrics(() => queue.snapshot());
  const app = Fastify({ bodyLimit: options.maxBodyBytes, logger: false, return503OnClosing: true });
  const openapi = openApiDocument(version ?? "0.1.0");
  let active = 0;
  const idleWaiters: (() => void)[] = [];
  const idle = () => (active === 0 ? Promise.resolve() : new Promise<void>((r) => idleWaiters.push(r)));
  const bodyHashes = new WeakMap<FastifyRequest, string>();

  app.addHook("onRequest", async (req, reply) => {
    if (options.token === undefined || req.url.split("?")[0] === "/healthz") return;
    if (!bearerMatches(req.headers.authorization, options.token)) {
      reply.header("www-authenticate", "Bearer");
      throw new HttpError(401, "unauthorized", "this server needs `Authorization: Bearer <token>`");
    }
  });
  app.addHook("onResponse", async (req, reply) => {
    const route = req.routeOptions.url ?? "(unmatched)";
    metrics.requests.inc({ route, status: String(reply.statusCode) });
    metrics.requestSeconds.observe({ route }, reply.elapsedTime / 1000);
  });
  app.setErrorHandler((err: FastifyError | HttpError, _req, reply) => {
    const e = toHttpError(err);
    metrics.errors.inc({ code: e.code });
    if (e.status === 429) reply.header("retry-after", String(RETRY_AFTER_S));
    const body = { error: { code: e.code, message: e.message, ...(e.issues ? { issues: e.issues } : {}) } };
    return reply.code(e.status).send(body);
  });
  // JSON bodies: the parser's own message (with the position) names what is wrong; size is capped by bodyLimit.
  // With a queue, the raw body's hash becomes part of the job ids (one hash per request, not one JSON per job).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (req, body, done) => {
    try {
      const parsed: unknown = JSON.parse(body as string);
      if (queue)
        bodyHashes.set(
          req,
          createHash("sha256")
            .update(body as string)
            .digest("hex"),
        );
      done(null, parsed);
    } catch (err) {
      done(new HttpError(400, "bad-json", `body is not valid JSON: ${(err as Error).message}`), undefined);
    }
  });
  app.setNotFoundHandler((req) => {
    throw new HttpError(404, "not-found", `no route ${req.method} ${req.url.split("?")[0]}`);
  });

  app.get("/healthz", async () => ({ status: "ok" }));
  app.get("/v1/rewards", async () => rewardCatalog(rewards));
  app.get("/openapi.json", async () => openapi);
  app.get("/metrics", async (_req, reply) => {
    reply.header("content-type", metrics.registry.contentType);
    return metrics.registry.metrics();
  });

  /** Admits a score request or answers 429; the slot is freed when the response closes, however it ends. */
  const admit = async (_req: FastifyRequest, reply: FastifyReply) => {
    if (active >= options.concurrency) {
      throw new HttpError(429, "too-busy", `${active} score requests in flight (concurrency ${options.concurrency})`);
    }
    active++;
    metrics.requestsInFlight.set(active);
    reply.raw.once("close", () => {
      active--;
      metrics.requestsInFlight.set(active);
      if (active === 0) for (const wake of idleWaiters.splice(0)) wake();
    });
  };
  app.post("/v1/score", { onRequest: admit }, async (req) => {
    const items = validateItems(req.body, options.maxItems);
    metrics.itemsInFlight.inc(items.length);
    if (queue) {
      const started = performance.now();
      const label = (item: ScoreItem) => ("reward" in item ? item.reward : `task:${item.task}`);
      const known = (item: ScoreItem) => ("reward" in item ? rewards.has(item.reward) : tasks.has(item.task));
      const observe = (i: number, result: ItemResult) => {
        const item = items[i]!;
        metrics.itemDone(known(item) ? label(item) : "(unknown)", result, (performance.now() - started) / 1000);
      };
      const hash = bodyHashes.get(req);
      return { results: await queue.score(items, requestIdOf(req), options.itemTimeoutMs, observe, hash) };
    }
    const observe = metrics.itemDone.bind(metrics);
    const results = await scoreItems(items, { rewards, tasks, itemTimeoutMs: options.itemTimeoutMs, observe });
    return { results };
  });
  return { app, options, metrics, idle };
}

/**
 * The request's id for queue job ids: the client's `X-Request-Id` when it sends a usable one (so a retried request
 * finds its jobs instead of scoring again), else a fresh UUID.
 */
function requestIdOf(req: FastifyRequest): string {
  const id = req.headers["x-request-id"];
  return typeof id === "string" && /^[\x21-\x7e]{1,200}$/.test(id) ? id : randomUUID();
}

/** Checks the body's shape: 413 beyond `maxItems`, 400 naming the first bad fields. */
function validateItems(body: unknown, maxItems: number): ScoreItem[] {
  const envelope = envelopeSchema.safeParse(body);
  if (!envelope.success) throw invalid(envelope.error.issues, "");
  const raw = envelope.data.items;
  if (raw.length > maxItems) {
    throw new HttpError(413, "too-many-items", `items: ${raw.length} items, at most ${maxItems} per request`);
  }
  const items: ScoreItem[] = [];
  const issues: z.core.$ZodIssue[] = [];
  raw.forEach((item, i) => {
    const isTask = item !== null && typeof item === "object" && "task" in item && !("reward" in item);
    const r = (isTask ? taskItemSchema : rewardItemSchema).safeParse(item);
    if (r.success) items.push(r.data);
    else issues.push(...r.error.issues.map((issue) => ({ ...issue, path: ["items", i, ...issue.path] })));
  });
  if (issues.length) throw invalid(issues, "an item needs `reward` (or `task`), `completion` and `example.gold`; ");
  return items;
}

function invalid(zodIssues: readonly z.core.$ZodIssue[], hint: string): HttpError {
  const issues = zodIssues.slice(0, 20).map((i) => ({ path: i.path.join(".") || "(body)", message: i.message }));
  const first = issues.map((i) => `${i.path}: ${i.message}`).slice(0, 3);
  return new HttpError(400, "bad-request", `${hint}${first.join("; ")}`, issues);
}

/** Maps Fastify's own errors (body too large, bad JSON, wrong content type) and ours to status and code. */
function toHttpError(err: FastifyError | HttpError): HttpError {
  if (err instanceof HttpError) return err;
  const status = err.statusCode ?? 500;
  if (status === 413) return new HttpError(413, "body-too-large", err.message);
  if (status === 415) return new HttpError(415, "unsupported-media-type", err.message);
  if (status >= 400 && status < 500) {
    const bad = err instanceof SyntaxError || err.code === "FST_ERR_CTP_INVALID_JSON_BODY";
    return new HttpError(status, bad ? "bad-json" : "bad-request", `body: ${err.message}`);
  }
  return new HttpError(500, "internal", `internal error: ${err.message}`);
}
