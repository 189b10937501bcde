/**
 * The two generation routes, `POST /v1/completions` and `POST /v1/chat/completions`: body → prompts → rows
 * (./rows.ts) → the batch scheduler → an OpenAI response, whole or streamed as server-sent events (one chunk per
 * sampled token and choice, then a final chunk per choice with its finish_reason, an optional usage chunk, and
 * `data: [DONE]`, as OpenAI streams). Token ids in and out follow vLLM (docs/model-server.md "Token ids"):
 * a completions prompt may be token ids; `return_token_ids` adds `prompt_token_ids` and `token_ids`. A chat
 * message may carry images as `image_url` parts (data URLs) for a vision-language checkpoint (./images.ts).
 */
import { randomUUID } from "node:crypto";
import type { FastifyReply } from "fastify";
import { promptIds } from "../../rollout/groups.js";
import type { Rng } from "../../util/index.js";
import type { RgbImage } from "../../util/image.js";
import { badRequest } from "./errors.js";
import { contentWithImages } from "./images.js";
import { chatLogprobs, completionLogprobs, usage, type TokenNaming } from "./format.js";
import type { ModelHost } from "./host.js";
import type { ModelServerOptions } from "./options.js";
import { planRows, stopList, type SamplingFields } from "./rows.js";
import type { BatchScheduler, RowRequest, RowResult } from "./scheduler.js";
import { chatRequestSchema, completionRequestSchema, parseBody, type ChatRequest } from "./schemas.js";
import { TextStream, visibleText } from "./text.js";

/** What the handlers share. */
export interface HandlerContext {
  host: ModelHost;
  scheduler: BatchScheduler;
  options: ModelServerOptions;
  /** Seeds requests that bring no seed. */
  seeds: Rng;
}

/** One planned request, whichever route it came from. */
interface Plan {
  kind: "completion" | "chat";
  id: string;
  created: number;
  prompts: number[][];
  rows: RowRequest[];
  stops: string[];
  naming: TokenNaming;
  logprobs: boolean;
  returnTokenIds: boolean;
  includeUsage: boolean;
}

/** `POST /v1/completions`. */
export async function completions(ctx: HandlerContext, body: unknown, reply: FastifyReply): Promise<unknown> {
  const req = parseBody(completionRequestSchema, body);
  ctx.host.checkModel(req.model);
  const { tokenizer } = ctx.host.current;
  const p = req.prompt;
  const prompts: number[][] =
    typeof p === "string"
      ? [promptIds(tokenizer, p)]
      : typeof p[0] === "number"
        ? [p as number[]]
        : (p as (string | number[])[]).map((x) => (typeof x === "string" ? promptIds(tokenizer, x) : x));
  const fields = sampling(ctx, req, req.max_tokens, 16, req.logprobs ?? 0);
  const plan = makePlan(
    ctx,
    "completion",
    prompts,
    fields,
    "prompt",
    req,
    req.logprobs !== null && req.logprobs !== undefined,
  );
  return req.stream ? stream(ctx, plan, reply) : respond(ctx, plan);
}

/** `POST /v1/chat/completions`. */
export async function chatCompletions(ctx: HandlerContext, body: unknown, reply: FastifyReply): Promise<unknown> {
  const req = parseBody(chatRequestSchema, body);
  ctx.host.checkModel(req.model);
  if (req.top_logprobs && !req.logprobs) throw badRequest("top_logprobs: needs logprobs: true", "top_logprobs");
  const images: RgbImage[] = [];
  const messages = req.messages.map((m, i) => {
    const c = contentWithImages(m.content, `messages.${i}.content`);
    images.push(...c.images);
    return { role: m.role, content: c.text };
  });
  const prompt = ctx.host.current.chat.render(messages).ids;
  const fields = sampling(ctx, req, req.max_completion_tokens ?? req.max_tokens, "rest", req.top_logprobs ?? 0);
  const plan = makePlan(ctx, "chat", [prompt], fields, "messages", req, req.logprobs === true, [images]);
  return req.stream ? stream(ctx, plan, reply) : respond(ctx, plan);
}

type CommonRequest = Pick<ChatRequest, "n" | "temperature" | "top_p" | "top_k" | "stop" | "seed"> &
  Pick<ChatRequest, "return_token_ids" | "return_tokens_as_token_ids" | "stream_options">;

function sampling(
  ctx: HandlerContext,
  req: CommonRequest,
  maxTokens: number | null | undefined,
  defaultMaxTokens: number | "rest",
  topLogprobs: number,
): SamplingFields {
  const n = req.n ?? 1;
  if (n > ctx.options.maxN) throw badRequest(`n: ${n} is more than this server allows (${ctx.options.maxN})`, "n");
  return {
    n,
    maxTokens: maxTokens ?? null,
    defaultMaxTokens,
    temperature: req.temperature ?? 1,
    topP: req.top_p ?? 1,
    topK: Math.max(0, req.top_k ?? 0),
    stop: stopList(req.stop),
    seed: req.seed ?? ctx.seeds.nextU32(),
    topLogprobs,
  };
}

function makePlan(
  ctx: HandlerContext,
  kind: Plan["kind"],
  prompts: number[][],
  fields: SamplingFields,
  param: string,
  req: CommonRequest,
  logprobs: boolean,
  images: readonly (readonly RgbImage[])[] = [],
): Plan {
  return {
    kind,
    id: `${kind === "chat" ? "chatcmpl" : "cmpl"}-${randomUUID()}`,
    created: Math.floor(Date.now() / 1000),
    prompts,
    rows: planRows(ctx.host, prompts, fields, param, images),
    stops: fields.stop,
    naming: { tokenizer: ctx.host.current.tokenizer, asIds: req.return_tokens_as_token_ids === true },
    logprobs,
    returnTokenIds: req.return_token_ids === true,
    includeUsage: req.stream_options?.include_usage === true,
  };
}

/** The prompt of row r. */
const promptOf = (plan: Plan, r: number) => plan.rows[r]!.prompt;

/** A whole (non-streamed) response. */
async function respond(ctx: HandlerContext, plan: Plan): Promise<unknown> {
  const results = await ctx.scheduler.submit(plan.rows);
  const { tokenizer } = plan.naming;
  const ids = (r: number, row: RowResult) =>
    plan.returnTokenIds
      ? { ...(plan.kind === "completion" ? { prompt_token_ids: promptOf(plan, r) } : {}), token_ids: row.tokens }
      : {};
  const choices = results.map((row, r) => {
    const text = visibleText(tokenizer, row.tokens, plan.stops);
    if (plan.kind === "completion") {
      const logprobs = plan.logprobs ? completionLogprobs(row, plan.naming) : null;
      return { index: r, text, logprobs, finish_reason: row.finishReason, ...ids(r, row) };
    }
    const logprobs = plan.logprobs ? chatLogprobs(row, plan.naming) : null;
    const message = { role: "assistant", content: text };
    return { index: r, message, logprobs, finish_reason: row.finishReason, ...ids(r, row) };
  });
  return {
    id: plan.id,
    object: plan.kind === "chat" ? "chat.completion" : "text_completion",
    created: plan.created,
    model: ctx.host.name,
    choices,
    usage: usage(plan.prompts, results),
    ...(plan.kind === "chat" && plan.returnTokenIds ? { prompt_token_ids: plan.prompts[0] } : {}),
  };
}

/** A streamed response (server-sent events); the rows are cancelled if the client goes away. */
async function stream(ctx: HandlerContext, plan: Plan, reply: FastifyReply): Promise<void> {
  ctx.scheduler.checkRoom(plan.rows.length); // a 429 is still a plain JSON answer
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  const send = (data: unknown) => {
    if (!raw.destroyed && !raw.writableEnded) raw.write(`data: ${JSON.stringify(data)}\n\n`); // the client may be gone
  };
  const object = plan.kind === "chat" ? "chat.completion.chunk" : "text_completion";
  const chunk = (choices: unknown[], extra: object = {}) =>
    send({ id: plan.id, object, created: plan.created, model: ctx.host.name, choices, ...extra });
  let finished = false;
  raw.once("close", () => {
    if (!finished) for (const row of plan.rows) row.cancelled = true;
  });
  const { tokenizer } = plan.naming;
  const texts = plan.rows.map(() => new TextStream(tokenizer, plan.stops));
  const sofar: Pick<RowResult, "tokens" | "logprobs" | "top">[] = plan.rows.map((r) => ({
    tokens: [],
    logprobs: [],
    top: r.topLogprobs > 0 ? [] : null,
  }));
  const offsets = plan.rows.map(() => 0);
  if (plan.kind === "chat") {
    const ids = plan.returnTokenIds ? { prompt_token_ids: plan.prompts[0] } : {};
    chunk(
      plan.rows.map((_, r) => ({
        index: r,
        delta: { role: "assistant", content: "" },
        logprobs: null,
        finish_reason: null,
      })),
      ids,
    );
  }
  plan.rows.forEach((row, r) => {
    row.onToken = (token, logprob, top) => {
      const s = sofar[r]!;
      const j = s.tokens.length;
      s.tokens.push(token);
      s.logprobs.push(logprob);
      if (top) s.top!.push(top);
      const text = texts[r]!.next(s.tokens, false);
      const ids = plan.returnTokenIds
        ? {
            token_ids: [token],
            ...(plan.kind === "completion" && j === 0 ? { prompt_token_ids: promptOf(plan, r) } : {}),
          }
        : {};
      if (plan.kind === "completion") {
        const logprobs = plan.logprobs ? completionLogprobs(s, plan.naming, j, j + 1, offsets[r]) : null;
        if (logprobs) offsets[r] = logprobs.text_offset[0]! + (plan.naming.asIds ? 0 : logprobs.tokens[0]!.length);
        chunk([{ index: r, text, logprobs, finish_reason: null, ...ids }]);
      } else {
        const logprobs = plan.logprobs ? chatLogprobs(s, plan.naming, j, j + 1) : null;
        chunk([{ index: r, delta: { content: text }, logprobs, finish_reason: null, ...ids }]);
      }
    };
  });
  try {
    const results = await ctx.scheduler.submit(plan.rows);
    results.forEach((row, r) => {
      const rest = texts[r]!.next(row.tokens, true);
      const fin = { index: r, logprobs: null, finish_reason: row.finishReason };
      chunk([plan.kind === "completion" ? { ...fin, text: rest } : { ...fin, delta: rest ? { content: rest } : {} }]);
    });
    if (plan.includeUsage) chunk([], { usage: usage(plan.prompts, results) });
  } catch (err) {
    const e = err as { body?: () => unknown; message?: string };
    send(
      e.body
        ? e.body()
        : { error: { message: `internal error: ${e.message}`, type: "server_error", param: null, code: null } },
    );
  } finally {
    finished = true;
    if (!raw.destroyed && !raw.writableEnded) raw.end("data: [DONE]\n\n");
  }
}
