/**
 * ExGRPO's experience replay in the training loop (algorithms spec §6; arXiv 2510.02245 §4): the trainer's adapter
 * between rollout records and the replay buffer (src/algorithms/replay-buffer.ts). Per step, in loop order:
 *
 * 1. `select` (step start, once replay has started): ⌊ρ·Q⌋ questions from the buffer and, for each, the stored
 *    correct answer with the lowest mean token entropy under the current policy (one no-grad forward per stored
 *    candidate, §6.5). The loop samples G − 1 fresh completions for each of these questions and Q − ⌊ρ·Q⌋ fresh
 *    prompts of G from the data.
 * 2. `collect` (after scoring): every fresh rollout of the step is read as correct when the task's correctness term
 *    is 1; correct ones are stored with their sampler log-probs as behaviour log-probs, and a question whose fresh
 *    rollouts are all correct is retired (§6.1–6.2). Replayed rollouts are never stored again.
 * 3. `attach`: each picked answer joins its question's G − 1 fresh rollouts as one mixed group of G (eq. 4), with
 *    its stored reward and terms and `samplerLogprobs` = its behaviour log-probs, so the loss's ratio is
 *    exp(lp_θ − lp_b) and the shaped f(w) applies (`replayAwareLoss`, keyed by the `replayed` set).
 * 4. `endStep`: the delayed start reads the step's fresh pass rate (> `startPassRate` turns replay on from the next
 *    step, §6.10); returns the step's `replay/*` metrics.
 *
 * Departures: the replayed answer is not re-scored (its reward is the one it earned when sampled, as in the paper);
 * the question's accuracy counts only its fresh rollouts (G − 1 of them in a mixed group); the buffer's state is
 * saved in each checkpoint (`TrainerState.replay`), so a resumed run replays what an uninterrupted one would.
 */
import { noGrad, tidy } from "../engine/index.js";
import type { Transformer } from "../models/transformer.js";
import type { Rng } from "../util/index.js";
import { ReplayBuffer, type ReplayRollout, type ReplayState, type AlgorithmConfig } from "../algorithms/index.js";
import type { Rollout, RolloutGroup } from "../rollout/types.js";
import { entropyGrid, gridLogprobs, packRollouts } from "./batch.js";

/** The `exgrpo` member of `algorithm.replay`. */
export type ExgrpoReplayConfig = Extract<AlgorithmConfig["replay"], { type: "exgrpo" }>;

/** What the trainer stores of a correct rollout: the buffer's fields plus what a replayed row needs. */
export interface StoredRollout extends ReplayRollout {
  task: string;
  exampleId: string;
  promptIds: number[];
  lossMask: number[];
  text: string;
  finishReason: Rollout["finishReason"];
  reward: number;
  segments?: Rollout["segments"];
}

/** A rollout as stored: its sampler log-probs become the behaviour log-probs (§5). */
export function storedOf(r: Rollout, step: number): StoredRollout {
  return {
    id: r.id,
    task: r.task,
    exampleId: r.exampleId,
    promptIds: r.promptIds,
    completionIds: r.completionIds,
    behaviorLogprobs: r.samplerLogprobs,
    lossMask: r.lossMask,
    text: r.text,
    finishReason: r.finishReason,
    reward: r.reward ?? 0,
    terms: { ...r.terms },
    policyVersion: r.policyVersion,
    step,
    ...(r.segments ? { segments: r.segments } : {}),
  };
}

/** A stored answer as a row of group `groupId`: its behaviour log-probs are its old log-probs. */
export function replayedRollout(s: StoredRollout, groupId: string, index: number): Rollout {
  return {
    id: `${groupId}/${index}`,
    task: s.task,
    exampleId: s.exampleId,
    groupId,
    promptIds: s.promptIds,
    completionIds: s.completionIds,
    samplerLogprobs: s.behaviorLogprobs,
    lossMask: [...s.lossMask],
    text: s.text,
    ...(s.segments ? { segments: s.segments } : {}),
    finishReason: s.finishReason,
    reward: s.reward,
    terms: { ...s.terms },
    advantage: 0,
    policyVersion: s.policyVersion,
  };
}

/** Mean entropy of softmax(logits / T) over a stored answer's trained tokens under `model` (no graph). */
export function meanTokenEntropy(model: Transformer, s: StoredRollout, padId: number, temperature: number): number {
  return noGrad(() =>
    tidy(() => {
      const p = packRollouts([replayedRollout(s, "entropy", 0)], padId);
      const { logits } = gridLogprobs(model, p, temperature); // logits: (1, T, V)
      const ent = entropyGrid(logits, p.mask, temperature);
      let sum = 0;
      let n = 0;
      p.mask.forEach((m, k) => {
        sum += m * ent[k]!;
        n += m;
      });
      return n > 0 ? sum / n : 0;
    }),
  );
}

/** The loop's replay state across steps (see the file comment). */
export class LoopReplay {
  readonly buffer: ReplayBuffer<StoredRollout>;
  /** Rows of the current step that replay a stored answer (the loss shapes exactly these). */
  readonly replayed = new Set<Rollout>();
  private picks: { question: string; rollout: StoredRollout }[] = [];
  private fresh = { correct: 0, total: 0 };
  private selectSeconds = 0;

  constructor(
    readonly config: ExgrpoReplayConfig,
    readonly correctTerm: string,
    saved?: ReplayState<StoredRollout>,
  ) {
    const { ratio, startPassRate, maxPerQuestion, sigma } = config;
    const options = { ratio, startPassRate, maxPerQuestion, sigma };
    this.buffer = saved ? ReplayBuffer.fromState(saved, options) : new ReplayBuffer<StoredRollout>(options);
  }

  /** Step start: this step's replay questions (example ids), each with its lowest-entropy stored answer. */
  select(model: Transformer, padId: number, temperature: number, questionsPerStep: number, rng: Rng): string[] {
    const t0 = performance.now();
    this.replayed.clear();
    this.fresh = { correct: 0, total: 0 };
    this.picks = this.buffer.select(questionsPerStep, rng, (r) => meanTokenEntropy(model, r, padId, temperature));
    this.selectSeconds = (performance.now() - t0) / 1000;
    return this.picks.map((p) => p.question);
  }

  /** After scoring: stores the fresh rollouts' correct answers per question and counts the step's pass rate. */
  collect(groups: readonly RolloutGroup[], step: number): void {
    for (const g of groups) {
      const fresh = g.rollouts.filter((r) => !this.replayed.has(r));
      const marked = fresh.map((r) => ({ rollout: storedOf(r, step), correct: r.terms[this.correctTerm] === 1 }));
      this.fresh.correct += marked.filter((x) => x.correct).length;
      this.fresh.total += marked.length;
      this.buffer.collect(g.exampleId, marked);
    }
  }

  /**
   * Appends each picked answer to its question's group (`groups[i]` holds the G − 1 fresh rows of pick i); a later
   * generation batch of the same step (zero-std `resample`) has no replay groups and passes none.
   */
  attach(groups: readonly RolloutGroup[]): void {
    if (groups.length === 0) return;
    if (groups.length !== this.picks.length)
      throw new Error(`replay: ${groups.length} replay groups for ${this.picks.length} picked questions`);
    groups.forEach((g, i) => {
      const r = replayedRollout(this.picks[i]!.rollout, g.id, g.rollouts.length);
      g.rollouts.push(r);
      this.replayed.add(r);
    });
  }

  /** Groups with the replayed rows left out (reward metrics describe what the policy sampled this step). */
  freshOnly(groups: readonly RolloutGroup[]): RolloutGroup[] {
    return groups.map((g) => ({ ...g, rollouts: g.rollouts.filter((r) => !this.replayed.has(r)) }));
  }

  /** Step end: the delayed start reads the fresh pass rate; returns the `replay/*` and `time/replaySelect` metrics. */
  endStep(step: number, questionsPerStep: number): Record<string, number> {
    const passRate = this.fresh.total > 0 ? this.fresh.correct / this.fresh.total : 0;
    this.buffer.observePassRate(passRate, step);
    const lags = [...this.replayed].map((r) => step - 1 - r.policyVersion);
    return {
      ...this.buffer.metrics(),
      "replay/passRate": passRate,
      "replay/frac": this.picks.length / Math.max(1, questionsPerStep),
      ...(lags.length ? { "replay/versionLagMean": lags.reduce((a, b) => a + b, 0) / lags.length } : {}),
      "time/replaySelect": this.selectSeconds,
    };
  }

  /** The buffer's state, for the checkpoint. */
  state(): ReplayState<StoredRollout> {
    return this.buffer.state();
  }
}
