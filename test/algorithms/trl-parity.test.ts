/**
 * Exact parity with TRL's GRPOTrainer (issue 10, part 3): every configuration in test/fixtures/trl/grpo.json was
 * computed by TRL's own code (scripts/make-trl-fixtures.py: `_generate_and_score_completions` for the advantages,
 * `_compute_loss` + backward for the loss and d loss / d logp, in float64). Each is replayed here through rlvr's
 * exported `computeAdvantages` + `policyLoss`, with options from `fromTrlGrpo`, and must agree to 1e-6.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { computeAdvantages, policyLoss } from "../../src/algorithms/index.js";
import { fromTrlGrpo, trlMicroBatchNormalizer, type TrlGrpoOptions } from "../../src/algorithms/trl-options.js";

interface AdvantageCase {
  name: string;
  trl: TrlGrpoOptions & { num_generations: number };
  rewards: (number | null)[][];
  advantages: number[];
}
interface LossCase {
  name: string;
  trl: TrlGrpoOptions;
  micro?: { rows: number[]; gradientAccumulationSteps: number };
  trlWarnings: string[];
  rewards: number[][];
  trlAdvantages: number[];
  numItemsInBatch: number;
  rows: number[];
  logp: number[][];
  oldLogp: number[][] | null;
  refLogp: number[][] | null;
  mask: number[][];
  loss: number;
  grad: number[][];
}
interface Fixture {
  versions: Record<string, string>;
  advantages: AdvantageCase[];
  losses: LossCase[];
}

const FIXTURE = new URL("../fixtures/trl/grpo.json", import.meta.url);
const fx = JSON.parse(readFileSync(FIXTURE, "utf8")) as Fixture;
const TOL = 1e-6;

function expectClose(actual: readonly number[], expected: readonly number[], what: string): void {
  expect(actual.length, `${what}: length`).toBe(expected.length);
  actual.forEach((a, k) => {
    if (!(Math.abs(a - expected[k]!) <= TOL)) {
      throw new Error(`${what}[${k}]: rlvr ${a}, TRL ${expected[k]} (|Δ| > ${TOL})`);
    }
  });
}

/** rlvr's advantages for a fixture's rewards, flattened in TRL's row order (groups of G consecutive rows). */
function rlvrAdvantages(trl: TrlGrpoOptions, rewards: (number | null)[][]): number[] {
  return computeAdvantages(rewards, fromTrlGrpo(trl).advantage).advantages.flat();
}

/** rlvr's loss and gradient for one TRL loss configuration. */
function replay(c: LossCase): { loss: number; grad: number[][]; advantages: number[] } {
  const mapped = fromTrlGrpo(c.trl);
  const all = rlvrAdvantages(c.trl, c.rewards);
  const advantages = c.rows.map((r) => all[r]!);
  const normalizer = c.micro
    ? trlMicroBatchNormalizer(c.trl.loss_type!, c.mask, c.micro.gradientAccumulationSteps, c.numItemsInBatch)
    : undefined;
  const out = policyLoss(
    {
      logp: c.logp,
      // num_iterations 1: TRL uses logp.detach() as the old log-probs (ratio exactly 1, gradient through it).
      oldLogp: c.oldLogp ?? c.logp,
      ...(c.refLogp ? { refLogp: c.refLogp } : {}),
      mask: c.mask,
      advantages,
    },
    { ...mapped.loss, ...(normalizer ? { normalizer } : {}) },
  );
  return { loss: out.loss, grad: out.grad, advantages: all };
}

describe(`TRL ${fx.versions.trl} GRPOTrainer parity: advantages (scale_rewards)`, () => {
  it("covers group, batch and none, with a null reward and a zero-std group", () => {
    expect(new Set(fx.advantages.map((c) => c.trl.scale_rewards))).toEqual(new Set(["group", "batch", "none"]));
    expect(fx.advantages.some((c) => c.rewards.flat().includes(null))).toBe(true);
  });
  it.each(fx.advantages.map((c) => [c.name, c] as const))("%s", (_, c) => {
    expectClose(rlvrAdvantages(c.trl, c.rewards), c.advantages, "advantages");
  });
  it("scale_rewards batch is not the group z-score nor batch whitening (the fixture tells them apart)", () => {
    const c = fx.advantages.find((a) => a.name === "mixed/scale-batch")!;
    const group = computeAdvantages(c.rewards, { type: "zScore" }).advantages.flat();
    const whitened = computeAdvantages(c.rewards, { type: "batchNorm", weighting: "sequence" }).advantages.flat();
    expect(Math.max(...group.map((a, k) => Math.abs(a - c.advantages[k]!)))).toBeGreaterThan(0.05);
    expect(Math.max(...whitened.map((a, k) => Math.abs(a - c.advantages[k]!)))).toBeGreaterThan(0.05);
  });
});

describe(`TRL ${fx.versions.trl} GRPOTrainer parity: loss and d loss / d logp`, () => {
  it("covers every loss_type × importance_sampling_level, β = 0 and β > 0 with and without bias correction", () => {
    const key = ({ trl: t }: LossCase) =>
      `${t.loss_type}/${t.importance_sampling_level}/${t.beta}/${t.use_bias_correction_kl}`;
    const keys = new Set(fx.losses.map(key));
    for (const lt of ["grpo", "bnpo", "dr_grpo", "dapo"]) {
      for (const level of ["token", "sequence"]) {
        expect(keys.has(`${lt}/${level}/0/undefined`), `${lt} ${level} β=0`).toBe(true);
        expect(keys.has(`${lt}/${level}/0.04/true`), `${lt} ${level} bias-corrected KL`).toBe(true);
        expect(keys.has(`${lt}/${level}/0.04/false`), `${lt} ${level} plain KL`).toBe(true);
      }
    }
    expect(fx.losses.some((c) => c.trl.delta != null)).toBe(true);
    expect(fx.losses.some((c) => c.oldLogp === null && (c.trl.beta ?? 0) > 0)).toBe(true);
    expect(fx.losses.some((c) => c.mask.some((row) => row.every((m) => m === 0)))).toBe(true);
  });

  it.each(fx.losses.map((c) => [c.name, c] as const))("%s", (_, c) => {
    const ours = replay(c);
    expectClose(ours.advantages, c.trlAdvantages, "advantages");
    expectClose([ours.loss], [c.loss], "loss");
    c.grad.forEach((row, i) => expectClose(ours.grad[i]!, row, `grad[${i}]`));
  });

  it.each(fx.losses.map((c) => [c.name, c] as const))("%s: rlvr warns exactly where TRL warns", (_, c) => {
    expect(fromTrlGrpo(c.trl).warnings.length > 0).toBe(c.trlWarnings.length > 0);
  });
});

describe("the fixture's tests can fail", () => {
  const c = fx.losses.find((l) => l.name === "grpo/token/beta0.04/biasCorrectionKl")!;
  it("without bias correction the gradient differs from TRL's default (even where ρ = 1)", () => {
    const onPolicy = fx.losses.find((l) => l.name === "grpo/token/onPolicy/beta0.1/biasCorrectionKl")!;
    for (const k of [c, onPolicy]) {
      const plain = replay({ ...k, trl: { ...k.trl, use_bias_correction_kl: false } });
      const diff = Math.max(...plain.grad.flatMap((row, i) => row.map((g, t) => Math.abs(g - k.grad[i]![t]!))));
      expect(diff).toBeGreaterThan(1e-4);
    }
  });
  it("GSPO with bias-corrected KL needs the cross-token term of d s_i / d lp", () => {
    const seq = fx.losses.find((l) => l.name === "grpo/sequence/beta0.04/biasCorrectionKl")!;
    const asToken = replay({ ...seq, trl: { ...seq.trl, importance_sampling_level: "token" } });
    const diff = Math.max(...asToken.grad.flatMap((row, i) => row.map((g, t) => Math.abs(g - seq.grad[i]![t]!))));
    expect(diff).toBeGreaterThan(1e-4);
  });
  it("the micro-batch normaliser matters for bnpo and dapo", () => {
    for (const name of ["bnpo/token/microBatch", "dapo/token/microBatch"]) {
      const m = fx.losses.find((l) => l.name === name)!;
      const advantages = m.rows.map((r) => m.trlAdvantages[r]!);
      const input = { logp: m.logp, oldLogp: m.oldLogp!, refLogp: m.refLogp!, mask: m.mask, advantages };
      const plain = policyLoss(input, fromTrlGrpo(m.trl).loss);
      expect(Math.abs(plain.loss - m.loss)).toBeGreaterThan(1e-4);
    }
  });
});

describe("the options added for TRL", () => {
  it("stdScope batch by hand: [[1, 0], [1, 1]] has σ_B = 0.5; A = ±0.5/(0.5 + 1e-4), zero-std group 0", () => {
    const a = computeAdvantages(
      [
        [1, 0],
        [1, 1],
      ],
      { type: "zScore", stdScope: "batch" },
    ).advantages;
    expectClose(a.flat(), [0.5 / 0.5001, -0.5 / 0.5001, 0, 0], "advantages");
    expect(() => computeAdvantages([[1, 0]], { stdScope: "all" as never })).toThrow(/stdScope/);
  });
  it("stdScope batch (property): one group = zScore; Σ A = 0 per group; scaling the rewards changes nothing", () => {
    const reward = fc.integer({ min: 0, max: 16 }).map((k) => k / 8);
    const groups = fc.array(fc.array(reward, { minLength: 2, maxLength: 6 }), { minLength: 1, maxLength: 5 });
    fc.assert(
      fc.property(groups, fc.double({ min: 0.1, max: 10, noNaN: true }), (g, scale) => {
        const batch = computeAdvantages(g, { stdScope: "batch", eps: 0 }).advantages;
        if (g.length === 1) expectClose(batch[0]!, computeAdvantages(g, { eps: 0 }).advantages[0]!, "one group");
        for (const row of batch) expect(Math.abs(row.reduce((x, y) => x + y, 0))).toBeLessThan(1e-9);
        const scaled = computeAdvantages(
          g.map((row) => row.map((r) => r * scale)),
          { stdScope: "batch", eps: 0 },
        );
        expectClose(scaled.advantages.flat(), batch.flat(), "scaled");
      }),
      { seed: 10, numRuns: 200 },
    );
  });
  it("klImportanceWeight's gradient, GSPO cross term included, equals central differences of the loss", () => {
    for (const name of ["grpo/sequence/beta0.04/biasCorrectionKl", "dapo/token/beta0.04/biasCorrectionKl"]) {
      const c = fx.losses.find((l) => l.name === name)!;
      const opts = fromTrlGrpo(c.trl).loss;
      const advantages = c.rows.map(() => 0.3);
      const fixed = { oldLogp: c.oldLogp!, refLogp: c.refLogp!, mask: c.mask, advantages };
      const input = (logp: number[][]) => ({ logp, ...fixed });
      const { grad } = policyLoss(input(c.logp), opts);
      const h = 1e-6;
      for (const [i, t] of [
        [0, 0],
        [0, 5],
        [3, 1],
        [7, 3],
      ] as const) {
        const moved = (d: number) => c.logp.map((row, r) => row.map((v, k) => (r === i && k === t ? v + d : v)));
        const at = (d: number) => policyLoss(input(moved(d)), opts).loss;
        expect(Math.abs((at(h) - at(-h)) / (2 * h) - grad[i]![t]!), `${name} [${i}][${t}]`).toBeLessThan(1e-7);
      }
    }
  });
  it("GSPO with a token-sum aggregation is accepted with one warning; with seqMeanTokenMean without", () => {
    expect(fromTrlGrpo({ importance_sampling_level: "sequence", loss_type: "dapo" }).warnings).toHaveLength(1);
    expect(fromTrlGrpo({ importance_sampling_level: "sequence", loss_type: "grpo" }).warnings).toEqual([]);
    const one = { logp: [[-1]], oldLogp: [[-1]], mask: [[1]], advantages: [1] };
    expect(() => policyLoss(one, { ratio: "sequence", aggregation: "tokenMean", beta: 0 })).not.toThrow();
    expect(() => policyLoss(one, { klImportanceWeight: 1 as never })).toThrow(/klImportanceWeight/);
  });
});

describe("fromTrlGrpo", () => {
  it("maps TRL 1.13's defaults: dapo (tokenMean), group z-score, token ratio, ε 0.2, β 0, bias-corrected KL", () => {
    const d = fromTrlGrpo();
    expect(d.loss).toMatchObject({ aggregation: "tokenMean", ratio: "token", beta: 0, klImportanceWeight: true });
    expect(d.loss.clip).toEqual({ type: "ppo", epsLow: 0.2, epsHigh: 0.2, dualClip: null });
    expect(d.advantage).toMatchObject({ type: "zScore", stdScope: "group" });
    expect(d.innerIterations).toBe(1);
  });
  it("accepts TRL's boolean scale_rewards and rejects what rlvr cannot express, naming the field", () => {
    expect(fromTrlGrpo({ scale_rewards: false }).advantage.type).toBe("meanOnly");
    expect(fromTrlGrpo({ scale_rewards: true }).advantage.stdScope).toBe("group");
    expect(() => fromTrlGrpo({ loss_type: "cispo" as never })).toThrow(/loss_type "cispo"/);
    expect(() => fromTrlGrpo({ scale_rewards: "sequence" as never })).toThrow(/scale_rewards/);
    expect(() => fromTrlGrpo({ importance_sampling_level: "segment" as never })).toThrow(/importance_sampling_level/);
  });
});
