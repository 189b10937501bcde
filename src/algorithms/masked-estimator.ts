/**
 * The d1 one-pass likelihood estimate for a masked-diffusion LM (algorithms spec §7; d1, arXiv 2504.12216 §3.1;
 * wd1, arXiv 2507.08838 §3.2), as the numbers around the forward pass: this file builds the noised input
 * x̃ = (q̃, [M]^{L_gen}) and reduces the forward's per-token log-probs to ℓ_i; the forward itself runs in the trainer
 * (src/trainer/diffusion-step.ts), since this layer holds no model.
 *
 * - q̃: each prompt token replaced by the mask id with probability `pMaskPrompt` (0.15, wd1's and d1's released
 *   configs); the completion region is L_gen mask tokens, whatever the completion's length (d1 masks the whole
 *   generated region, eos padding included).
 * - lp(i,t) = log_softmax(f_θ(x̃)_t)[o_{i,t}] at completion position t; ℓ_i = Σ_t m(i,t)·lp(i,t), a sum, with m = 1 on
 *   tokens up to and including the first eos.
 * - Mask seed: one per inner iteration, drawn from the run's RNG, shared by every sequence of the iteration
 *   (`randomMasking: true`); `false` uses the run seed for every iteration (d1's fixed seed 42).
 *
 * - Trajectory estimate (`estimator: "trajectory"`, our option; not in d1 or wd1): the one-shot pass scores every
 *   answer token with the whole answer masked, a context the sampler never decodes in after its first step. The
 *   trajectory estimate replays the sampler's own unmasking order (the rollout's `unmasking` trace) in K passes: the
 *   steps are cut into K equal runs, and pass k shows every position unmasked before its run (with the token the
 *   sampler chose there), masks the rest, and scores the completion tokens unmasked within its run. Each completion
 *   token is scored once, so ℓ_i is still a sum of one lp per token; K = 1 is the one-shot estimate exactly, and K =
 *   steps scores every token in the context it was decoded in, i.e. the log-likelihood of the trajectory's token
 *   choices (the order itself is not scored). Costs K forward passes per estimate.
 *
 * Departure: d1 seeds one torch draw for the whole batch, so a row's mask depends on its place in the batch; here a
 * row's stream is split from the iteration seed by the rollout's id, so the mask (and the loss) does not depend on how
 * rollouts are cut into micro-batches (§3.1). Prompts of different lengths are left-padded (pad ids, attention 0).
 */
import { Rng } from "../util/index.js";

/** One completion as the estimator sees it. */
export interface EstimatorRow {
  /** Stable id of the rollout (its mask stream). */
  id: string;
  promptIds: readonly number[];
  /** Completion ids (up to the first eos, or all L_gen when none). */
  completionIds: readonly number[];
  /** The sampler's decoding of the answer region; needed by the trajectory estimate. */
  unmasking?: {
    readonly generated: readonly number[];
    readonly unmaskedAt: readonly number[];
    readonly steps: number;
  };
}

/** Which of K trajectory passes a batch is: pass `index` of `of` (see the file comment). */
export interface TrajectoryPass {
  index: number;
  of: number;
}

/** The steps [lo, hi) of pass k of K over `steps` steps: K nearly equal runs, the later ones one longer. */
export function passSteps(steps: number, pass: TrajectoryPass): [number, number] {
  return [Math.floor((pass.index * steps) / pass.of), Math.floor(((pass.index + 1) * steps) / pass.of)];
}

/** The noised batch x̃ of one inner iteration. */
export interface EstimatorBatch {
  /** (B*T) ids: left-padded prompt with some tokens masked, then L_gen mask ids. */
  ids: Int32Array;
  /** (B*T) attention mask, 0 on left padding. */
  attn: Float32Array;
  B: number;
  /** P + L_gen, P the longest prompt. */
  T: number;
  /** Column of the first completion position (P). */
  start: number;
  /** (B*T) clean targets at completion positions t < |o_i|, -100 elsewhere (for tokenLogprobs). */
  targets: Int32Array;
}

/** The inner iterations' mask seeds (§7): fresh draws from `rng`, or the run seed every time. */
export function maskSeeds(rng: Rng, iterations: number, randomMasking: boolean, runSeed: number): number[] {
  return Array.from({ length: iterations }, () => (randomMasking ? rng.nextU32() : runSeed));
}

/** m(t): 1 on tokens up to and including the first eos, 0 after it. */
export function completionMask(completionIds: readonly number[], eosId: number): number[] {
  const eos = completionIds.indexOf(eosId);
  return completionIds.map((_, t) => (eos < 0 || t <= eos ? 1 : 0));
}

/**
 * Builds x̃ for `rows` with mask seed `seed` (see the file comment): the one-shot batch, or with `pass` the batch of
 * one trajectory pass (the prompt masked the same way in every pass of a seed).
 */
export function estimatorBatch(
  rows: readonly EstimatorRow[],
  o: { genLength: number; maskId: number; padId: number; pMaskPrompt: number; seed: number; pass?: TrajectoryPass },
): EstimatorBatch {
  if (!(o.pMaskPrompt >= 0 && o.pMaskPrompt < 1))
    throw new RangeError(`estimatorBatch: pMaskPrompt ${o.pMaskPrompt} must be in [0, 1)`);
  const B = rows.length;
  const P = Math.max(...rows.map((r) => r.promptIds.length));
  const T = P + o.genLength;
  const ids = new Int32Array(B * T).fill(o.maskId);
  const attn = new Float32Array(B * T).fill(1);
  const targets = new Int32Array(B * T).fill(-100);
  const iter = new Rng(o.seed);
  rows.forEach((r, b) => {
    if (r.completionIds.length > o.genLength)
      throw new RangeError(`estimatorBatch: completion ${r.id} has ${r.completionIds.length} > genLength tokens`);
    const rng = iter.split(r.id);
    const pad = P - r.promptIds.length;
    for (let j = 0; j < pad; j++) {
      ids[b * T + j] = o.padId;
      attn[b * T + j] = 0;
    }
    r.promptIds.forEach((id, j) => (ids[b * T + pad + j] = rng.random() < o.pMaskPrompt ? o.maskId : id));
    if (!o.pass) {
      r.completionIds.forEach((id, t) => (targets[b * T + P + t] = id));
      return;
    }
    const u = r.unmasking;
    if (!u || u.generated.length !== o.genLength || u.unmaskedAt.length !== o.genLength)
      throw new RangeError(
        `estimatorBatch: the trajectory estimate needs rollout ${r.id}'s unmasking trace over genLength ${o.genLength} ` +
          "positions (rollouts of the masked-diffusion sampler carry one)",
      );
    const [lo, hi] = passSteps(u.steps, o.pass);
    for (let t = 0; t < o.genLength; t++) {
      const at = u.unmaskedAt[t]!;
      if (at < lo) ids[b * T + P + t] = u.generated[t]!;
      else if (at < hi && t < r.completionIds.length) targets[b * T + P + t] = r.completionIds[t]!;
    }
  });
  return { ids, attn, B, T, start: P, targets };
}

/** Per-completion rows of per-token log-probs read from a (B, T) grid at the completion positions. */
export function completionRows(grid: ArrayLike<number>, batch: EstimatorBatch, lengths: readonly number[]): number[][] {
  return lengths.map((L, b) => Array.from({ length: L }, (_, t) => grid[b * batch.T + batch.start + t]!));
}

/** ℓ_i = Σ_t m(i,t)·lp(i,t) for every row. */
export function sequenceLogLik(logp: readonly (readonly number[])[], mask: readonly (readonly number[])[]): number[] {
  return logp.map((row, i) => row.reduce((s, lp, t) => s + mask[i]![t]! * lp, 0));
}
