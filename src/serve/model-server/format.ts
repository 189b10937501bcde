/**
 * Response pieces in OpenAI's shapes: the two log-prob formats (the legacy completions one and the chat one), token
 * strings (`decode([id])`, or vLLM's `"token_id:N"` with `return_tokens_as_token_ids`), and usage.
 *
 * The log-prob of a token is the one the sampler records: log_softmax(logits / T) of the unfiltered distribution
 * (T = 1 when greedy; src/sampling/filter.ts), so it is what an rlvr training forward pass computes for that token.
 * `top_logprobs` are the most likely tokens under the same distribution.
 */
import type { Tokenizer } from "../../models/tokenizer.js";
import type { RowResult, TopLogprob } from "./scheduler.js";

/** How token strings are written. */
export interface TokenNaming {
  tokenizer: Tokenizer;
  /** vLLM's return_tokens_as_token_ids. */
  asIds: boolean;
}

/** A token's display string. */
export function tokenString(id: number, naming: TokenNaming): string {
  return naming.asIds ? `token_id:${id}` : naming.tokenizer.decode([id]);
}

/** The legacy completions `logprobs` object for tokens [from, to) of a row; `offset0` is the text offset of `from`. */
export function completionLogprobs(
  row: Pick<RowResult, "tokens" | "logprobs" | "top">,
  naming: TokenNaming,
  from = 0,
  to = row.tokens.length,
  offset0 = 0,
): {
  tokens: string[];
  token_logprobs: number[];
  top_logprobs: Record<string, number>[] | null;
  text_offset: number[];
} {
  const tokens = row.tokens.slice(from, to).map((id) => tokenString(id, naming));
  const textOffset: number[] = [];
  let at = offset0;
  for (const s of tokens) {
    textOffset.push(at);
    at += naming.asIds ? 0 : s.length;
  }
  const top = row.top
    ? row.top.slice(from, to).map((list) => Object.fromEntries(list.map(([id, lp]) => [tokenString(id, naming), lp])))
    : null;
  return { tokens, token_logprobs: row.logprobs.slice(from, to), top_logprobs: top, text_offset: textOffset };
}

/** One entry of chat `logprobs.content`. */
interface ChatTokenLogprob {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: { token: string; logprob: number; bytes: number[] }[];
}

/** The chat `logprobs` object for tokens [from, to) of a row. */
export function chatLogprobs(
  row: Pick<RowResult, "tokens" | "logprobs" | "top">,
  naming: TokenNaming,
  from = 0,
  to = row.tokens.length,
): { content: ChatTokenLogprob[] } {
  const entry = ([id, lp]: TopLogprob) => {
    const token = tokenString(id, naming);
    return { token, logprob: lp, bytes: [...Buffer.from(token, "utf8")] };
  };
  const content: ChatTokenLogprob[] = [];
  for (let j = from; j < to; j++) {
    content.push({ ...entry([row.tokens[j]!, row.logprobs[j]!]), top_logprobs: (row.top?.[j] ?? []).map(entry) });
  }
  return { content };
}

/** OpenAI usage: prompt tokens counted once per prompt, completion tokens over every choice. */
export function usage(prompts: readonly number[][], rows: readonly Pick<RowResult, "tokens">[]) {
  const prompt = prompts.reduce((s, p) => s + p.length, 0);
  const completion = rows.reduce((s, r) => s + r.tokens.length, 0);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}
