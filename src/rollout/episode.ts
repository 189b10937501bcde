/**
 * The episode loop (docs/multi-turn.md): the one rollout path. Every row of a batch alternates model turns (tokens
 * drawn from the policy, log-probs recorded) and inserted segments (the environment's answer, tokenized once and
 * fed to the model token by token, loss mask 0); a single-turn task is an episode with no environment, whose one
 * turn ends on eos, a stop string or the token budget.
 *
 * All rows share one `DecodeSession` (KV cache) and advance in lock-step, one slot per row per step: a row in a
 * model turn feeds the token it just drew, a row in an inserted segment feeds its next inserted token, so rows at
 * different turns decode in the same batch and nothing is ever recomputed. When every unfinished row is inserting,
 * the whole common run of inserted tokens goes in one multi-token step. Environment calls of the rows whose turn
 * ended in a step run concurrently and are awaited before the next step (a slow call holds the batch up to
 * `timeoutMs`: the price of keeping each row's slots contiguous, which RoPE's positions need).
 *
 * A turn ends on eos, a stop string, the environment's call parser (`endsTurn`, given the turn's text after each
 * drawn token), or the token budgets. Departure: a synchronous environment that never returns cannot be timed out
 * (calls are awaited).
 */
import type { Rng } from "../util/index.js";
import type { RgbImage } from "../util/image.js";
import type { Transformer } from "../models/transformer.js";
import type { Tokenizer } from "../models/tokenizer.js";
import { DecodeSession } from "../sampling/sample.js";
import { StopWatcher } from "../sampling/stop.js";
import type { EnvEpisode, EnvReply, Environment, EpisodeBudgets, TurnInfo } from "../envs/types.js";
import type { EpisodeInfo, FinishReason, Segment } from "./types.js";

/** Sampling settings and the token budget of one batch of episodes. */
export interface EpisodeOptions {
  /** Completion tokens in all (model and inserted); an environment's `maxTotalTokens` may lower it. */
  maxNewTokens: number;
  temperature: number;
  topK?: number;
  topP?: number;
  /** Stop strings of a single-turn task (an environment brings its own). */
  stop?: string[];
  /** Per prompt, stop strings in place of `stop` (an example's own, `Example.stop`); undefined = `stop`. */
  rowStop?: readonly (readonly string[] | undefined)[];
  rng: Rng;
  /** Per prompt, the images of its `<image>` placeholders (a vision-language policy). */
  images?: readonly (readonly RgbImage[] | null | undefined)[];
}

/** One finished episode: the completion as segments laid end to end (what a `Rollout` records). */
export interface EpisodeResult {
  completionIds: number[];
  samplerLogprobs: number[];
  lossMask: number[];
  segments: Segment[];
  /** Every token decoded, inserted ones included. */
  text: string;
  finishReason: FinishReason;
  episode: EpisodeInfo;
}

type RowState = "model" | "insert" | "done";

/** A row's growing episode. */
interface Row {
  ids: number[];
  logprobs: number[];
  mask: number[];
  segments: Segment[];
  state: RowState;
  turnIds: number[];
  pending: number[]; // inserted tokens not yet fed
  finish: FinishReason;
  info: EpisodeInfo;
  episode: EnvEpisode | null;
}

/**
 * Runs one episode per prompt (token ids) in one batch. `env` null: single turn. `episodes[b]` is row b's
 * environment episode (`env.start(example)`); the loop never throws for an environment's error.
 */
export async function runEpisodes(
  model: Transformer,
  tokenizer: Tokenizer,
  prompts: number[][],
  env: Environment | null,
  episodes: readonly (EnvEpisode | null)[],
  opts: EpisodeOptions,
): Promise<EpisodeResult[]> {
  if (prompts.length === 0) return [];
  const budgets = resolveBudgets(env, opts.maxNewTokens);
  const stopOf = (b: number) => (env ? env.stop : (opts.rowStop?.[b] ?? opts.stop ?? []));
  const session = new DecodeSession(model, tokenizer, prompts, {
    maxSlots: budgets.maxTotalTokens,
    temperature: opts.temperature,
    ...(opts.topK !== undefined ? { topK: opts.topK } : {}),
    ...(opts.topP !== undefined ? { topP: opts.topP } : {}),
    ...(opts.images ? { images: opts.images } : {}),
    rng: opts.rng,
  });
  const rows: Row[] = prompts.map((_, b) => ({
    ids: [],
    logprobs: [],
    mask: [],
    segments: [],
    state: "model",
    turnIds: [],
    pending: [],
    finish: "length",
    info: { ...(env ? { env: env.name } : {}), turns: 0, errors: [] },
    episode: episodes[b] ?? null,
  }));
  const watchers = rows.map((_, b) => new StopWatcher(tokenizer, stopOf(b)));
  if (budgets.maxTotalTokens === 0) rows.forEach((r) => (r.state = "done"));

  try {
    while (rows.some((r) => r.state !== "done")) {
      const live = rows.filter((r) => r.state !== "done");
      const width = live.every((r) => r.state === "insert") ? Math.min(...live.map((r) => r.pending.length)) : 1;
      const next = new Int32Array(rows.length * width).fill(tokenizer.padId); // (B, width)
      const ended: { b: number; end: TurnInfo["end"] }[] = [];
      rows.forEach((r, b) => {
        if (r.state === "insert") {
          const fed = r.pending.splice(0, width);
          fed.forEach((id, k) => (next[b * width + k] = id));
          for (const id of fed) pushToken(r, id, 0, 0);
          if (r.pending.length === 0) r.state = "model";
        } else if (r.state === "model") {
          const { token, logprob } = session.draw(b);
          next[b * width] = token;
          pushToken(r, token, logprob, 1);
          r.turnIds.push(token);
          const end: TurnInfo["end"] | null =
            token === tokenizer.eosId
              ? "eos"
              : watchers[b]!.hit(r.turnIds)
                ? "stop"
                : callEnds(env, tokenizer, r.turnIds)
                  ? "call"
                  : r.turnIds.length >= budgets.maxTokensPerTurn || r.ids.length >= budgets.maxTotalTokens
                    ? "length"
                    : null;
          if (end) ended.push({ b, end });
        }
      });
      await Promise.all(ended.map(({ b, end }) => endTurn(rows[b]!, end, env, budgets, tokenizer)));
      if (rows.every((r) => r.state === "done")) break;
      session.feed(next, width);
    }
  } finally {
    session.close(); // its KV cache goes back to the engine's pool for the next step's episodes
  }
  return rows.map((r) => ({
    completionIds: r.ids,
    samplerLogprobs: r.logprobs,
    lossMask: r.mask,
    segments: r.segments,
    text: tokenizer.decode(r.ids),
    finishReason: r.finish,
    episode: r.info,
  }));
}

/** Whether the environment's call parser finds a complete call in the turn so far (a throwing parser: no). */
function callEnds(env: Environment | null, tokenizer: Tokenizer, turnIds: readonly number[]): boolean {
  if (!env?.endsTurn) return false;
  try {
    return env.endsTurn(tokenizer.decode(turnIds)) === true;
  } catch {
    return false;
  }
}

/** The environment's budgets, defaulted and capped by the trainer's token budget. */
export function resolveBudgets(env: Environment | null, maxNewTokens: number): EpisodeBudgets {
  const b = env?.budgets ?? {};
  const maxTotalTokens = Math.min(maxNewTokens, b.maxTotalTokens ?? maxNewTokens);
  return {
    maxTurns: env ? (b.maxTurns ?? 1) : 1,
    maxTokensPerTurn: Math.min(maxTotalTokens, b.maxTokensPerTurn ?? maxTotalTokens),
    maxTotalTokens,
  };
}

/** Appends one token to the row and to its open segment (a new segment when the kind changes). */
function pushToken(r: Row, id: number, logprob: number, mask: 0 | 1): void {
  const kind = mask === 1 ? "model" : "inserted";
  const last = r.segments[r.segments.length - 1];
  if (last && last.kind === kind && last.end === r.ids.length) last.end++;
  else r.segments.push({ kind, start: r.ids.length, end: r.ids.length + 1, text: "" });
  r.ids.push(id);
  r.logprobs.push(logprob);
  r.mask.push(mask);
}

/** Closes a model turn: asks the environment (if any) and either queues its answer or ends the episode. */
async function endTurn(
  r: Row,
  end: TurnInfo["end"],
  env: Environment | null,
  budgets: EpisodeBudgets,
  tokenizer: Tokenizer,
): Promise<void> {
  const text = tokenizer.decode(r.turnIds);
  r.segments[r.segments.length - 1]!.text = text;
  r.turnIds = [];
  r.info.turns++;
  const outOfTokens = r.ids.length >= budgets.maxTotalTokens;
  if (!env || !r.episode) {
    finish(r, end === "length" ? "length" : "stop");
    if (end === "length" && env) r.info.truncated = outOfTokens ? "totalTokens" : "turnTokens";
    return;
  }
  if (end === "length" && outOfTokens) {
    r.info.truncated = "totalTokens";
    return finish(r, "length");
  }
  if (end === "length") r.info.truncated = "turnTokens";
  const reply = await callEnv(r.episode, text, { turn: r.info.turns, end }, env);
  if (reply.error) r.info.errors.push(reply.error);
  if (reply.kind === "end") {
    if (reply.reward !== undefined) r.info.envReward = reply.reward;
    return finish(r, reply.error ? "error" : end === "length" ? "length" : "stop");
  }
  if (r.info.turns >= budgets.maxTurns) {
    r.info.errors.push(`maxTurns: still calling after ${budgets.maxTurns} turns`);
    r.info.truncated = "turns";
    r.info.envReward = env.loopReward;
    return finish(r, "length");
  }
  const inserted = tokenizer.encode(reply.text);
  if (r.ids.length + inserted.length + 1 > budgets.maxTotalTokens) {
    r.info.truncated = "totalTokens"; // no room for the answer and a next turn
    return finish(r, "length");
  }
  if (inserted.length === 0) return; // nothing to insert: the next model turn starts at once
  r.pending = inserted;
  r.state = "insert";
  r.segments.push({ kind: "inserted", start: r.ids.length, end: r.ids.length, text: tokenizer.decode(inserted) });
}

function finish(r: Row, reason: FinishReason): void {
  r.state = "done";
  r.finish = reason;
}

/** One environment call with the environment's timeout; a throw or a timeout becomes a reply per `onError`. */
async function callEnv(ep: EnvEpisode, text: string, info: TurnInfo, env: Environment): Promise<EnvReply> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timeout: no answer within ${env.timeoutMs} ms`)), env.timeoutMs);
  });
  try {
    const reply = await Promise.race([Promise.resolve().then(() => ep.step(text, info)), timeout]);
    if (!reply || (reply.kind !== "observation" && reply.kind !== "end"))
      throw new Error(`environment ${env.name} returned no reply`);
    return reply;
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    const error = `${env.name}: ${msg}`;
    return env.onError === "reply"
      ? { kind: "observation", text: `\nerror: ${msg}\n`, error }
      : { kind: "end", reward: env.errorReward, error };
  } finally {
    clearTimeout(timer);
  }
}
