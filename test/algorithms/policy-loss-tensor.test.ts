/** Tensor policy loss: agrees with the array version (value, gradient, metrics), §11.4 values, finite differences. */
import { describe, expect, it } from "vitest";
import { logSoftmax, mul, neg, softmax, sum, tensor, type Tensor } from "../../src/engine/index.js";
import { policyLossTensor, type PolicyLossTensorInput } from "../../src/algorithms/policy-loss-tensor.js";
import { policyLoss } from "../../src/algorithms/policy-loss.js";
import { ppoClip, type Aggregation, type LossOptions } from "../../src/algorithms/loss-options.js";
import { Rng } from "../../src/util/rng.js";

const B = 5;
const T = 6;

/** A random (B, T) grid batch: ragged masks (row 2 fully masked), per-token section masks. */
function gridBatch(seed: number, perTokenAdv = false) {
  const rng = new Rng(seed);
  const n = B * T;
  const lp = Float32Array.from({ length: n }, () => -0.1 - 2 * rng.random());
  const mask = new Float32Array(n);
  for (let b = 0; b < B; b++) {
    const L = b === 2 ? 0 : 1 + rng.int(T);
    for (let t = 0; t < L; t++) mask[b * T + t] = 1;
  }
  return {
    lp,
    oldLogp: lp.map((x) => x + 0.3 * (rng.random() - 0.5)),
    refLogp: lp.map((x) => x + 0.4 * (rng.random() - 0.5)),
    mask,
    klMask: Float32Array.from({ length: n }, () => (rng.random() < 0.7 ? 1 : 0)),
    advantages: Float32Array.from({ length: perTokenAdv ? n : B }, () => rng.normal()),
  };
}

const rowsOf = (a: Float32Array) => Array.from({ length: B }, (_, b) => Array.from(a.subarray(b * T, (b + 1) * T)));

function both(g: ReturnType<typeof gridBatch>, opts: Partial<LossOptions>) {
  const logp = tensor(g.lp, [B, T], { requiresGrad: true });
  const input: PolicyLossTensorInput = { logp, oldLogp: g.oldLogp, refLogp: g.refLogp, mask: g.mask, advantages: g.advantages, klMask: g.klMask };
  const t = policyLossTensor(input, opts);
  t.loss.backward();
  const a = policyLoss(
    {
      logp: rowsOf(g.lp),
      oldLogp: rowsOf(g.oldLogp),
      refLogp: rowsOf(g.refLogp),
      mask: rowsOf(g.mask),
      klMask: rowsOf(g.klMask),
      advantages: g.advantages.length === B ? Array.from(g.advantages) : rowsOf(g.advantages),
    },
    opts,
  );
  return { t, a, grad: logp.grad! };
}

const MODES: Aggregation[] = ["seqMeanTokenMean", "tokenMean", "seqMeanTokenSum", "constantNorm"];
const CONFIGS: [string, Partial<LossOptions>][] = [
  ["none + k3", { clip: { type: "none" }, estimator: "k3" }],
  ["ppo + k1", { clip: ppoClip(0.1, 0.15), estimator: "k1" }],
  ["ppo dual + k2", { clip: ppoClip(0.1, 0.15, 1.2), estimator: "k2" }],
  ["ppo + k3st", { clip: ppoClip(0.05, 0.08), estimator: "k3st" }],
];

describe("tensor and array versions agree", () => {
  for (const aggregation of MODES) {
    for (const [name, cfg] of CONFIGS) {
      it(`${aggregation}, ${name}`, () => {
        const opts = { ...cfg, aggregation, beta: 0.05, maxCompletionTokens: 8 };
        const { t, a, grad } = both(gridBatch(3, name.includes("dual")), opts);
        expect(Math.abs(t.loss.item() - a.loss)).toBeLessThan(1e-5 * Math.max(1, Math.abs(a.loss)));
        const flat = a.grad.flat();
        for (let k = 0; k < flat.length; k++) expect(Math.abs(grad[k]! - flat[k]!), `token ${k}`).toBeLessThan(1e-6);
        expect(t.metrics["ratio/mean"]).toBeCloseTo(a.metrics["ratio/mean"]!, 5);
      });
    }
  }
  it("GSPO sequence ratio: value s_i, gradient s_i per token", () => {
    const opts = { ratio: "sequence" as const, clip: ppoClip(0.2, 0.28), beta: 0 };
    const { t, a, grad } = both(gridBatch(9), opts);
    expect(t.loss.item()).toBeCloseTo(a.loss, 5);
    a.grad.flat().forEach((g, k) => expect(Math.abs(grad[k]! - g)).toBeLessThan(1e-6));
  });
});

describe("§11.4 through the tensor path", () => {
  it.each([
    ["seqMeanTokenMean", -0.233466, [0.001208, -0.124171, -0.164044, 0.170545, -0.002214]],
    ["constantNorm", -0.242383, [0.000906, -0.093128, -0.123033, 0.085273, -0.001107]],
  ] as const)("%s", (aggregation, L, g) => {
    const logp = tensor([-1.0, -0.5, -2.0, -0.3, -1.2, 0], [2, 3], { requiresGrad: true });
    const { loss, metrics } = policyLossTensor(
      {
        logp,
        oldLogp: Float32Array.of(-1.3, -0.2, -2.0, -0.6, -0.85, 0),
        refLogp: Float32Array.of(-1.2, -0.4, -2.5, -0.5, -1.0, 0),
        mask: Float32Array.of(1, 1, 1, 1, 1, 0),
        advantages: Float32Array.of(1.0, -0.5),
      },
      { clip: ppoClip(0.2, 0.28), beta: 0.04, aggregation, maxCompletionTokens: 4 },
    );
    loss.backward();
    expect(Math.abs(loss.item() - L)).toBeLessThan(1e-5 * Math.abs(L) + 1e-6);
    [0, 1, 2, 3, 4].forEach((k, i) => expect(Math.abs(logp.grad![k]! - g[i]!)).toBeLessThan(2e-6));
    expect(logp.grad![5]).toBe(0);
    expect(metrics["clip/regionFrac"]).toBeCloseTo(0.4, 6);
  });
});

describe("tensor gradients match finite differences (float32, central, h = 1e-2)", () => {
  for (const aggregation of MODES) {
    it(aggregation, () => {
      const g = gridBatch(21);
      const opts: Partial<LossOptions> = { clip: { type: "none" }, estimator: "k3", aggregation, beta: 0.1, maxCompletionTokens: 8 };
      const { grad } = both(g, opts);
      const at = (k: number, d: number) => {
        const lp = g.lp.slice();
        lp[k] = lp[k]! + d;
        return policyLossTensor({ logp: tensor(lp, [B, T]), oldLogp: g.oldLogp, refLogp: g.refLogp, mask: g.mask, advantages: g.advantages, klMask: g.klMask }, opts).loss.item();
      };
      for (let k = 0; k < B * T; k += 3) {
        const fd = (at(k, 1e-2) - at(k, -1e-2)) / 2e-2;
        expect(Math.abs(grad[k]! - fd), `token ${k}`).toBeLessThan(2e-4 + 1e-2 * Math.abs(fd));
      }
    });
  }
});

describe("entropy bonus flows through the logits", () => {
  it("d loss / d logits matches finite differences", () => {
    const V = 4;
    const rng = new Rng(8);
    const logitsData = Float32Array.from({ length: 2 * 3 * V }, () => rng.normal());
    const targets = [1, 3, 0, 2, 2, 1];
    const mask = Float32Array.of(1, 1, 0, 1, 1, 1);
    const opts: Partial<LossOptions> = { beta: 0, entropyCoef: 0.3, aggregation: "tokenMean" };
    let old: Float32Array | null = null; // lp_old stays the unperturbed lp_θ, as across inner iterations
    const run = (data: Float32Array, requiresGrad: boolean): { loss: number; logits: Tensor } => {
      const logits = tensor(data, [2, 3, V], { requiresGrad });
      const lsm = logSoftmax(logits, -1); // (2, 3, V)
      const H = neg(sum(mul(softmax(logits, -1), lsm), -1)); // (2, 3)
      const pick = new Float32Array(2 * 3 * V);
      targets.forEach((v, k) => (pick[k * V + v] = 1));
      const logp = sum(mul(lsm, tensor(pick, [2, 3, V])), -1); // (2, 3)
      old ??= logp.data.slice();
      const { loss } = policyLossTensor({ logp, oldLogp: old, mask, advantages: Float32Array.of(0.7, -0.4), entropy: H }, opts);
      if (requiresGrad) loss.backward();
      return { loss: loss.item(), logits };
    };
    const { logits } = run(logitsData, true);
    for (let k = 0; k < logitsData.length; k += 2) {
      const plus = logitsData.slice();
      plus[k] = plus[k]! + 1e-2;
      const minus = logitsData.slice();
      minus[k] = minus[k]! - 1e-2;
      const fd = (run(plus, false).loss - run(minus, false).loss) / 2e-2;
      expect(Math.abs(logits.grad![k]! - fd), `logit ${k}`).toBeLessThan(2e-4 + 2e-2 * Math.abs(fd));
    }
  });
  it("entropy is required when entropyCoef > 0, and shapes are checked", () => {
    const logp = tensor(new Float32Array(6), [2, 3]);
    const base = { logp, oldLogp: new Float32Array(6), mask: new Float32Array(6).fill(1), advantages: new Float32Array(2) };
    expect(() => policyLossTensor(base, { beta: 0, entropyCoef: 0.1 })).toThrow(/entropy/);
    expect(() => policyLossTensor({ ...base, mask: new Float32Array(5) }, { beta: 0 })).toThrow(/mask has length 5/);
    expect(() => policyLossTensor({ ...base, advantages: new Float32Array(3) }, { beta: 0 })).toThrow(/advantages/);
    expect(() => policyLossTensor(base, {})).toThrow(/refLogp is required/);
  });
  it("on the first inner iteration the ratio is exactly 1", () => {
    const lp = Float32Array.of(-1.25, -0.5, -3.0, -0.125);
    const { metrics } = policyLossTensor({ logp: tensor(lp, [2, 2], { requiresGrad: true }), oldLogp: lp.slice(), mask: new Float32Array(4).fill(1), advantages: Float32Array.of(1, -1) }, { beta: 0, clip: ppoClip() });
    expect(metrics["ratio/min"]).toBe(1);
    expect(metrics["ratio/max"]).toBe(1);
  });
});
