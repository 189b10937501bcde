/**
 * The reward service's wire format as zod schemas: one source for request validation, the TypeScript types and the
 * OpenAPI document (openapi.ts turns these into JSON Schema with `z.toJSONSchema`). Field descriptions live here.
 *
 * An item names either a registered reward (`{reward, options?, completion, example}`) or a built-in task
 * (`{task, taskOptions?, completion, example}`, scored with the task's weighted terms). `example` carries what
 * the reward sees besides the completion, as in `rlvr reward --example FILE`.
 */
import { z } from "zod";

/** What a reward sees besides the completion: the gold answer and optional prompt, token ids and turns. */
export const exampleSchema = z
  .object({
    gold: z.unknown().describe("the example's ground truth, in the shape the reward documents (`GET /v1/rewards`)"),
    prompt: z.string().optional().describe("the prompt text (some rewards penalise echoing it)"),
    tokens: z.array(z.number().int()).optional().describe("completion token ids (length rewards count tokens)"),
    turns: z.array(z.string()).optional().describe("model turns of a multi-turn rollout, tool outputs excluded"),
  })
  .strict();

/** An item scored by one registered reward. */
export const rewardItemSchema = z
  .object({
    reward: z.string().min(1).describe("a reward name from `GET /v1/rewards`"),
    options: z.record(z.string(), z.unknown()).optional().describe("the reward's options (its schema's defaults)"),
    completion: z.string().describe("the completion text, without the prompt"),
    example: exampleSchema,
  })
  .strict();

/** An item scored by a built-in task's weighted reward terms. */
export const taskItemSchema = z
  .object({
    task: z.string().min(1).describe("a built-in task name (`rlvr tasks`)"),
    taskOptions: z.record(z.string(), z.unknown()).optional().describe("the task's options (difficulty knobs)"),
    completion: z.string().describe("the completion text, without the prompt"),
    example: exampleSchema,
  })
  .strict();

/** One item of a score request. */
export const scoreItemSchema = z.union([rewardItemSchema, taskItemSchema]);

/** `POST /v1/score` body. */
export const scoreRequestSchema = z
  .object({ items: z.array(scoreItemSchema).describe("the completions to score, answered in this order") })
  .strict();

/** A scored item: the reward contract's result (`score: null` means "not scorable", never 0). */
export const scoredSchema = z.object({
  score: z.number().nullable().describe("total score, or null when the completion cannot be scored"),
  terms: z.record(z.string(), z.number()).describe("named parts of the score"),
  info: z.record(z.string(), z.unknown()).optional().describe("diagnostics: what was extracted, why a check failed"),
  firstErrorEnd: z.number().optional().describe("character offset where the first verifiably wrong step ends"),
});

/** Why one item has no result. */
export const ITEM_ERROR_CODES = [
  "unknown-reward",
  "unknown-task",
  "invalid-options",
  "reward-failed",
  "timeout",
  "queue-unavailable",
] as const;
export type ItemErrorCode = (typeof ITEM_ERROR_CODES)[number];

/** An item that could not be scored, with the reason; the other items of the batch are unaffected. */
export const itemErrorSchema = z.object({
  error: z.object({ code: z.enum(ITEM_ERROR_CODES), message: z.string() }),
});

/** `POST /v1/score` answer: one result per item, in request order. */
export const scoreResponseSchema = z.object({ results: z.array(z.union([scoredSchema, itemErrorSchema])) });

/** The error body of every non-2xx answer but 503 (400, 401, 404, 413, 415, 429, 500). */
export const errorResponseSchema = z.object({
  error: z.object({
    code: z.string().describe("machine-readable reason, e.g. bad-request, unauthorized, too-busy"),
    message: z.string().describe("what went wrong and which field, in words"),
    issues: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .describe("validation issues, each naming the field by its path (e.g. items.2.completion)"),
  }),
});

/** One entry of `GET /v1/rewards` (the shape `rlvr rewards --json` prints). */
export const rewardDocSchema = z.object({
  name: z.string(),
  description: z.string(),
  modelJudged: z.boolean(),
  options: z.array(
    z.object({
      name: z.string(),
      type: z.string(),
      default: z.unknown().optional(),
      description: z.string().optional(),
    }),
  ),
});

export type ScoreItem = z.infer<typeof scoreItemSchema>;
export type RewardItem = z.infer<typeof rewardItemSchema>;
export type TaskItem = z.infer<typeof taskItemSchema>;
export type Scored = z.infer<typeof scoredSchema>;
export type ItemError = z.infer<typeof itemErrorSchema>;
export type ItemResult = Scored | ItemError;
