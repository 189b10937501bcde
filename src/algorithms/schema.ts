/**
 * The recipe's `algorithm` section as zod schemas: the one place each algorithm option is named, given its default
 * (docs/spec/algorithms.md §0) and described. The trainer composes `AlgorithmSchema` into its config; the pure
 * functions' `*_DEFAULTS` are read from here (`ALGORITHM_DEFAULTS`), so a default is written once.
 *
 * `offPolicy` (§5: where old log-probs come from, w_IS, staleness) is defined next to its functions in
 * `off-policy.ts` and composed here. Departure from the spec's field list: `rewardAggregate` is a field of `algorithm` (the spec's `rewards.aggregate`).
 */
import { z } from "zod";
import { OffPolicySchema } from "./off-policy.js";

const stdForm = z
  .enum(["sample", "population"])
  .default("sample")
  .describe("σ_g with Bessel's correction (sample) or without (§1.1)");
const weighting = z
  .enum(["token", "sequence"])
  .default("token")
  .describe("batch whitening weights per token or per completion (§1.3)");
const gamma = z.number().min(0).max(1).default(1).describe("discount γ of the per-token returns (§1.3)");

/** Advantage estimator (spec §1). */
export const AdvantageSchema = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("zScore"),
    std: stdForm,
    eps: z.number().nonnegative().default(1e-4).describe("ε added to σ_g outside the square root (§1.1)"),
    stdScope: z
      .enum(["group", "batch"])
      .default("group")
      .describe("σ divided out: each group's, or the whole batch's (TRL scale_rewards \"batch\")"),
  }),
  z.strictObject({ type: z.literal("meanOnly") }),
  z.strictObject({ type: z.literal("batchNorm"), weighting, gamma }),
  z.strictObject({ type: z.literal("rloo") }),
  z.strictObject({ type: z.literal("reinforcePlusPlusBaseline"), weighting, gamma }),
]);

/** Ratio clipping (spec §2.2). */
export const ClipSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("none") }),
  z.strictObject({
    type: z.literal("ppo"),
    epsLow: z.number().min(0).lt(1).default(0.2).describe("ε_low: ρ is clipped below at 1 − ε_low"),
    epsHigh: z
      .number()
      .positive()
      .default(0.2)
      .describe("ε_high: ρ is clipped above at 1 + ε_high (DAPO clip-higher: 0.28)"),
    dualClip: z
      .number()
      .nullable()
      .default(null)
      .describe("c for dual clip on A < 0 (verl uses 3); null = off; needs c > 1 + ε_high"),
  }),
]);

/** Importance ratio and clipping (spec §2.1, §2.2). */
export const PolicySchema = z.strictObject({
  ratio: z
    .enum(["token", "sequence"])
    .default("token")
    .describe("token ratio, or GSPO's sequence ratio (warns unless seqMeanTokenMean)"),
  clip: ClipSchema.prefault({ type: "none" }).describe("none (card sketch) or ppo"),
});

/** KL to a frozen reference (spec §2.3, §2.4). */
export const KlSchema = z.strictObject({
  beta: z.number().nonnegative().default(0.04).describe("β; 0 builds no reference model and logs no kl/ref metrics"),
  estimator: z.enum(["k1", "k2", "k3", "k3st"]).default("k3").describe("Schulman estimator (§2.3)"),
  placement: z
    .enum(["loss", "reward"])
    .default("loss")
    .describe("KL term in the loss, or k1 subtracted from the reward (§2.4)"),
  controller: z
    .enum(["fixed", "adaptive"])
    .default("fixed")
    .describe("adaptive: β ← β(1 + clip(KL/target − 1, ±0.2)·n/horizon)"),
  target: z.number().positive().default(0.1).describe("KL target of the adaptive controller"),
  horizon: z.number().positive().default(10000).describe("horizon H of the adaptive controller"),
  importanceWeight: z
    .boolean()
    .default(false)
    .describe("multiply the loss's KL term by the importance ratio (TRL use_bias_correction_kl)"),
  monitorOnly: z
    .boolean()
    .default(false)
    .describe("load the reference only to log KL: kl/ref is logged, nothing enters loss or reward"),
  sections: z
    .array(z.string().min(1))
    .nullable()
    .default(null)
    .describe('partial KL (SIRL): tags whose spans carry KL, e.g. ["model", "python"]; null = everywhere'),
});

/** Loss aggregation and entropy bonus (spec §3, §2.5). */
export const LossSchema = z.strictObject({
  aggregation: z
    .enum(["seqMeanTokenMean", "tokenMean", "seqMeanTokenSum", "constantNorm"])
    .default("seqMeanTokenMean")
    .describe("how token losses become one scalar (§3)"),
  entropyCoef: z.number().nonnegative().default(0).describe("α of the entropy bonus (§2.5)"),
  afterFirstError: z
    .enum(["train", "mask"])
    .default("train")
    .describe("tokens after a checker's first localised mistake (working-steps): train them, or leave them out"),
});

/** Zero-variance group policy (spec §1.7). */
export const ZeroStdSchema = z.strictObject({
  policy: z
    .enum(["keep", "drop", "resample"])
    .default("keep")
    .describe("keep (A = 0), drop, or resample until the batch is full (DAPO)"),
  maxGenBatches: z.number().int().positive().default(10).describe("resample: most generation batches per step"),
});

/** Unscorable (null) rewards (spec §1.6). */
export const NullsSchema = z.strictObject({
  onNull: z
    .enum(["exclude", "error"])
    .default("exclude")
    .describe("exclude a null completion from the step, or stop at the first one"),
  maxNullFrac: z
    .number()
    .min(0)
    .max(1)
    .default(0.5)
    .describe("stop with an error when more of a step's completions are null"),
});

/** DAPO soft overlong punishment (spec §8.4), added as a reward term named "overlong" with weight 1. */
export const OverlongSchema = z.strictObject({
  enabled: z
    .boolean()
    .default(false)
    .describe("add the overlong term: 0 up to L_max − L_c, then linear down to −1 at L_max"),
  bufferFrac: z.number().gt(0).lte(1).default(0.2).describe("L_c as a fraction of L_max (DAPO: 4096 of 20480)"),
});

const pMaskPrompt = z
  .number()
  .min(0)
  .lt(1)
  .default(0.15)
  .describe("d1 estimator: chance that each prompt token is masked (§7; wd1 and d1 configs 0.15)");
const randomMasking = z
  .boolean()
  .default(true)
  .describe("d1 estimator: a fresh mask seed per inner iteration (true), or the run seed every time (§7)");

const estimator = z
  .enum(["oneShot", "trajectory"])
  .default("oneShot")
  .describe(
    "likelihood estimate: oneShot (d1: the whole answer masked, one pass) or trajectory (the sampler's own " +
      "unmasking order replayed in `chunks` passes) (docs/diffusion.md)",
  );
const chunks = z
  .number()
  .int()
  .positive()
  .default(4)
  .describe("trajectory estimator: passes per estimate; 1 equals oneShot, the sampler's steps replay every step");

/** The policy loss of a masked-diffusion LM (spec §7); `none` for an autoregressive policy. */
export const DiffusionSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("none") }),
  z.strictObject({
    type: z.literal("wd1"),
    pMaskPrompt,
    randomMasking,
    estimator,
    chunks,
    psi: z.number().positive().default(1).describe("ψ of wd1's weights softmax(±ψA) over the group (§7)"),
  }),
  z.strictObject({ type: z.literal("diffuGrpo"), pMaskPrompt, randomMasking, estimator, chunks }),
]);

/** Experience replay (spec §6, ExGRPO arXiv 2510.02245 §4); `none` trains on-policy only. */
export const ReplaySchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("none") }),
  z.strictObject({
    type: z.literal("exgrpo"),
    ratio: z
      .number()
      .min(0)
      .lt(1)
      .default(0.5)
      .describe("ρ: share of a step's questions that replay a stored answer once replay has started (§6.6)"),
    startPassRate: z
      .number()
      .min(0)
      .max(1)
      .default(0.35)
      .describe("delayed start: replay begins after a step whose fresh pass rate exceeds this (§6.10)"),
    maxPerQuestion: z
      .number()
      .int()
      .positive()
      .default(4)
      .describe("newest correct rollouts kept per question (§6.1, our choice)"),
    sigma: z.number().positive().default(1).describe("σ of the Gaussian question weighting around acc 0.5 (§6.4)"),
    shapeOffset: z
      .number()
      .positive()
      .default(0.1)
      .describe("c of the replayed tokens' shaped ratio f(w) = w / (w + c) (§6.8; the paper's 0.1)"),
  }),
]);

/** Everything that turns rewards into a loss. */
export const AlgorithmSchema = z.strictObject({
  advantage: AdvantageSchema.prefault({ type: "zScore" }).describe("advantage estimator (§1)"),
  zeroStd: ZeroStdSchema.prefault({}),
  nulls: NullsSchema.prefault({}),
  truncated: z
    .enum(["keep", "mask", "zeroReward"])
    .default("keep")
    .describe("what a completion cut at the token budget gets (§4)"),
  rewardAggregate: z
    .enum(["sumThenNormalize", "normalizeThenSum"])
    .default("sumThenNormalize")
    .describe("combining reward terms: weighted sum then the estimator, or GDPO's per-term z-score then sum (§8.1)"),
  policy: PolicySchema.prefault({}),
  kl: KlSchema.prefault({}),
  loss: LossSchema.prefault({}),
  overlong: OverlongSchema.prefault({}),
  offPolicy: OffPolicySchema.prefault({}).describe(
    "old log-probs from the sampler or recomputed, the train/inference correction w_IS, staleness (§5)",
  ),
  replay: ReplaySchema.prefault({ type: "none" }).describe(
    "experience replay: exgrpo stores correct rollouts per question and replays the lowest-entropy one (§6)",
  ),
  diffusion: DiffusionSchema.prefault({ type: "none" }).describe(
    "masked-diffusion policy loss: wd1 (ratio-free) or diffuGrpo (d1's estimator in the GRPO loss) (§7)",
  ),
});

/** The algorithm section of a recipe, defaults filled in. */
export type AlgorithmConfig = z.infer<typeof AlgorithmSchema>;
/** The algorithm section as a recipe may write it. */
export type AlgorithmConfigInput = z.input<typeof AlgorithmSchema>;

/** Every default of the algorithm section (a bare config: the `grpo` preset, the card's sketch). */
export const ALGORITHM_DEFAULTS: Readonly<AlgorithmConfig> = AlgorithmSchema.parse({});

/** Defaults of the batch estimators' own fields (not part of the default zScore member). */
export const BATCH_ADVANTAGE_DEFAULTS = AdvantageSchema.parse({ type: "batchNorm" }) as {
  weighting: "token" | "sequence";
  gamma: number;
};

/** Defaults of PPO clipping (ε 0.2/0.2, no dual clip). */
export const PPO_CLIP_DEFAULTS = ClipSchema.parse({ type: "ppo" }) as {
  epsLow: number;
  epsHigh: number;
  dualClip: number | null;
};
