/**
 * The environment contract (docs/multi-turn.md): one interface for tool sets and interactive worlds, driven by the
 * episode loop of src/rollout/episode.ts. A model turn ends on eos, on one of the environment's stop strings (the
 * end of a call, e.g. `</entities>`), on a complete call found by the environment's own parser (`endsTurn`, for
 * calls that no fixed string closes, such as a JSON object), or on the per-turn token budget; the environment then reads the turn's text and
 * answers with an observation (text that the loop tokenizes once and inserts, loss mask 0) or ends the episode,
 * optionally with its own reward (bad input, a world's verifier). Calls are async and the loop times them out.
 *
 * What happens on trouble is the environment's choice, never a crash: an error it reports is counted; a call that
 * throws or times out is answered with the error as text (`onError: "reply"`) or ends the episode with
 * `errorReward` (`onError: "end"`); a model that keeps calling past `budgets.maxTurns` gets `loopReward`.
 * Environments know nothing of tensors or tokens (DESIGN.md: envs import rewards, tasks and util only).
 */
import type { Example } from "../tasks/types.js";

/** The environment's answer to one model turn. */
export type EnvReply =
  | {
      kind: "observation";
      /** Inserted after the turn, then the model takes its next turn. */
      text: string;
      /** Set when the turn was bad input answered as text (malformed call, unknown tool, ...): counted. */
      error?: string;
    }
  | {
      kind: "end";
      /** The episode's reward, replacing the task's score (bad input, a verifier); absent = the task scores it. */
      reward?: number;
      /** Set when the episode ends because of bad input: counted. */
      error?: string;
    };

/** What the environment learns about a finished model turn besides its text. */
export interface TurnInfo {
  /** 1-based index of the turn. */
  turn: number;
  /** How the turn ended: eos, a stop string (a call), the environment's parser (`endsTurn`), or the token budget. */
  end: "eos" | "stop" | "call" | "length";
}

/** One episode of an environment, for one example: answers each model turn in order. */
export interface EnvEpisode {
  /** Answers a model turn; may be async, may throw (the loop counts it and applies `onError`). */
  step(turnText: string, info: TurnInfo): EnvReply | Promise<EnvReply>;
}

/** Episode budgets (every one enforced by the loop, truncation recorded on the rollout). */
export interface EpisodeBudgets {
  /** Most model turns; a model still calling after the last one gets `loopReward` and a counted error. */
  maxTurns: number;
  /** Most tokens in one model turn (the turn then ends with `end: "length"`). */
  maxTokensPerTurn: number;
  /** Most completion tokens in all, model and inserted (the trainer's `train.maxCompletionTokens` caps it). */
  maxTotalTokens: number;
}

/** A tool set or world. */
export interface Environment<Gold = unknown> {
  /** Registry name. */
  name: string;
  /** Strings that end a model turn (besides eos): the end of a call. */
  stop: string[];
  /**
   * Optional call parser: given the turn's text so far, true once it holds a complete call, which ends the turn
   * there (`end: "call"`). Checked after every drawn token that did not end the turn otherwise, so it must be cheap
   * and must not throw (a throw counts as false). For calls no fixed string closes: a balanced JSON object, a
   * command line ended by its last argument. Stop strings are checked first.
   */
  endsTurn?: (turnText: string) => boolean;
  /** Budgets; a missing one defaults to the loop's (one turn, the trainer's token budget). */
  budgets: Partial<EpisodeBudgets>;
  /** Milliseconds a `step` may take before it counts as a timeout error. */
  timeoutMs: number;
  /** A throwing or timed-out call: answer the model with the error as text, or end the episode. */
  onError: "reply" | "end";
  /** Reward of an episode ended by an error (`onError: "end"`). */
  errorReward: number;
  /** Reward of an episode that still calls after `maxTurns` (an endless loop of calls). */
  loopReward: number;
  /** Starts an episode for one example. */
  start(example: Example<Gold>): EnvEpisode;
}
