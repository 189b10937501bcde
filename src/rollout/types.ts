/**
 * Rollout records (DESIGN.md "Core records"): token-in/token-out. A rollout keeps the exact prompt and completion
 * token ids and the sampler's log-prob of every completion token; training reads these ids and never
 * re-tokenizes `text`, which is kept for rewards and for people.
 *
 * A completion is a sequence of segments (docs/multi-turn.md): model turns (sampled tokens, loss mask 1) and
 * inserted segments (tool output or environment observations, exact token ids fed to the policy, loss mask 0 and
 * sampler log-prob 0). `completionIds`, `samplerLogprobs` and `lossMask` are the segments laid end to end, which is
 * what the trainer reads; a single-turn completion is the one-segment case.
 */
import type { RgbImage } from "../util/image.js";

/** Why a completion ended: a stop string or eos, the token budget, or a failure while producing it. */
export type FinishReason = "stop" | "length" | "error";

/** Who produced a segment's tokens: the policy (a model turn) or the environment (inserted, never trained). */
export type SegmentKind = "model" | "inserted";

/** One span of a completion: positions [start, end) of `completionIds`, and its decoded text. */
export interface Segment {
  kind: SegmentKind;
  start: number;
  end: number;
  /** Decoded tokens (model turns) or the environment's text as inserted. */
  text: string;
}

/** How an episode ran: turns, budget truncation and environment errors (absent fields = none). */
export interface EpisodeInfo {
  /** The environment that answered the turns; absent for a single-turn task. */
  env?: string;
  /** Model turns taken. */
  turns: number;
  /** Which budget cut the episode short: a turn's tokens, the total tokens, or the number of turns. */
  truncated?: "turnTokens" | "totalTokens" | "turns";
  /** Errors the environment reported or the loop caught (malformed call, unknown tool, timeout, ...), in order. */
  errors: string[];
  /** The environment's reward when it ended the episode with one (bad input, budget); replaces the task's score. */
  envReward?: number;
}

/** One sampled completion of one prompt, with its reward and advantage once known. */
export interface Rollout {
  /** Unique within the run: `<step>/<group>/<member>` (generation batch included when resampling). */
  id: string;
  /** Task registry name. */
  task: string;
  /** Example id (e.g. "addition/train/17"). */
  exampleId: string;
  /** Group id shared by the G completions of one prompt in one step. */
  groupId: string;
  /** Prompt token ids as fed to the model (bos included when the tokenizer has one). */
  promptIds: number[];
  /** Completion token ids as sampled (a final eos included when it was sampled). */
  completionIds: number[];
  /** Sampler log-prob of each completion token: log_softmax(logits / T) at the sampled id. The old log-probs. */
  samplerLogprobs: number[];
  /** Policy-loss mask per completion token (1 = trained; 0 for tool output or masked truncations). */
  lossMask: number[];
  /** Decoded completion: every segment's text in order (tool output included; model turns are in `segments`). */
  text: string;
  /** The completion's segments in order; absent in hand-built records, which then hold one model turn. */
  segments?: Segment[];
  /** Turns, truncation and errors of the episode that produced it. */
  episode?: EpisodeInfo;
  /** How the completion ended. */
  finishReason: FinishReason;
  /** Weighted reward, or null when unscorable (counted, never treated as 0 or 1). */
  reward: number | null;
  /** Unweighted reward terms by name. */
  terms: Record<string, number>;
  /** Why a reward was null, or other checker diagnostics. */
  rewardInfo?: Record<string, unknown>;
  /** Character offset where the checker's first localised mistake ends (RewardResult.firstErrorEnd). */
  firstErrorEnd?: number;
  /** Tokens taken out of the loss because they follow that mistake (`loss.afterFirstError: "mask"`). */
  creditMasked?: number;
  /** Advantage (one value per completion; batch estimators with outcome rewards are constant over tokens). */
  advantage: number;
  /** Per-token advantages, only when they vary along the completion (batch estimators with KL in the reward). */
  tokenAdvantages?: number[];
  /** Frozen reference model's log-prob of each completion token (only when β > 0 or KL is monitored). */
  refLogprobs?: number[];
  /** Trainer step (policy version) whose weights sampled it. */
  policyVersion: number;
  /** The prompt's images, in placeholder order (a vision task); JSON names their refs only, not their pixels. */
  images?: RgbImage[];
  /** A masked-diffusion answer's decoding: every position of the answer region and the step that unmasked it. */
  unmasking?: UnmaskingTrace;
}

/** How a masked-diffusion sampler decoded an answer region (src/sampling/diffusion.ts); the trajectory estimator's input. */
export interface UnmaskingTrace {
  /** Every position of the answer region (genLength ids, eos padding included). */
  generated: number[];
  /** The step (0 to steps − 1) at which each position was unmasked. */
  unmaskedAt: number[];
  /** Denoising steps of the whole answer. */
  steps: number;
}

/** The G rollouts of one prompt. */
export interface RolloutGroup {
  /** Group id. */
  id: string;
  /** The example the prompt came from. */
  exampleId: string;
  /** Prompt text. */
  prompt: string;
  /** Its G completions. */
  rollouts: Rollout[];
}
