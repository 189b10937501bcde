/**
 * The policy losses of a masked-diffusion LM (algorithms spec §7), built once from `algorithm.diffusion`, and the
 * config rules that tie them to the model's kind. Both losses read the d1 one-pass estimate lp(i,t)
 * (./masked-estimator.ts):
 *
 * - `wd1` (arXiv 2507.08838): ratio-free, L = (1/Q) Σ_g −Σ_i (w⁺_i − w⁻_i)·ℓ_i (./wd1.ts); Q is the optimizer batch's
 *   groups. No reference, no old log-probs.
 * - `diffuGrpo` (d1, arXiv 2504.12216 §3.2; dllm-reasoning/d1 `diffu_grpo_trainer.py`): the estimate inside the
 *   existing clipped-ratio GRPO loss with KL to a reference (`policyLoss`, ./policy-loss.ts, with the recipe's
 *   `policy`, `kl` and `loss` sections), the ratio taken between the current and the pre-update estimate under the
 *   same mask seed. d1's released config: PPO ε 0.5, β 0.04 (k3), token mean, μ 12, G 6.
 *
 * Config errors: either loss with an autoregressive model (it has exact log-probs; the estimator is for diffusion
 * LMs); a diffusion model without one of them (GRPO's ratio needs log-probs a diffusion LM does not have); wd1 with a
 * clip or a reference (it has neither); and pieces the diffusion step does not implement (entropy bonus, KL in the
 * reward, partial KL).
 */
import { ConfigError, type Rng } from "../util/index.js";
import { klPlan, lossOptionsOf } from "./build.js";
import { maskSeeds } from "./masked-estimator.js";
import { policyLoss } from "./policy-loss.js";
import type { AlgorithmConfig } from "./schema.js";
import { wd1Loss } from "./wd1.js";

/** A model's kind as the algorithm sees it. */
export type PolicyKind = "autoregressive" | "diffusion";

/** One group of completions for a diffusion loss: per-token estimates, masks, and the advantages. */
export interface DiffusionGroupInput {
  /** lp_θ(i,t) from the estimator, one row per completion. */
  logp: readonly (readonly number[])[];
  /** m(i,t): 1 up to and including the first eos. */
  mask: readonly (readonly number[])[];
  /** A_i. */
  advantages: readonly number[];
  /** diffuGrpo: the pre-update estimate under the same mask seed (μ > 1); default lp_θ itself (ratio 1). */
  oldLogp?: readonly (readonly number[])[];
  /** diffuGrpo with β > 0: the reference's estimate under the same mask seed. */
  refLogp?: readonly (readonly number[])[];
}

/** The loss of some groups, with dL/dlp(i,t) per group, completion and token. */
export interface DiffusionLossResult {
  loss: number;
  grad: number[][][];
  metrics: Record<string, number>;
}

/** What the diffusion training step calls. */
export interface DiffusionLoss {
  readonly type: "wd1" | "diffuGrpo";
  readonly pMaskPrompt: number;
  /** Trajectory passes per estimate (masked-estimator.ts); null for the one-shot estimate. */
  readonly trajectoryPasses: number | null;
  /** A reference model's estimate is needed (diffuGrpo with β > 0). */
  readonly reference: boolean;
  /** Pre-update estimates are needed for the ratio (diffuGrpo with μ > 1). */
  oldLogprobs(iterations: number): boolean;
  /** The mask seed of each inner iteration (§7). */
  maskSeeds(rng: Rng, iterations: number, runSeed: number): number[];
  /** Loss and gradient of `groups`, normalised over the optimizer batch (`batch`: its groups, sequences, tokens). */
  loss(
    groups: readonly DiffusionGroupInput[],
    beta: number,
    batch: { groups: number; sequences: number; tokens: number },
  ): DiffusionLossResult;
}

/** Throws a ConfigError naming the field when the algorithm does not fit the model's kind (see the file comment). */
export function checkDiffusionAlgorithm(a: AlgorithmConfig, kind: PolicyKind): void {
  const type = a.diffusion.type;
  if (type !== "none" && kind === "autoregressive") {
    throw new ConfigError(
      `algorithm.diffusion.type "${type}" needs a masked-diffusion model, but the model is autoregressive; ` +
        'use a diffusion model (model.type "checkpoint" of a DiffusionLM) or set algorithm.diffusion.type "none"',
    );
  }
  if (kind === "autoregressive") return;
  if (type === "none") {
    throw new ConfigError(
      "the model is a masked-diffusion LM, which has no exact token log-probs for GRPO's ratio; " +
        'set algorithm.diffusion.type to "wd1" or "diffuGrpo" (both use the d1 one-pass estimator, spec §7)',
    );
  }
  const bad = (field: string, msg: string) => new ConfigError(`algorithm.${field}: ${msg} with diffusion.type ${type}`);
  if (a.loss.entropyCoef > 0) throw bad("loss.entropyCoef", "the entropy bonus is not implemented");
  if (a.kl.sections !== null) throw bad("kl.sections", "partial KL is not implemented");
  if (type === "wd1") {
    if (klPlan(a).reference) throw bad("kl.beta", "wd1 has no reference model (§7); set kl.beta 0");
    if (a.policy.clip.type !== "none") throw bad("policy.clip", 'wd1 has no ratio to clip (§7); set clip "none"');
  } else if (klPlan(a).inReward) throw bad("kl.placement", "KL in the reward is not implemented; use placement loss");
}

/** Builds the diffusion loss of `a` (whose `diffusion.type` is wd1 or diffuGrpo). */
export function buildDiffusionLoss(a: AlgorithmConfig, ctx: { maxCompletionTokens: number }): DiffusionLoss {
  const d = a.diffusion;
  if (d.type === "none") throw new ConfigError("buildDiffusionLoss: algorithm.diffusion.type is none");
  const psi = d.type === "wd1" ? d.psi : 1;
  const wd1 = d.type === "wd1";
  return {
    type: d.type,
    pMaskPrompt: d.pMaskPrompt,
    trajectoryPasses: d.estimator === "trajectory" ? d.chunks : null,
    reference: !wd1 && klPlan(a).reference,
    oldLogprobs: (iterations) => !wd1 && iterations > 1,
    maskSeeds: (rng, iterations, runSeed) => maskSeeds(rng, iterations, d.randomMasking, runSeed),
    loss(groups, beta, batch) {
      if (wd1) {
        const ell = groups.map((g) => g.logp.map((row, i) => row.reduce((s, lp, t) => s + g.mask[i]![t]! * lp, 0)));
        const r = wd1Loss(
          groups.map((g, k) => ({ ell: ell[k]!, advantages: g.advantages })),
          { psi, groupsInBatch: batch.groups },
        );
        const grad = groups.map((g, k) => g.mask.map((row, i) => row.map((m) => m * r.dEll[k]![i]!)));
        return { loss: r.loss, grad, metrics: r.metrics };
      }
      const flat = <T>(f: (g: DiffusionGroupInput) => readonly T[]) => groups.flatMap((g) => [...f(g)]);
      const withRef = klPlan(a).reference;
      const out = policyLoss(
        {
          logp: flat((g) => g.logp),
          oldLogp: flat((g) => g.oldLogp ?? g.logp),
          ...(withRef ? { refLogp: flat((g) => g.refLogp!) } : {}),
          mask: flat((g) => g.mask),
          advantages: flat((g) => g.advantages),
        },
        { ...lossOptionsOf(a, ctx.maxCompletionTokens, beta), normalizer: batch },
      );
      let at = 0;
      const grad = groups.map((g) => g.logp.map(() => out.grad[at++]!));
      return { loss: out.loss, grad, metrics: out.metrics };
    },
  };
}
