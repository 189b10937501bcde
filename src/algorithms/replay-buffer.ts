/**
 * ExGRPO's experience replay buffer (algorithms spec §6; arXiv 2510.02245 §4.1–4.2): per-question stores of
 * correct rollouts with the log-probs of the policy that wrote them, retirement of always-solved questions,
 * difficulty buckets, Gaussian-weighted question choice centred on medium difficulty, lowest-entropy trajectory
 * choice, and the delayed start (pass rate > 0.35).
 *
 * Pure bookkeeping over plain records and a seeded `Rng`; the trainer builds mixed groups from `select` and scores
 * replayed tokens with `exgrpoShape` (off-policy.ts). Choices the paper leaves open, as the spec fixes them:
 * `maxPerQuestion` 4 (newest kept), σ = 1, ties in entropy go to the newest rollout. A stored rollout without
 * behaviour log-probs is rejected (`MissingBehaviorLogprobsError`): there is never a fallback to the current policy,
 * which would make the ratio 1 and silently remove the off-policy correction.
 */
import type { Rng } from "../util/rng.js";

/** A stored correct rollout. */
export interface ReplayRollout {
  id: string;
  completionIds: number[];
  /** lp_old of the policy that wrote it, one per completion token. */
  behaviorLogprobs: number[];
  policyVersion: number;
  step: number;
  terms: Record<string, number>;
}

/** Thrown when a rollout's behaviour log-probs are missing or do not match its tokens (§5). */
export class MissingBehaviorLogprobsError extends Error {
  override name = "MissingBehaviorLogprobsError";
}

/** Knobs of the buffer (spec §6 defaults). */
export interface ReplayOptions {
  /** Share ρ of a step's questions that are replay questions once started (0.5). */
  ratio: number;
  /** Replay starts after an on-policy step's pass rate exceeds this (0.35). */
  startPassRate: number;
  /** Newest correct rollouts kept per question (4). */
  maxPerQuestion: number;
  /** σ of the Gaussian question weighting (1). */
  sigma: number;
}

/** Spec §6 defaults. */
export const REPLAY_DEFAULTS: ReplayOptions = { ratio: 0.5, startPassRate: 0.35, maxPerQuestion: 4, sigma: 1 };

/** Difficulty bucket of a question by its latest accuracy (§6.3). */
export function bucketOf(acc: number): "hard" | "medium" | "easy" {
  return acc <= 0.25 ? "hard" : acc <= 0.75 ? "medium" : "easy";
}

interface Entry {
  acc: number;
  rollouts: ReplayRollout[];
}

/** Serializable buffer state, for checkpoints. */
export interface ReplayState {
  started: boolean;
  entries: [string, Entry][];
  retired: string[];
}

/** The per-question replay buffer. */
export class ReplayBuffer {
  readonly options: ReplayOptions;
  private entries = new Map<string, Entry>();
  private retired = new Set<string>();
  private started = false;

  constructor(options: Partial<ReplayOptions> = {}) {
    this.options = { ...REPLAY_DEFAULTS, ...options };
  }

  /**
   * Records one on-policy group of question `q` (§6.1–6.2): acc = correct/K; correct rollouts are appended (newest
   * `maxPerQuestion` kept); acc = 1 retires the question. Throws if a correct rollout lacks behaviour log-probs.
   */
  collect(q: string, group: readonly { rollout: ReplayRollout; correct: boolean }[]): void {
    if (this.retired.has(q) || group.length === 0) return;
    const acc = group.filter((g) => g.correct).length / group.length;
    if (acc === 1) {
      this.entries.delete(q);
      this.retired.add(q);
      return;
    }
    const entry = this.entries.get(q) ?? { acc, rollouts: [] };
    entry.acc = acc;
    for (const { rollout, correct } of group) {
      if (!correct) continue;
      if (rollout.behaviorLogprobs?.length !== rollout.completionIds.length) {
        const b = rollout.behaviorLogprobs;
        const why = b ? `have length ${b.length}, tokens ${rollout.completionIds.length}` : "are missing";
        throw new MissingBehaviorLogprobsError(
          `rollout ${rollout.id} (policy version ${rollout.policyVersion}): behaviour log-probs ${why}`,
        );
      }
      entry.rollouts.push(rollout);
    }
    entry.rollouts = entry.rollouts.slice(-this.options.maxPerQuestion);
    if (entry.rollouts.length > 0) this.entries.set(q, entry);
    else this.entries.delete(q);
  }

  /** After each on-policy step, with its pass rate: replay starts above `startPassRate`, then stays on (§6.10). */
  observePassRate(passRate: number): void {
    if (passRate > this.options.startPassRate) this.started = true;
  }

  /** Whether replay has started. */
  get isStarted(): boolean {
    return this.started;
  }

  /** Whether `q` is retired (never replayed). */
  isRetired(q: string): boolean {
    return this.retired.has(q);
  }

  /**
   * Picks up to ⌊ρ·Q⌋ replay questions (Gaussian weight exp(−(acc − 0.5)²/(2σ²)), without replacement) and, for each,
   * the stored rollout with the lowest mean token entropy under the current policy (`entropyOf`; ties: newest).
   * Returns [] before the start or when the buffer is empty; the rest of the step is fresh (§6.4–6.6).
   */
  select(
    questionsPerStep: number,
    rng: Rng,
    entropyOf: (r: ReplayRollout) => number,
  ): { question: string; rollout: ReplayRollout }[] {
    if (!this.started) return [];
    const want = Math.floor(this.options.ratio * questionsPerStep);
    const pool = [...this.entries.entries()].filter(([, e]) => e.rollouts.length > 0);
    const out: { question: string; rollout: ReplayRollout }[] = [];
    const s2 = 2 * this.options.sigma * this.options.sigma;
    while (out.length < want && pool.length > 0) {
      const weights = pool.map(([, e]) => Math.exp(-((e.acc - 0.5) ** 2) / s2));
      let u = rng.random() * weights.reduce((a, b) => a + b, 0);
      let k = 0;
      while (k < pool.length - 1 && u >= weights[k]!) u -= weights[k++]!;
      const [question, entry] = pool.splice(k, 1)[0]!;
      let best = entry.rollouts[entry.rollouts.length - 1]!;
      let bestH = entropyOf(best);
      for (let i = entry.rollouts.length - 2; i >= 0; i--) {
        const h = entropyOf(entry.rollouts[i]!);
        if (h < bestH) [best, bestH] = [entry.rollouts[i]!, h];
      }
      out.push({ question, rollout: best });
    }
    return out;
  }

  /** replay/* metrics of §6. */
  metrics(): Record<string, number> {
    const buckets = { hard: 0, medium: 0, easy: 0 };
    for (const e of this.entries.values()) buckets[bucketOf(e.acc)]++;
    return {
      "replay/started": this.started ? 1 : 0,
      "replay/bufferQuestions": this.entries.size,
      "replay/retired": this.retired.size,
      "replay/bucketHard": buckets.hard,
      "replay/bucketMedium": buckets.medium,
      "replay/bucketEasy": buckets.easy,
    };
  }

  /** Serializable state (for checkpoints). */
  state(): ReplayState {
    const copy = ([q, e]: [string, Entry]): [string, Entry] => [q, { acc: e.acc, rollouts: [...e.rollouts] }];
    const entries = [...this.entries.entries()].map(copy);
    return { started: this.started, entries, retired: [...this.retired] };
  }

  /** Restores a buffer from `state()`. */
  static fromState(state: ReplayState, options: Partial<ReplayOptions> = {}): ReplayBuffer {
    const b = new ReplayBuffer(options);
    b.started = state.started;
    b.entries = new Map(state.entries.map(([q, e]) => [q, { acc: e.acc, rollouts: [...e.rollouts] }]));
    b.retired = new Set(state.retired);
    return b;
  }
}
