/**
 * The recipe's `sampler: { type: "openai", ... }` (docs/remote-sampler.md): generation over HTTP on any
 * OpenAI-compatible completions server (rlvr serve, vLLM, SGLang, llama.cpp's server), training in rlvr. The trainer
 * composes this schema into its `sampler` union; every field is described here once.
 */
import { z } from "zod";

/** A remote OpenAI-compatible sampler. */
export const OpenAiSamplerSchema = z.strictObject({
  type: z.literal("openai"),
  baseUrl: z
    .url({ protocol: /^https?$/ })
    .describe("the server's OpenAI base URL, e.g. http://127.0.0.1:8000/v1 (POST {baseUrl}/completions)"),
  model: z.string().min(1).describe("the model id the server serves (its /v1/models lists it)"),
  apiKeyEnv: z
    .string()
    .min(1)
    .default("RLVR_SAMPLER_API_KEY")
    .describe("environment variable holding the bearer token, if the server needs one (never put keys in recipes)"),
  temperature: z
    .number()
    .positive()
    .default(1)
    .describe("T; the server must return log_softmax(logits / T) (algorithms spec §5)"),
  topK: z.number().int().nonnegative().default(0).describe("0 = off (sent as top_k, a vLLM extension, when > 0)"),
  topP: z.number().gt(0).lte(1).default(1).describe("1 = off; < 1 makes sampled and trained distributions differ"),
  tokenIds: z
    .enum(["auto", "never"])
    .default("auto")
    .describe(
      "auto: prompts sent as token ids and return_token_ids asked (vLLM, rlvr serve), re-tokenising text with a " +
        "warning if the server returns none; never: text prompts, completions re-tokenised (mismatches counted)",
    ),
  pushWeights: z
    .boolean()
    .default(true)
    .describe(
      "after each optimizer step, save the weights under the run folder and POST {baseUrl}/load_weights {path} " +
        "(rlvr serve's route; the server must read the run folder); false: the server's weights are never updated",
    ),
  timeoutMs: z.number().int().positive().default(600_000).describe("time limit of one HTTP request"),
});

/** A remote sampler's recipe section, defaults filled in. */
export type OpenAiSamplerConfig = z.infer<typeof OpenAiSamplerSchema>;
