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
 * which would make the ratio 1 and silently remove the off-policy correction; a saved state whose rollouts lack them
 * fails to load (`fromState`), naming the question and rollout.
 *
 * The buffer is generic over what a stored rollout carries besides the fields below (the trainer keeps prompt ids,
 * loss mask and reward, src/trainer/replay.ts); its defaults are the `exgrpo` member of `ReplaySchema` (schema.ts).
 */
import type { Rng } from "../util/rng.js";
import { ReplaySchema } from "./schema.js";

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

/** Spec §6 defaults, read from the recipe schema (`algorithm.replay: {type: exgrpo}`). */
export const REPLAY_DEFAULTS: ReplayOptions = (() => {
  const d = ReplaySchema.parse({ type: "exgrpo" }) as ReplayOptions & { type: string };
  return { ratio: d.ratio, startPassRate: d.startPassRate, maxPerQuestion: d.maxPerQuestion, sigma: d.sigma };
})();

/** Difficulty bucket of a question by its latest accuracy (§6.3). */
export function bucketOf(acc: number): "hard" | "medium" | "easy" {
  return acc <= 0.25 ? "hard" : acc <= 0.75 ? "medium" : "easy";
}

interface Entry<R extends ReplayRollout = ReplayRollout> {
  acc: number;
  rollouts: R[];
}

/** Serializable buffer state, for checkpoints. */
export interface ReplayState<R extends ReplayRollout = ReplayRollout> {
  started: boolean;
  /** The step after which replay started (its pass rate crossed the threshold); absent before the start. */
  startStep?: number;
  entries: [string, Entry<R>][];
  retired: string[];
}

/** Throws unless `r` carries one behaviour log-prob per completion token (§5); `where` prefixes the message. */
export function checkBehaviorLogprobs(r: ReplayRollout, where = ""): void {
  const b = r.behaviorLogprobs as number[] | undefined;
  if (Array.isArray(b) && b.length === r.completionIds?.length && b.every(Number.isFinite)) return;
  const why = !Array.isArray(b)
    ? "are missing"
    : b.length !== r.completionIds?.length
      ? `have length ${b.length}, tokens ${r.completionIds?.length}`
      : "are not all finite numbers";
  throw new MissingBehaviorLogprobsError(
    `${where}rollout ${r.id} (policy version ${r.policyVersion}): behaviour log-probs (behaviorLogprobs) ${why}`,
  );
}

/** The per-question replay buffer. */
export class ReplayBuffer<R extends ReplayRollout = ReplayRollout> {
  readonly options: ReplayOptions;
  private entries = new Map<string, Entry<R>>();
  private retired = new Set<string>();
  private started = false;
  private startStep: number | undefined;

  constructor(options: Partial<ReplayOptions> = {}) {
    this.options = { ...REPLAY_DEFAULTS, ...options };
  }

  /**
   * Records one on-policy group of question `q` (§6.1–6.2): acc = correct/K; correct rollouts are appended (newest
   * `maxPerQuestion` kept); acc = 1 retires the question. Throws if a correct rollout lacks behaviour log-probs.
   */
  collect(q: string, group: readonly { rollout: R; correct: boolean }[]): void {
    if (this.retired.has(q) || group.length === 0) return;
    const acc = group.filter((g) => g.correct).length / group.length;
    if (acc === 1) {
      this.entries.delete(q);
      this.retired.add(q);
      return;
    }
    const entry: Entry<R> = this.entries.get(q) ?? { acc, rollouts: [] };
    entry.acc = acc;
    for (const { rollout, correct } of group) {
      if (!correct) continue;
      checkBehaviorLogprobs(rollout);
      entry.rollouts.push(rollout);
    }
    entry.rollouts = entry.rollouts.slice(-this.options.maxPerQuestion);
    if (entry.rollouts.length > 0) this.entries.set(q, entry);
    else this.entries.delete(q);
  }

  /**
   * After each on-policy step, with its pass rate: replay starts above `startPassRate`, then stays on (§6.10).
   * `step` (optional) is recorded as the start step.
   */
  observePassRate(passRate: number, step?: number): void {
    if (this.started || !(passRate > this.options.startPassRate)) return;
    this.started = true;
    this.startStep = step;
  }

  /** The step whose pass rate started replay (undefined before the start, or when no step was given). */
  get startedAfterStep(): number | undefined {
    return this.startStep;
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
  select(questionsPerStep: number, rng: Rng, entropyOf: (r: R) => number): { question: string; rollout: R }[] {
    if (!this.started) return [];
    const want = Math.floor(this.options.ratio * questionsPerStep);
    const pool = [...this.entries.entries()].filter(([, e]) => e.rollouts.length > 0);
    const out: { question: string; rollout: R }[] = [];
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
  state(): ReplayState<R> {
    const copy = ([q, e]: [string, Entry<R>]): [string, Entry<R>] => [q, { acc: e.acc, rollouts: [...e.rollouts] }];
    const entries = [...this.entries.entries()].map(copy);
    const start = this.startStep === undefined ? {} : { startStep: this.startStep };
    return { started: this.started, ...start, entries, retired: [...this.retired] };
  }

  /**
   * Restores a buffer from `state()` (e.g. a checkpoint's state.json); a stored rollout without its behaviour
   * log-probs is a `MissingBehaviorLogprobsError` naming the question and rollout: never a silent ratio of 1.
   */
  static fromState<R extends ReplayRollout>(
    state: ReplayState<R>,
    options: Partial<ReplayOptions> = {},
  ): ReplayBuffer<R> {
    const b = new ReplayBuffer<R>(options);
    b.started = state.started;
    b.startStep = state.startStep;
    state.entries.forEach(([q, e], i) =>
      e.rollouts.forEach((r, j) =>
        checkBehaviorLogprobs(r, `replay state entries[${i}] (question ${q}) rollouts[${j}]: `),
      ),
    );
    b.entries = new Map(state.entries.map(([q, e]) => [q, { acc: e.acc, rollouts: [...e.rollouts] }]));
    b.retired = new Set(state.retired);
    return b;
  }
}
