/**
 * bench:trl:learn's comparison logic (bench/trl-learn-gate.ts) and its TRL-side scorer (bench/trl-score-worker.ts):
 * hand-computed slopes, the PASS rule at and around its boundary, and the stop-string cut; and bench:trl's
 * steady-state window (bench/trl-shared.ts), on made-up clocks (no test here times anything).
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { formatCurve, learningParity, slopePerStep, totalGain } from "../../bench/trl-learn-gate.js";
import { cutAtStop, scoreBatch } from "../../bench/trl-score-worker.js";
import { getTask } from "../../src/tasks/index.js";
import type { Example } from "../../src/tasks/types.js";
import { rlvrSettingsFor, stepClock, steadyStepsPerSecond } from "../../bench/trl-shared.js";
import { resolveConfig } from "../../src/trainer/recipe.js";

describe("slopePerStep", () => {
  it("fits a line by least squares (hand-computed)", () => {
    // steps 0, 10, 20; pass 0.2, 0.3, 0.6: mean step 10, mean pass 0.3667; Sxy = (-10)(-0.1667) + 0 + 10(0.2333) = 4
    // Sxx = 200, slope = 0.02 per step.
    const curve = [
      { step: 0, pass: 0.2 },
      { step: 10, pass: 0.3 },
      { step: 20, pass: 0.6 },
    ];
    expect(slopePerStep(curve)).toBeCloseTo(0.02, 12);
  });

  it("is exact on a line and ignores the order of points", () => {
    fc.assert(
      fc.property(
        fc.double({ min: -1, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 2, max: 12 }),
        (a, b, n) => {
          const pts = Array.from({ length: n }, (_, i) => ({ step: 5 * i, pass: b + a * 5 * i })).reverse();
          expect(slopePerStep(pts)).toBeCloseTo(a, 9);
        },
      ),
    );
  });

  it("is 0 on a flat curve and negative on a falling one", () => {
    expect(
      slopePerStep([
        { step: 0, pass: 0.4 },
        { step: 4, pass: 0.4 },
      ]),
    ).toBe(0);
    expect(
      slopePerStep([
        { step: 0, pass: 0.5 },
        { step: 4, pass: 0.3 },
      ]),
    ).toBeCloseTo(-0.05, 12);
  });

  it("refuses curves it cannot fit", () => {
    expect(() => slopePerStep([{ step: 0, pass: 0.1 }])).toThrow(/at least 2/);
    expect(() =>
      slopePerStep([
        { step: 3, pass: 0.1 },
        { step: 3, pass: 0.2 },
      ]),
    ).toThrow(/same step/);
    expect(() =>
      slopePerStep([
        { step: 0, pass: NaN },
        { step: 3, pass: 0.2 },
      ]),
    ).toThrow(/finite/);
  });
});

describe("totalGain", () => {
  it("is last minus first by step, whatever the order", () => {
    expect(
      totalGain([
        { step: 20, pass: 0.5 },
        { step: 0, pass: 0.2 },
        { step: 10, pass: 0.9 },
      ]),
    ).toBeCloseTo(0.3, 12);
    expect(() => totalGain([])).toThrow(/empty/);
  });
});

describe("learningParity", () => {
  it("passes when rlvr gains more per step on average", () => {
    const v = learningParity([0.004, 0.006, 0.005], [0.003, 0.004, 0.002]);
    expect(v.pass).toBe(true);
    expect(v.verdict).toBe("PASS");
    expect(v.margin).toBeCloseTo(0.002, 12);
  });

  it("passes a shortfall inside the seed spread and fails one outside it", () => {
    // rlvr std = 0.001 (values 0.003, 0.004, 0.005); TRL std 0 at 0.0049: shortfall 0.0009 < spread 0.001
    const inside = learningParity([0.003, 0.004, 0.005], [0.0049, 0.0049, 0.0049]);
    expect(inside.spread).toBeCloseTo(0.001, 12);
    expect(inside.pass).toBe(true);
    const outside = learningParity([0.003, 0.004, 0.005], [0.0051, 0.0051, 0.0051]);
    expect(outside.pass).toBe(false);
  });

  it("uses the larger of the two spreads", () => {
    // TRL's slopes spread 0.002 (std of 0.004, 0.006, 0.008), rlvr none: rlvr 0.0045 is 0.0015 short, inside 0.002
    const v = learningParity([0.0045, 0.0045, 0.0045], [0.004, 0.006, 0.008]);
    expect(v.spread).toBeCloseTo(0.002, 12);
    expect(v.pass).toBe(true);
  });

  it("with one seed asks for rlvr >= TRL outright", () => {
    expect(learningParity([0.002], [0.002]).pass).toBe(true);
    expect(learningParity([0.0019], [0.002]).verdict).toBe("FAIL");
  });

  it("is INCONCLUSIVE, never PASS, when TRL did not learn: flat curves on both sides cannot pass", () => {
    const flat = learningParity([0, 0, 0], [0, 0, 0]);
    expect(flat.verdict).toBe("INCONCLUSIVE");
    expect(flat.pass).toBe(false);
    expect(learningParity([0.01, 0.01], [-0.001, 0.0005]).verdict).toBe("INCONCLUSIVE");
    expect(learningParity([0.01, 0.01], [0.001, 0.001]).verdict).toBe("PASS");
  });

  it("refuses mismatched or non-finite input", () => {
    expect(() => learningParity([0.1], [0.1, 0.2])).toThrow(/one slope per seed/);
    expect(() => learningParity([], [])).toThrow(/one slope per seed/);
    expect(() => learningParity([NaN], [0.1])).toThrow(/finite/);
  });
});

describe("formatCurve", () => {
  it("prints step:pass pairs", () => {
    expect(
      formatCurve([
        { step: 0, pass: 0.25 },
        { step: 10, pass: 1 / 3 },
      ]),
    ).toBe("0:0.25 10:0.33");
  });
});

describe("the TRL side's scorer", () => {
  it("cuts at the first stop string, keeping it", () => {
    expect(cutAtStop("\\boxed{7}}junk", ["}"])).toBe("\\boxed{7}");
    expect(cutAtStop("abc", ["}"])).toBe("abc");
    expect(cutAtStop("x;y}z", ["}", ";"])).toBe("x;");
  });

  it("scores with the task's own terms: right answer 1.2, wrong box 0.2, text after the stop ignored", async () => {
    const task = getTask("addition", { minDigits: 1, maxDigits: 1 });
    const ex = task.generate("train", 1, 0)[0]! as Example<{ answer: string }>;
    const wrong = String(Number(ex.gold.answer) + 1);
    const byPrompt = new Map([[ex.prompt, ex as Example]]);
    const out = await scoreBatch(
      task,
      byPrompt,
      [ex.prompt, ex.prompt, ex.prompt],
      [`\\boxed{${ex.gold.answer}}`, `\\boxed{${wrong}}`, `\\boxed{${ex.gold.answer}} and more`],
    );
    expect(out).toEqual([1.2, 0.2, 1.2]);
    await expect(scoreBatch(task, byPrompt, ["nope"], ["x"])).rejects.toThrow(/not a train prompt/);
  });
});

describe("bench:trl's steady-state window", () => {
  it("counts the steps after the first over the time between their ends, less the exclusions", () => {
    // ends 10, 12, 15, 16: 3 steps in 6 s; step 3 spent 1 s evaluating: 3 / 5. Step 1's exclusion is outside.
    expect(steadyStepsPerSecond([10, 12, 15, 16])).toBeCloseTo(0.5, 12);
    expect(steadyStepsPerSecond([10, 12, 15, 16], [9, 0, 1, 0])).toBeCloseTo(0.6, 12);
  });

  it("refuses a window it cannot measure", () => {
    expect(() => steadyStepsPerSecond([3])).toThrow(/at least 2/);
    expect(() => steadyStepsPerSecond([0, 1], [0, 1])).toThrow(/window/);
  });

  it("records one end per step and passes every event on", () => {
    const seen: string[] = [];
    const { reporter, ends } = stepClock([{ onStep: (s) => seen.push(`step ${s}`), onEnd: () => seen.push("end") }]);
    reporter.onStep!(1, {});
    reporter.onStep!(2, {});
    reporter.onEnd!({ step: 2, best: null });
    expect(seen).toEqual(["step 1", "step 2", "end"]);
    expect(ends).toHaveLength(2);
    expect(ends[1]!).toBeGreaterThanOrEqual(ends[0]!);
  });
});

describe("the rlvr side's settings from TRL's options", () => {
  const resolved = (options: Parameters<typeof rlvrSettingsFor>[0]) => {
    const m = rlvrSettingsFor(options);
    return resolveConfig({
      name: "x",
      preset: "grpo",
      model: { type: "checkpoint", path: "unused" },
      task: { name: "addition" },
      algorithm: m.algorithm,
      train: { innerIterations: m.innerIterations },
    });
  };

  it("writes out bench:trl's options field by field (not the preset's defaults)", () => {
    const c = resolved({
      loss_type: "grpo",
      scale_rewards: "group",
      beta: 0.04,
      use_bias_correction_kl: false,
      epsilon: 0.2,
    });
    expect(c.algorithm.advantage).toMatchObject({ type: "zScore", std: "sample", eps: 1e-4, stdScope: "group" });
    expect(c.algorithm.policy).toEqual({
      ratio: "token",
      clip: { type: "ppo", epsLow: 0.2, epsHigh: 0.2, dualClip: null },
    });
    expect(c.algorithm.kl).toMatchObject({ beta: 0.04, estimator: "k3", importanceWeight: false });
    expect(c.algorithm.loss.aggregation).toBe("seqMeanTokenMean");
    expect(c.train.innerIterations).toBe(1);
  });

  it("follows a change of each option", () => {
    const c = resolved({
      loss_type: "dapo",
      scale_rewards: "batch",
      beta: 0.1,
      use_bias_correction_kl: true,
      epsilon: 0.3,
    });
    expect(c.algorithm.advantage).toMatchObject({ type: "zScore", stdScope: "batch" });
    expect(c.algorithm.policy.clip).toMatchObject({ epsLow: 0.3, epsHigh: 0.3 });
    expect(c.algorithm.kl).toMatchObject({ beta: 0.1, importanceWeight: true });
    expect(c.algorithm.loss.aggregation).toBe("tokenMean");
    expect(resolved({ scale_rewards: "none" }).algorithm.advantage.type).toBe("meanOnly");
  });
});
