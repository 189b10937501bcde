/**
 * A sampler on a remote OpenAI-compatible server (docs/remote-sampler.md): one `/completions` request per
 * generation batch, prompts as token ids, `n` completions each, the sampled tokens' log-probs asked with `logprobs`,
 * and vLLM's `return_token_ids` so that training gets the exact sampled ids (token-in/token-out, DESIGN.md). Rows
 * come back prompt-major (choice index = prompt × n + i), the order rlvr's own sampler uses; with rlvr serve, the
 * request's `seed` s gives row r the stream `sample(..., { rng: new Rng(s) })` gives it (docs/model-server.md), so the
 * trainer's seed decides the remote samples exactly as it decides the built-in ones.
 *
 * Where the server returns no token ids (`tokenIds: "never"`, or an older server), the completion text is
 * re-tokenised with the trainer's tokenizer: the ids then may not be the sampled ones (a merge the server did not
 * make, a stop string the server cut). A completion whose re-tokenised length differs from the server's number of
 * log-probs, or whose tokens differ from the server's token strings where it gives them, has no usable inference
 * log-probs (`logprobs: null`) and is counted in `stats.mismatched` (conservative: a doubtful row is never trained on
 * log-probs of other tokens). When the only difference is one final token on a completion that stopped, and that
 * token is no part of a stop string, it is taken to be the eos, which `text` never shows. Rlvr warns once per run
 * that it is re-tokenising.
 */
import { z } from "zod";
import type { Tokenizer } from "../../models/tokenizer.js";
import { ConfigError } from "../../util/index.js";
import { CompletionResponseSchema, JsonClient, RemoteSamplerError, type CompletionChoice } from "./client.js";
import type { OpenAiSamplerConfig } from "./options.js";

/** One prompt: its token ids (bos included, as training sees it) and its text (sent when ids are not). */
export interface RemotePrompt {
  ids: number[];
  text: string;
}

/** Options of one remote generation batch. */
export interface RemoteSampleOptions {
  /** Completions per prompt. */
  n: number;
  maxNewTokens: number;
  temperature: number;
  topK?: number;
  topP?: number;
  stop?: string[];
  /** The request's seed (mod 2^32). */
  seed: number;
}

/** One remote completion, aligned with the trainer's tokenizer. */
export interface RemoteCompletion {
  /** Completion token ids (a final eos included when one was sampled). */
  tokens: number[];
  /** The server's log-prob of each token, or null when they could not be aligned with `tokens`. */
  logprobs: number[] | null;
  finishReason: "stop" | "length" | "error";
  /** tokenizer.decode(tokens), as the built-in sampler writes it. */
  text: string;
  /** The ids came from re-tokenising the server's text. */
  retokenized: boolean;
}

/** Counts since the sampler was made. */
export interface RemoteStats {
  completions: number;
  retokenized: number;
  /** Re-tokenised completions whose length disagreed with the server's log-probs. */
  mismatched: number;
}

const ModelsSchema = z.looseObject({ data: z.array(z.looseObject({ id: z.string() })) });
const LoadWeightsSchema = z.looseObject({ weights_version: z.number().optional() });

/** Talks to one OpenAI-compatible server for one model. */
export class RemoteSampler {
  readonly stats: RemoteStats = { completions: 0, retokenized: 0, mismatched: 0 };
  private warned = false;

  private constructor(
    readonly config: OpenAiSamplerConfig,
    private readonly client: JsonClient,
    private readonly tokenizer: Tokenizer,
    private readonly warn: (msg: string) => void,
  ) {}

  /** Checks that the server answers and serves `config.model` (a ConfigError naming `sampler.model` otherwise). */
  static async connect(
    config: OpenAiSamplerConfig,
    tokenizer: Tokenizer,
    warn: (msg: string) => void,
  ): Promise<RemoteSampler> {
    const client = new JsonClient(config.baseUrl, process.env[config.apiKeyEnv], config.timeoutMs);
    const models = await client.get("/models", ModelsSchema);
    const ids = models.data.map((m) => m.id);
    if (!ids.includes(config.model)) {
      throw new ConfigError(
        `sampler.model: "${config.model}" is not served by ${config.baseUrl} (it serves: ${ids.join(", ") || "none"})`,
      );
    }
    return new RemoteSampler(config, client, tokenizer, warn);
  }

  /** Samples `n` completions of each prompt in one request; rows prompt-major. */
  async sample(prompts: readonly RemotePrompt[], o: RemoteSampleOptions): Promise<RemoteCompletion[]> {
    if (prompts.length === 0) return [];
    const withIds = this.config.tokenIds === "auto";
    const body = {
      model: this.config.model,
      prompt: withIds ? prompts.map((p) => p.ids) : prompts.map((p) => p.text),
      n: o.n,
      max_tokens: o.maxNewTokens,
      temperature: o.temperature,
      top_p: o.topP ?? 1,
      ...(o.topK ? { top_k: o.topK } : {}),
      ...(o.stop && o.stop.length > 0 ? { stop: o.stop } : {}),
      seed: o.seed >>> 0,
      logprobs: 1,
      ...(withIds ? { return_token_ids: true } : {}),
    };
    const res = await this.client.post("/completions", body, CompletionResponseSchema);
    const rows = prompts.length * o.n;
    const byIndex = new Map(res.choices.map((c) => [c.index, c]));
    const out: RemoteCompletion[] = [];
    for (let r = 0; r < rows; r++) {
      const c = byIndex.get(r);
      if (!c) throw new RemoteSamplerError(`remote sampler: the answer has no choice with index ${r} (of ${rows})`);
      out.push(this.completion(c, o.stop ?? []));
    }
    return out;
  }

  /** POSTs `{baseUrl}/load_weights {path}` (rlvr serve's route); returns the server's weights version if it says. */
  async loadWeights(path: string): Promise<number | undefined> {
    return (await this.client.post("/load_weights", { path }, LoadWeightsSchema)).weights_version;
  }

  /**
   * Whether a stopped completion's one token beyond its text is the eos: the server's last token string is empty (rlvr
   * serve names a special token by its decoded text, "") or not part of any stop string; without token strings, only
   * when no stop string was asked.
   */
  private endsAtEos(strings: readonly string[] | null, stop: readonly string[]): boolean {
    if (!strings) return stop.length === 0;
    const last = strings[strings.length - 1]!;
    return last === "" || !stop.some((s) => s.includes(last));
  }

  private completion(c: CompletionChoice, stop: readonly string[]): RemoteCompletion {
    this.stats.completions++;
    const finishReason = c.finish_reason === "stop" || c.finish_reason === "length" ? c.finish_reason : "error";
    const lp = c.logprobs?.token_logprobs;
    const logprobs = lp && lp.every((x) => typeof x === "number") ? (lp as number[]) : null;
    if (!logprobs)
      throw new RemoteSamplerError("remote sampler: a choice has no per-token logprobs (asked with logprobs: 1)");
    if (c.token_ids) {
      if (c.token_ids.length !== logprobs.length) {
        throw new RemoteSamplerError(
          `remote sampler: a choice has ${c.token_ids.length} token_ids but ${logprobs.length} logprobs`,
        );
      }
      const tokens = c.token_ids;
      return { tokens, logprobs, finishReason, text: this.tokenizer.decode(tokens), retokenized: false };
    }
    if (!this.warned) {
      this.warned = true;
      const why = this.config.tokenIds === "never" ? "sampler.tokenIds is never" : "the server returned no token_ids";
      this.warn(
        `remote sampler: ${why}, so completions are re-tokenised from text; tokens may differ from the sampled ones ` +
          "(counted in remote/tokenMismatchFrac; those completions get no inference log-probs)",
      );
    }
    this.stats.retokenized++;
    const tokens = this.tokenizer.encode(c.text);
    const strings = c.logprobs?.tokens?.length === logprobs.length ? c.logprobs.tokens : null;
    if (finishReason === "stop" && logprobs.length === tokens.length + 1 && this.endsAtEos(strings, stop)) {
      tokens.push(this.tokenizer.eosId);
    }
    // Aligned: one id per server log-prob and, where the server names its tokens, the same token at each position.
    const aligned =
      logprobs.length === tokens.length &&
      (!strings || tokens.every((id, j) => id === this.tokenizer.eosId || this.tokenizer.decode([id]) === strings[j]));
    if (!aligned) this.stats.mismatched++;
    return {
      tokens,
      logprobs: aligned ? logprobs : null,
      finishReason,
      text: this.tokenizer.decode(tokens),
      retokenized: true,
    };
  }
}
