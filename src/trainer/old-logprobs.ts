/**
 * Where a step's old log-probs come from (algorithms spec §5, `algorithm.offPolicy`), and the train/inference
 * correction w_IS. `sampler`: lp_old is what the sampler recorded (exact for the built-in sampler; a remote server's
 * numbers otherwise, the mismatch then sitting inside the clipped ratio). `recompute` (the default for a remote
 * sampler): one forward pass without a graph, before any update, gives lp_old under the trainer's weights; the
 * sampler's numbers are kept as lp_inf, and `correctionWeights` turns δ = lp_old − lp_inf into w_IS, which multiplies
 * the policy-gradient term of the loss (`UpdateArgs.isWeights`).
 *
 * A remote completion whose inference log-probs could not be aligned with its tokens (re-tokenised text) is always
 * recomputed, and gets w_IS = 1 in `recompute` mode: there is nothing to correct it against.
 */
import { noGrad, tidy } from "../engine/index.js";
import type { Transformer } from "../models/transformer.js";
import { correctionWeights, resolveOldLogprobs, type OffPolicyConfig } from "../algorithms/off-policy.js";
import type { Rollout } from "../rollout/types.js";
import { chunks, gridLogprobs, packRollouts } from "./batch.js";

/** The old log-probs of one step's rollouts. */
export class OldLogprobs {
  readonly mode: "sampler" | "recompute";
  /** lp_inf of each recomputed rollout (null: the sampler gave none that align). */
  private readonly inference = new Map<Rollout, number[] | null>();
  /** Seconds spent in recompute forwards. */
  seconds = 0;

  constructor(
    private readonly model: Transformer,
    private readonly offPolicy: OffPolicyConfig,
    remote: boolean,
    private readonly run: { padId: number; microBatchSize: number; temperature: number },
  ) {
    this.mode = resolveOldLogprobs(offPolicy, remote);
  }

  /** Recomputes lp_old where the mode (or a missing lp_inf, listed in `noLogprobs`) asks; call before any update. */
  prepare(rollouts: readonly Rollout[], noLogprobs?: ReadonlySet<Rollout>): void {
    const todo = rollouts.filter((r) => this.mode === "recompute" || noLogprobs?.has(r));
    if (todo.length === 0) return;
    const t0 = performance.now();
    const { padId, microBatchSize, temperature } = this.run;
    noGrad(() => {
      for (const mb of chunks(todo, microBatchSize)) {
        // The log-probs are copied out as numbers, so every tensor of the pass goes back to the pool (tidy).
        tidy(() => {
          const p = packRollouts(mb, padId);
          const { logp } = gridLogprobs(this.model, p, temperature); // logp: (B, T)
          mb.forEach((r, b) => {
            const fresh = r.completionIds.map((_, j) => logp.data[b * p.T + p.starts[b]! + j]!);
            if (this.mode === "recompute") this.inference.set(r, noLogprobs?.has(r) ? null : r.samplerLogprobs);
            r.samplerLogprobs = fresh;
          });
        });
      }
    });
    this.seconds += (performance.now() - t0) / 1000;
  }

  /** w_IS per trained rollout and the `mismatch/*` metrics; nothing in `sampler` mode (w_IS = 1). */
  correction(rollouts: readonly Rollout[]): { weights?: Map<Rollout, number[]>; metrics: Record<string, number> } {
    if (this.mode !== "recompute" || rollouts.length === 0) return { metrics: {} };
    const c = correctionWeights(
      rollouts.map((r) => r.samplerLogprobs),
      rollouts.map((r) => this.inference.get(r) ?? null),
      rollouts.map((r) => r.lossMask),
      this.offPolicy,
    );
    return { weights: new Map(rollouts.map((r, i) => [r, c.weights[i]!])), metrics: c.metrics };
  }
}
