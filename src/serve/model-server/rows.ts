/**
 * From a validated request to scheduler rows: prompt checks against the served model (token ids in the vocabulary,
 * prompt + max_tokens within the context), the budget default, and the seed → row streams mapping.
 *
 * Seeds. A request's rows are numbered prompt-major (row r = prompt p × n + choice i, which is also the OpenAI
 * `index` of the choice). With seed s (taken mod 2^32; a request without one gets the next number of the server's
 * seeded stream), row r draws from `new Rng(new Rng(s).nextU32()).split(r)`: exactly the stream rlvr's own
 * `sample(model, tokenizer, rows, { rng: new Rng(s) })` gives its row r. So a request's output depends only on its
 * seed and its own fields, not on which other requests share its batch, and it equals rlvr's own sampler on the same
 * rows with the same seed (bit for bit with a GPT-2-shaped model; with RoPE models a different left padding in a
 * mixed batch shifts positions, which is exact in arithmetic but can move logits by float rounding).
 */
import type { DrawOptions } from "../../sampling/filter.js";
import { Rng } from "../../util/index.js";
import { badRequest } from "./errors.js";
import type { ModelHost } from "./host.js";
import type { RowRequest } from "./scheduler.js";
import { checkImageTokens } from "./images.js";
import type { RgbImage } from "../../util/image.js";

/** The sampling fields both routes share, resolved. */
export interface SamplingFields {
  n: number;
  maxTokens: number | null;
  /** Used when max_tokens is absent: a number, or "rest" = the context left after the prompt. */
  defaultMaxTokens: number | "rest";
  temperature: number;
  topP: number;
  topK: number;
  stop: string[];
  seed: number;
  topLogprobs: number;
}

/**
 * The rows of one request: prompt-major, n per prompt. `param` names the prompt field in errors. `images[p]` are
 * prompt p's images (a chat request to a vision-language model); every prompt's image tokens are checked.
 */
export function planRows(
  host: ModelHost,
  prompts: number[][],
  f: SamplingFields,
  param: string,
  images: readonly (readonly RgbImage[])[] = [],
): RowRequest[] {
  const { vocabSize } = host.current.model.config;
  const context = host.contextLength;
  const draws: DrawOptions = { temperature: f.temperature, topP: f.topP, topK: f.topK };
  const base = new Rng(f.seed >>> 0).nextU32(); // as sample() derives its session seed from its rng
  const rows: RowRequest[] = [];
  prompts.forEach((prompt, p) => {
    if (prompt.length === 0) throw badRequest(`${param}: the prompt is empty (no tokens)`, param);
    const bad = prompt.find((id) => id >= vocabSize);
    if (bad !== undefined)
      throw badRequest(
        `${param}: token id ${bad} is outside the vocabulary [0, ${vocabSize})`,
        param,
        "invalid_token_id",
      );
    if (prompt.length >= context) {
      const msg = `${param}: the prompt has ${prompt.length} tokens; this model's context is ${context} tokens, prompt and completion together`;
      throw badRequest(msg, param, "context_length_exceeded");
    }
    const own = images[p] ?? [];
    checkImageTokens(host.current.model, prompt, own.length, param);
    const room = context - prompt.length;
    const maxTokens = f.maxTokens ?? (f.defaultMaxTokens === "rest" ? room : Math.min(f.defaultMaxTokens, room));
    if (maxTokens > room) {
      const msg = `max_tokens: ${maxTokens} + ${prompt.length} prompt tokens exceeds this model's context of ${context} tokens`;
      throw badRequest(msg, "max_tokens", "context_length_exceeded");
    }
    for (let i = 0; i < f.n; i++) {
      const r = p * f.n + i;
      const row: RowRequest = {
        prompt,
        maxTokens,
        draws,
        rng: new Rng(base).split(r),
        stop: f.stop,
        topLogprobs: f.topLogprobs,
      };
      rows.push(own.length > 0 ? { ...row, images: own } : row);
    }
  });
  return rows;
}

/** The stop field as a list. */
export function stopList(stop: string | string[] | null | undefined): string[] {
  if (stop === null || stop === undefined) return [];
  return (typeof stop === "string" ? [stop] : stop).filter((s) => s.length > 0);
}
