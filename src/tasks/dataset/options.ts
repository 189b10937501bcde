/**
 * Options of the "dataset" task: the user's own problems from a JSONL file, a verl-style Parquet file or a folder of
 * Hugging Face `datasets` Parquet shards (docs/data.md).
 *
 * Field names are dotted paths into a row (`reward_model.ground_truth`). When a field is not named, the first of a
 * short list of usual names that the data has is used (verl's names first). The reward is named once for the whole
 * dataset, or per `data_source` value (`rewardBySource`, as verl's `default_compute_score` dispatches); either form
 * may be one reward or several weighted terms, as the built-in tasks have.
 */
import { z } from "zod";

/** A user reward module: `{ module: "./my-reward.ts", export: "score" }` (src/rewards/user-module.ts). */
export const ModuleRewardSchema = z.strictObject({
  module: z.string().min(1).describe("path of a .ts/.js/.mjs module (relative to the recipe's folder)"),
  export: z.string().min(1).default("default").describe("name of the exported scoring function"),
  options: z
    .record(z.string(), z.unknown())
    .default({})
    .describe("options passed to it (checked by its `options` export)"),
  sandbox: z.boolean().default(false).describe("run it in the sandbox worker pool (a process that can be killed)"),
  timeoutMs: z.number().int().positive().default(10_000).describe("a call past this is null (counted)"),
});

/** A registered reward by name, with options. */
export const NamedRewardSchema = z.strictObject({
  name: z.string().min(1).describe("reward registry name (see `rlvr rewards`)"),
  options: z.record(z.string(), z.unknown()).default({}).describe("the reward's options"),
});

/** One reward: a registry name, `{ name, options }` or `{ module, export }`. */
export const RewardRefSchema = z.union([z.string().min(1), NamedRewardSchema, ModuleRewardSchema]);

/** One weighted term: a reward plus the term's metric name and weight. */
export const WeightedTermSchema = z.strictObject({
  term: z.string().min(1).describe("term name in metrics (e.g. correct, format)"),
  weight: z.number().default(1).describe("weight in the sum"),
  reward: RewardRefSchema,
});

/** A reward spec: one reward (term "correct", weight 1) or a list of weighted terms. */
export const RewardSpecSchema = z.union([RewardRefSchema, z.array(WeightedTermSchema).min(1)]);

/** Field mapping: dotted paths into a row; absent = the first usual name present. */
export const FieldsSchema = z
  .strictObject({
    prompt: z.string().optional().describe("the prompt: a string or chat messages (default prompt|question|problem)"),
    gold: z
      .string()
      .optional()
      .describe("the ground truth (default reward_model.ground_truth|answer|gold|solution|ground_truth)"),
    split: z.string().optional().describe("train/test column (default extra_info.split|split; absent = hash split)"),
    dataSource: z
      .string()
      .optional()
      .describe("the column that picks a reward in rewardBySource (default data_source)"),
    id: z.string().optional().describe("a stable row id (default extra_info.index|id|row number)"),
    completion: z.string().optional().describe("a full-credit completion for SFT warm start (default: from the gold)"),
  })
  .default({});

/** Options of the "dataset" task. */
export const datasetOptions = z.strictObject({
  path: z.string().min(1).describe("a .jsonl file, a .parquet file, or a folder of .parquet shards"),
  testPath: z.string().optional().describe("a separate held-out file or folder (then path is all train)"),
  format: z.enum(["auto", "jsonl", "parquet"]).default("auto").describe("auto: from the extension or folder"),
  fields: FieldsSchema,
  reward: RewardSpecSchema.default("math-answer").describe("the reward of every row (unless rewardBySource says)"),
  rewardBySource: z
    .record(z.string(), RewardSpecSchema)
    .optional()
    .describe("data_source value → reward, as verl dispatches; other sources use `reward`"),
  correctTerm: z.string().default("correct").describe("the term whose value 1 means correct (pass@k)"),
  testPercent: z.number().int().min(0).max(100).default(10).describe("held-out share when there is no split column"),
  chatTemplate: z
    .enum(["auto", "none"])
    .default("auto")
    .describe("auto: render prompts with the model's chat template when it has one; none: plain text"),
  systemPrompt: z.string().optional().describe("a system message put before string prompts"),
  modelPath: z.string().optional().describe("model folder for the chat template (the recipe loader fills it)"),
  goldPattern: z
    .string()
    .optional()
    .describe('a regular expression whose first group is the gold in a longer text (GSM8K: "#### (.+)$")'),
  badGolds: z
    .enum(["error", "drop", "keep"])
    .default("error")
    .describe("a gold the reward cannot parse: error at load, drop the row, or keep it (its scores are null)"),
  stop: z.array(z.string()).optional().describe("stop strings for sampling"),
  maxNewTokens: z.number().int().positive().optional().describe("suggested cap on generated tokens"),
});

/** Options of "dataset" after defaults. */
export type DatasetOptions = z.infer<typeof datasetOptions>;
/** One reward reference after defaults. */
export type RewardRef = z.infer<typeof RewardRefSchema>;
/** A user module reward after defaults. */
export type ModuleReward = z.infer<typeof ModuleRewardSchema>;
/** A reward spec after defaults. */
export type RewardSpecOption = z.infer<typeof RewardSpecSchema>;

/** Usual names tried, in order, for each unnamed field. */
export const DEFAULT_FIELDS = {
  prompt: ["prompt", "question", "problem", "input"],
  gold: ["reward_model.ground_truth", "answer", "gold", "solution", "ground_truth", "target"],
  split: ["extra_info.split", "split"],
  dataSource: ["data_source"],
  id: ["extra_info.index", "id"],
  completion: [] as string[],
} as const;
