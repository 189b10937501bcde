/**
 * The reward contract shared by every checker, task and trainer (DESIGN.md "Core records").
 *
 * A reward reads a completion (text, plus its token ids when the caller has them) and an example's ground
 * truth, and returns `{ score, terms, info }`. `score: null` means "not scorable" (e.g. the gold answer cannot be
 * parsed, or the checker itself failed): it is counted by the trainer and never silently treated as 0 or 1.
 * `terms` holds the named parts of the score (correctness, format, ...) so per-task weighted mixes and metrics can
 * see them. Rewards are pure functions of their inputs; those that run code may be async.
 */
import type { z } from "zod";

/** Result of scoring one completion. */
export interface RewardResult {
  /** Total score, or null when the completion cannot be scored. */
  score: number | null;
  /** Named parts of the score (already weighted as the reward defines). */
  terms: Record<string, number>;
  /** Diagnostics: what was extracted, why a check failed. */
  info?: Record<string, unknown>;
  /**
   * Character offset in the completion where the first verifiably wrong step ends, when the checker can localise a
   * mistake (e.g. "working-steps"). Text after it follows from a wrong premise; with
   * `algorithm.loss.afterFirstError: "mask"` the trainer gives its tokens no credit.
   */
  firstErrorEnd?: number;
}

/** What a reward sees for one completion. */
export interface RewardInput<Gold = unknown> {
  /** The completion text (without the prompt). */
  completion: string;
  /** The example's ground truth, in the shape the reward documents. */
  gold: Gold;
  /** Completion token ids, when the caller has them (length rewards count tokens). */
  tokens?: readonly number[];
  /** The prompt text, when available (some rewards penalise echoing it). */
  prompt?: string;
  /** Model turns of a multi-turn rollout, tool outputs excluded (e.g. SAKE's three turns). */
  turns?: readonly string[];
}

/** A named reward function with its options schema. */
export interface RewardSpec<Options = unknown, Gold = unknown> {
  /** Registry name, kebab-case (e.g. "math-answer"). */
  name: string;
  /** One line saying what it checks. */
  description: string;
  /** zod schema of the options; defaults live here. */
  options: z.ZodType<Options>;
  /** Scores one completion. */
  score(input: RewardInput<Gold>, options: Options): RewardResult | Promise<RewardResult>;
  /** A completion that must earn full score for `gold` (used by the registry-wide gold test). */
  goldCompletion?(gold: Gold, options: Options): string;
  /** The example gold used by the registry-wide test and `rlvr rewards`. */
  exampleGold?: Gold;
  /** The maximum score (full credit), for the registry-wide test. */
  maxScore?: number;
  /** True for rewards that are judged by a model rather than a rule (e.g. caption recall). */
  modelJudged?: boolean;
}
