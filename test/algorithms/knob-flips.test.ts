/**
 * Every field of the recipe's `algorithm` section has a reader: for each one, flipping it changes the numbers that
 * `buildAlgorithm` returns to the loop (shaped rewards, advantages, the groups kept, the loss and its gradient, β),
 * not only the parsed config. A walk over `AlgorithmSchema` makes sure a new field cannot be added without a flip
 * case here. Fields that act in the trainer itself (kl.sections, loss.afterFirstError, kl.monitorOnly's logging)
 * are also flipped through a real run in test/trainer/knob-runs.test.ts.
 */
import { describe, expect, it } from "vitest";
import { AlgorithmSchema, buildAlgorithm, type CompletionNumbers } from "../../src/algorithms/index.js";
import { mergeRecipe } from "../../src/trainer/presets.js";

/** Fields the trainer reads itself (token spans need the tokenizer): flipped in test/trainer/knob-runs.test.ts. */
const TRAINER_FIELDS = ["kl.sections", "loss.afterFirstError"];
/** Fields of the masked-diffusion losses (`buildDiffusionLoss`): flipped in test/diffusion/losses.test.ts. */
const DIFFUSION_FIELDS = [
  "diffusion.pMaskPrompt",
  "diffusion.randomMasking",
  "diffusion.estimator",
  "diffusion.chunks",
  "diffusion.psi",
];
/**
 * `offPolicy` acts in the trainer (lp_old recomputed before the update, w_IS, generation one step ahead): each field is
 * flipped through real runs against rlvr serve in test/sampling/remote-train.test.ts and
 * test/trainer/config-readers.test.ts; the pure pieces are in test/algorithms/off-policy-correction.test.ts.
 */
const OFF_POLICY_FIELDS = [
  "offPolicy.oldLogprobs",
  "offPolicy.correction",
  "offPolicy.cap",
  "offPolicy.capMin",
  "offPolicy.capMax",
  "offPolicy.maxStaleness",
];

/**
 * `replay` (ExGRPO) acts in the trainer: `shapeOffset` is flipped through `buildAlgorithm` in
 * test/algorithms/replay-loss.test.ts, the others through real runs in test/trainer/replay-run.test.ts.
 */
const REPLAY_FIELDS = [
  "replay.ratio",
  "replay.startPassRate",
  "replay.maxPerQuestion",
  "replay.sigma",
  "replay.shapeOffset",
];

/** A fixed batch: 3 groups of 4 completions, two reward terms, ragged masks, sampler and reference log-probs. */
function batch(): CompletionNumbers[][] {
  const rewards = [
    [1.5, 0.5, 0, 1.5],
    [1, 1, 1, 1],
    [1, 0, null, 0.5],
  ];
  const acc = [
    [1, 0, 0, 1],
    [1, 1, 1, 1],
    [1, 0, 0, 0],
  ];
  const fmt = [
    [1, 1, 0, 1],
    [0, 0, 0, 0],
    [0, 0, 0, 1],
  ];
  return rewards.map((g, gi) =>
    g.map((reward, i) => {
      const L = 2 + ((gi + i) % 3);
      const mask = Array.from({ length: L }, (_, t) => (t === L - 1 && i === 1 ? 0 : 1));
      return {
        reward,
        terms: { acc: acc[gi]![i]!, fmt: fmt[gi]![i]! },
        mask,
        oldLogp: mask.map((_, t) => -0.5 - 0.1 * t - 0.05 * i),
        refLogp: mask.map((_, t) => -0.7 - 0.05 * t + 0.03 * gi),
      };
    }),
  );
}

/** Everything the loop would see from one built algorithm, as plain numbers. */
function probe(raw: unknown): unknown {
  const config = AlgorithmSchema.parse(raw);
  const algo = buildAlgorithm(config, { maxCompletionTokens: 8, termWeights: { acc: 1, fmt: 0.5 } });
  const b = batch();
  const rewards = b.map((g) => g.map((c) => c.reward));
  const shaped = [3, 7, 8, 9].flatMap((length) =>
    [true, false].map((truncated) => algo.shapeReward({ reward: 1, terms: { acc: 1 }, length, truncated })),
  );
  let adv: unknown;
  try {
    const res = algo.advantages(b, 0.1);
    adv = { a: res.advantages, ta: res.tokenAdvantages, keep: res.keep };
  } catch (err) {
    adv = (err as Error).message;
  }
  let nulls: unknown;
  try {
    nulls = algo.advantages([[b[2]![2]!, b[0]![0]!, b[0]![1]!, b[0]![2]!]], 0).advantages; // one null of four
  } catch (err) {
    nulls = (err as Error).message;
  }
  // lp_θ differs from lp_old, so ratios, clipping and KL all act; entropy rows feed the entropy term.
  const flat = b.flat().filter((c) => c.reward !== null);
  const logp = flat.map((c, i) => c.oldLogp.map((x, t) => x + 0.35 * Math.sin(1.7 * i + t)));
  const loss = algo.loss(
    {
      logp,
      oldLogp: flat.map((c) => c.oldLogp),
      ...(algo.kl.reference ? { refLogp: flat.map((c) => c.refLogp!) } : {}),
      mask: flat.map((c) => c.mask),
      advantages: flat.map((_, i) => [0.9, -1.2, 0.4, -0.3][i % 4]!),
      entropy: flat.map((c) => c.mask.map((_, t) => 1 + 0.1 * t)),
    },
    config.kl.beta,
    { sequences: flat.length, tokens: flat.reduce((s, c) => s + c.mask.reduce((a, x) => a + x, 0), 0) },
  );
  const kl = algo.observedKl(flat);
  return {
    shaped,
    adv,
    nulls,
    selected: algo.selectGroups([...rewards, [0, 1, 0, 1]], 2),
    next: [1, 3, 12].map((batches) => algo.nextGeneration(rewards, 3, batches)),
    loss: { value: loss.loss, grad: loss.grad, metrics: loss.metrics },
    beta: [0.02, 2].map((target) => algo.nextBeta(0.1, kl === undefined ? undefined : kl * target * 10, 500)),
  };
}

type Flip = [field: string, base: object, flipped: object];
const ppo = (o: object = {}) => ({ policy: { clip: { type: "ppo", ...o } } });
const FLIPS: Flip[] = [
  ["advantage.type", {}, { advantage: { type: "rloo" } }],
  ["advantage.std", {}, { advantage: { type: "zScore", std: "population" } }],
  ["advantage.eps", {}, { advantage: { type: "zScore", eps: 0.5 } }],
  ["advantage.stdScope", {}, { advantage: { type: "zScore", stdScope: "batch" } }],
  [
    "advantage.weighting",
    { advantage: { type: "batchNorm" } },
    { advantage: { type: "batchNorm", weighting: "sequence" } },
  ],
  [
    "advantage.gamma",
    { advantage: { type: "batchNorm" }, kl: { placement: "reward", estimator: "k1" } },
    { advantage: { type: "batchNorm", gamma: 0.5 }, kl: { placement: "reward", estimator: "k1" } },
  ],
  ["zeroStd.policy", {}, { zeroStd: { policy: "drop" } }],
  ["zeroStd.maxGenBatches", { zeroStd: { policy: "resample" } }, { zeroStd: { policy: "resample", maxGenBatches: 2 } }],
  ["nulls.onNull", {}, { nulls: { onNull: "error" } }],
  ["nulls.maxNullFrac", {}, { nulls: { maxNullFrac: 0.1 } }],
  ["truncated", {}, { truncated: "zeroReward" }],
  ["rewardAggregate", {}, { rewardAggregate: "normalizeThenSum" }],
  ["policy.ratio", ppo(), { ...ppo(), policy: { ratio: "sequence", clip: { type: "ppo" } } }],
  ["policy.clip.type", {}, ppo()],
  ["policy.clip.epsLow", ppo(), ppo({ epsLow: 0.05 })],
  ["policy.clip.epsHigh", ppo(), ppo({ epsHigh: 0.05 })],
  ["policy.clip.dualClip", ppo({ epsLow: 0.05 }), ppo({ epsLow: 0.05, dualClip: 1.25 })],
  ["kl.beta", {}, { kl: { beta: 0.3 } }],
  ["kl.estimator", {}, { kl: { estimator: "k2" } }],
  ["kl.placement", {}, { kl: { placement: "reward" } }],
  ["kl.controller", {}, { kl: { controller: "adaptive" } }],
  ["kl.target", { kl: { controller: "adaptive" } }, { kl: { controller: "adaptive", target: 5 } }],
  ["kl.horizon", { kl: { controller: "adaptive" } }, { kl: { controller: "adaptive", horizon: 100 } }],
  ["kl.importanceWeight", {}, { kl: { importanceWeight: true } }],
  ["kl.monitorOnly", { kl: { beta: 0 } }, { kl: { beta: 0, monitorOnly: true } }],
  ["loss.aggregation", {}, { loss: { aggregation: "tokenMean" } }],
  ["loss.entropyCoef", {}, { loss: { entropyCoef: 0.1 } }],
  ["overlong.enabled", {}, { overlong: { enabled: true } }],
  ["overlong.bufferFrac", { overlong: { enabled: true } }, { overlong: { enabled: true, bufferFrac: 0.6 } }],
];

/** Leaf field paths of a zod object schema, following union members and wrappers. */
function leafPaths(schema: any, prefix = ""): string[] {
  const def = schema?._zod?.def;
  if (!def) return [prefix];
  const wrappers = ["default", "prefault", "optional", "nullable", "pipe"];
  if (wrappers.includes(def.type)) return leafPaths(def.innerType ?? def.in, prefix);
  if (def.type === "union") return [...new Set(def.options.flatMap((o: any) => leafPaths(o, prefix)))] as string[];
  if (def.type === "object") {
    return Object.keys(def.shape).flatMap((k) => leafPaths(def.shape[k], prefix ? `${prefix}.${k}` : k));
  }
  return [prefix];
}

describe("every algorithm field is read (flip it, the numbers move)", () => {
  it("the flip table covers every leaf field of AlgorithmSchema", () => {
    const discriminator = (p: string) => p.endsWith(".type") && p !== "advantage.type" && p !== "policy.clip.type";
    const fields = leafPaths(AlgorithmSchema).filter((p) => !discriminator(p));
    expect(
      new Set([
        ...FLIPS.map(([f]) => f),
        ...TRAINER_FIELDS,
        ...DIFFUSION_FIELDS,
        ...OFF_POLICY_FIELDS,
        ...REPLAY_FIELDS,
      ]),
    ).toEqual(new Set(fields));
  });
  it.each(FLIPS)("%s", (_field, base, flipped) => {
    expect(probe(mergeRecipe(base, flipped))).not.toEqual(probe(base));
  });
});
