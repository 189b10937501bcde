/**
 * Request bodies of `/v1/completions` and `/v1/chat/completions`: the OpenAI fields rlvr honours, plus vLLM's
 * extensions for RL clients (`return_token_ids`, `return_tokens_as_token_ids`, `top_k`). Unknown fields are ignored
 * as OpenAI-compatible servers do, but a known field whose non-default value would change the output and that this
 * server does not implement (`echo`, `best_of`, penalties, `logit_bias`, `suffix`) is a 400 naming it: a silently
 * ignored knob would be a lie.
 */
import { z } from "zod";
import { badRequest, type OpenAIError } from "./errors.js";

const tokenIds = z.array(z.number().int().min(0)).min(1);
const stop = z.union([z.string(), z.array(z.string()).max(16)]).nullish();

/** Fields both routes share. */
const common = {
  model: z.string().min(1),
  temperature: z.number().min(0).max(100).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  top_k: z.number().int().min(-1).nullish().describe("vLLM extension: keep the k most likely tokens; -1 or 0 = off"),
  n: z.number().int().min(1).nullish(),
  stop,
  seed: z.number().int().nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
  return_token_ids: z.boolean().nullish().describe("vLLM extension: prompt_token_ids and token_ids in the response"),
  return_tokens_as_token_ids: z.boolean().nullish().describe('vLLM extension: logprob tokens as "token_id:N"'),
  presence_penalty: z.literal(0).nullish(),
  frequency_penalty: z.literal(0).nullish(),
  logit_bias: z
    .record(z.string(), z.number())
    .refine((o) => Object.keys(o).length === 0, "not supported")
    .nullish(),
};

/** `POST /v1/completions`. */
export const completionRequestSchema = z.object({
  ...common,
  prompt: z.union([z.string(), z.array(z.string()).min(1), tokenIds, z.array(tokenIds).min(1)]),
  max_tokens: z.number().int().min(1).nullish(),
  logprobs: z.number().int().min(0).max(20).nullish(),
  echo: z.literal(false).nullish(),
  best_of: z.literal(1).nullish(),
  suffix: z.null().optional(),
});

const contentPart = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), text: z.string() }),
  z.object({
    type: z.literal("image_url"),
    image_url: z.object({ url: z.string().min(1), detail: z.enum(["auto", "low", "high"]).nullish() }),
  }),
]);

/** `POST /v1/chat/completions`. */
export const chatRequestSchema = z.object({
  ...common,
  messages: z
    .array(
      z.object({
        role: z.enum(["system", "developer", "user", "assistant", "tool"]),
        content: z.union([z.string(), z.array(contentPart)]).nullish(),
      }),
    )
    .min(1),
  max_tokens: z.number().int().min(1).nullish(),
  max_completion_tokens: z.number().int().min(1).nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.number().int().min(0).max(20).nullish(),
});

export type CompletionRequest = z.output<typeof completionRequestSchema>;
export type ChatRequest = z.output<typeof chatRequestSchema>;

/** `POST /v1/load_weights`. */
export const loadWeightsSchema = z.object({ path: z.string().min(1) }).strict();

/** Parses a body with `schema`, or a 400 naming the first bad field (as `param`) and its problem. */
export function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  if (body === null || typeof body !== "object" || Array.isArray(body))
    throw badRequest("the body must be a JSON object", null);
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  throw describeIssue(r.error.issues[0]!);
}

function describeIssue(issue: z.core.$ZodIssue): OpenAIError {
  const param = issue.path.map(String).join(".") || null;
  const unsupported = ["echo", "best_of", "presence_penalty", "frequency_penalty", "logit_bias", "suffix"];
  if (param && unsupported.includes(param.split(".")[0]!))
    return badRequest(`${param}: not supported by this server (only its default is accepted)`, param, "unsupported");
  return badRequest(`${param ?? "body"}: ${issue.message}`, param);
}
