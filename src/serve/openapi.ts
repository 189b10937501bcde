/**
 * The reward service's OpenAPI 3.1 document, generated from the zod schemas of schemas.ts with `z.toJSONSchema`
 * (JSON Schema 2020-12, the dialect OpenAPI 3.1 uses), so the document cannot drift from what the server validates.
 * Shared shapes are named components (`#/components/schemas/ScoreItem`, ...).
 */
import { z } from "zod";
import { TOKEN_ENV } from "./options.js";
import {
  errorResponseSchema,
  exampleSchema,
  itemErrorSchema,
  rewardDocSchema,
  rewardItemSchema,
  scoredSchema,
  scoreItemSchema,
  scoreRequestSchema,
  scoreResponseSchema,
  taskItemSchema,
} from "./schemas.js";

const COMPONENTS: Record<string, z.ZodType> = {
  Example: exampleSchema,
  RewardItem: rewardItemSchema,
  TaskItem: taskItemSchema,
  ScoreItem: scoreItemSchema,
  ScoreRequest: scoreRequestSchema,
  Scored: scoredSchema,
  ItemError: itemErrorSchema,
  ScoreResponse: scoreResponseSchema,
  ErrorResponse: errorResponseSchema,
  RewardDoc: rewardDocSchema,
};

/** The component schemas, with nested named schemas replaced by `$ref`s. */
function componentSchemas(): Record<string, unknown> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(COMPONENTS)) registry.add(schema, { id });
  const out = z.toJSONSchema(registry, {
    uri: (id) => `#/components/schemas/${id}`,
    unrepresentable: "any",
    io: "input",
  }) as { schemas: Record<string, Record<string, unknown>> };
  for (const s of Object.values(out.schemas)) {
    delete s.$schema;
    delete s.$id;
  }
  return out.schemas;
}

const ref = (id: keyof typeof COMPONENTS) => ({ $ref: `#/components/schemas/${id}` });
const json = (id: keyof typeof COMPONENTS, description: string) => ({
  description,
  content: { "application/json": { schema: ref(id) } },
});
const text = (description: string) => ({ description, content: { "text/plain": { schema: { type: "string" } } } });

/** Error answers every authenticated route can give. */
const AUTH_ERRORS = { "401": json("ErrorResponse", `missing or wrong bearer token (when one is set: $${TOKEN_ENV})`) };

/** Builds the document. */
export function openApiDocument(version: string): Record<string, unknown> {
  const secured = [{ bearer: [] }];
  return {
    openapi: "3.1.0",
    info: {
      title: "rlvr reward service",
      version,
      description: "rlvr's verifiers over HTTP: score completions with a registered reward or a built-in task.",
    },
    paths: {
      "/v1/score": {
        post: {
          summary: "score a batch of completions, answered in order",
          security: secured,
          requestBody: { required: true, content: { "application/json": { schema: ref("ScoreRequest") } } },
          responses: {
            "200": json("ScoreResponse", "one result or item error per item, in request order"),
            "400": json("ErrorResponse", "body is not JSON or does not match ScoreRequest (issues name the field)"),
            ...AUTH_ERRORS,
            "413": json("ErrorResponse", "body larger than maxBodyBytes, or more than maxItems items"),
            "415": json("ErrorResponse", "content type is not application/json"),
            "429": {
              ...json("ErrorResponse", "the concurrency limit is reached; retry after Retry-After seconds"),
              headers: { "Retry-After": { schema: { type: "integer" } } },
            },
            // Fastify answers this itself while closing, with its own body ({error, message, statusCode}).
            "503": { description: "the server is shutting down" },
          },
        },
      },
      "/v1/rewards": {
        get: {
          summary: "the reward registry with option schemas (as `rlvr rewards --json`)",
          security: secured,
          responses: {
            "200": {
              description: "every reward, sorted by name",
              content: { "application/json": { schema: { type: "array", items: ref("RewardDoc") } } },
            },
            ...AUTH_ERRORS,
          },
        },
      },
      "/healthz": {
        get: {
          summary: "liveness (never needs the token)",
          security: [],
          responses: { "200": { description: "the server is up" } },
        },
      },
      "/metrics": {
        get: {
          summary: "Prometheus text exposition",
          security: secured,
          responses: { "200": text("metrics"), ...AUTH_ERRORS },
        },
      },
      "/openapi.json": {
        get: {
          summary: "this document",
          security: secured,
          responses: { "200": { description: "OpenAPI 3.1 document" }, ...AUTH_ERRORS },
        },
      },
    },
    components: {
      schemas: componentSchemas(),
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
    },
  };
}
