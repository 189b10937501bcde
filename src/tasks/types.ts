/**
 * The task contract: a procedural generator of examples (prompt, ground truth, gold completion for SFT warm
 * start) plus the weighted reward terms that score a completion. Tasks know nothing of tensors (DESIGN.md), so a
 * task can be used from another trainer or over HTTP.
 */
import type { RewardResult } from "../rewards/types.js";
import type { RgbImage } from "../util/image.js";

/** One generated example. */
export interface Example<Gold = unknown> {
  /** Stable id, unique within the task and split (e.g. "countdown/test/17"). */
  id: string;
  /** The prompt text given to the model. */
  prompt: string;
  /** Ground truth in the shape the task's rewards expect. */
  gold: Gold;
  /** A completion that earns full reward, for SFT warm start and the gold test. */
  goldCompletion: string;
  /** A multi-turn gold cut into model turns and inserted tool/environment text (joins to `goldCompletion`). */
  goldSegments?: GoldSegment[];
  /** Images of the prompt's `<image>` placeholders, in order (vision tasks: docs/vision.md). */
  images?: RgbImage[];
  /**
   * Stop strings of this example in place of the task's: a mix of tasks whose answers end differently (video-mix:
   * `</answer>` for a time span, `</glue>` for grounded QA, which writes `</answer>` first).
   */
  stop?: string[];
}

/** One span of a multi-turn gold completion: a model turn (SFT trains it) or inserted text (SFT masks it). */
export interface GoldSegment {
  kind: "model" | "inserted";
  text: string;
}

/** A reward term of a task: a registered reward, its weight and options. */
export interface RewardTerm {
  /** Term name in metrics (e.g. "correct", "format"). */
  name: string;
  /** Name of the reward in the reward registry. */
  reward: string;
  /** Weight in the task's sum. */
  weight: number;
  /** Options passed to the reward (validated by its schema). */
  options?: unknown;
}

/** A registered task. */
export interface Task<Gold = unknown> {
  /** Registry name, kebab-case (e.g. "countdown"). */
  name: string;
  /** One line describing the task. */
  description: string;
  /**
   * Deterministic examples: the same (split, count, seed) gives the same list, and train and test never share a
   * prompt.
   */
  generate(split: "train" | "test", count: number, seed: number): Example<Gold>[];
  /** The weighted reward terms; the task's score is their weighted sum. */
  terms: RewardTerm[];
  /** Name of the term that decides correctness for pass@k (its unweighted value must be 1). */
  correctTerm: string;
  /** Stop strings for sampling. */
  stop?: string[];
  /** Suggested cap on generated tokens. */
  maxNewTokens?: number;
  /** The environment (src/envs registry name and options) that answers its model turns; absent = single turn. */
  environment?: { name: string; options?: unknown };
  /**
   * Scores one completion: the weighted sum of `terms`. A term that is unscorable makes the whole score null.
   * `terms` in the result carry the unweighted values by term name. `turns`: a multi-turn completion's model turns.
   */
  score(
    example: Example<Gold>,
    completion: string,
    tokens?: readonly number[],
    turns?: readonly string[],
  ): Promise<RewardResult>;
}
