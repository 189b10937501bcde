/**
 * The shuffled-reward control of an effect benchmark: the same run as the RL arm, except that inside each group
 * the verifier's outputs are permuted among the group's completions.
 *
 * Shuffling within a group (not across the step) keeps each group's multiset of rewards, so the control sees
 * exactly the RL arm's mix of all-right, all-wrong and mixed groups, and the same advantage magnitudes; only the
 * link between what a completion says and what it earns is cut. (A step-wide shuffle turns uniform groups into
 * mixed ones, so the control takes full-size random updates on every group and collapses, which makes any
 * "no gain" gate pass trivially.) Everything the verifier reports about a completion travels with its reward:
 * the score, the terms and the first-error position used by `loss.afterFirstError`, so error credit keeps
 * working in the control but localises an error that is not the completion's own.
 */
import { Rng } from "../../src/util/index.js";
import type { RolloutGroup } from "../../src/rollout/types.js";

/** The verifier's outputs of one rollout, as moved by the shuffle. */
interface VerifierOutput {
  reward: RolloutGroup["rollouts"][number]["reward"];
  terms: RolloutGroup["rollouts"][number]["terms"];
  firstErrorEnd: RolloutGroup["rollouts"][number]["firstErrorEnd"];
}

/** Permutes, in place, rewards, terms and first-error positions among the completions of each group. */
export function shuffleWithinGroups(groups: RolloutGroup[], rng: Rng): void {
  groups.forEach((g, gi) => {
    const outputs: VerifierOutput[] = g.rollouts.map((r) => ({
      reward: r.reward,
      terms: { ...r.terms },
      firstErrorEnd: r.firstErrorEnd,
    }));
    const perm = rng.split(gi).shuffle(outputs.map((_, i) => i));
    g.rollouts.forEach((r, i) => {
      const o = outputs[perm[i]!]!;
      r.reward = o.reward;
      r.terms = o.terms;
      if (o.firstErrorEnd === undefined) delete r.firstErrorEnd;
      else r.firstErrorEnd = o.firstErrorEnd;
    });
  });
}

/** The control's hook for `train(config, { transformGroups })`: a fresh, seeded permutation per step. */
export function withinGroupControl(seed: number): (groups: RolloutGroup[], step: number) => void {
  const base = new Rng(seed).split("control");
  return (groups, step) => shuffleWithinGroups(groups, base.split(step));
}
