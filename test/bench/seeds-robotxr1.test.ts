/**
 * The RobotxR1 seed system's pure parts (bench/seeds/lib/robotxr1-*.ts): the figures from hand-made job results,
 * the refusal of an RL and a control that began from different starts, the split audit (held-out paraphrases on a
 * track no training prompt names), the mpc-car options it relies on, and recipes/robotxr1.yaml matching the bench.
 */
import { describe, expect, it } from "vitest";
import { resolve } from "node:path";
import { auditSplits, seedFigures } from "../../bench/seeds/lib/robotxr1-metrics.js";
import type { RobotJobResult } from "../../bench/seeds/lib/robotxr1-job.js";
import { FULL, MODEL, TASK_OPTIONS, robotRecipe } from "../../bench/seeds/lib/robotxr1-settings.js";
import robotxr1 from "../../bench/seeds/robotxr1.js";
import { getTask } from "../../src/tasks/index.js";
import { loadRecipe } from "../../src/trainer/recipe.js";

const pass = (t0: number, t03: number, t06: number, t1: number) => ({ T0: t0, "T0.3": t03, "T0.6": t06, T1: t1 });

const rl: RobotJobResult = {
  kind: "rl",
  seed: 3,
  start: pass(0.3, 0.4, 0.35, 0.2), // best at T0.3 (0.4)
  final: pass(0.5, 0.55, 0.7, 0.4), // at T0.3: 0.55; its own best 0.7
  quantized: { decoding: "T0.3", q8_0: 0.5, f16: 0.55, q8MaxAbsError: 0.01 },
  startHash: "abc",
  seconds: 1,
};
const control: RobotJobResult = {
  kind: "control",
  seed: 3,
  final: pass(0.1, 0.3, 0.3, 0.1),
  startHash: "abc",
  seconds: 1,
};

describe("robotxr1 figures", () => {
  it("gains at the start's best decoding, best vs best, and the quantisation drops (hand-computed)", () => {
    const f = seedFigures(rl, control);
    expect(f.decoding).toBe("T0.3");
    expect(f.startSuccess).toBeCloseTo(0.4);
    expect(f.rlSuccess).toBeCloseTo(0.55);
    expect(f.successGain).toBeCloseTo(0.15); // 0.55 − 0.4
    expect(f.controlGain).toBeCloseTo(-0.1); // 0.3 − 0.4
    expect(f.bestVsBest).toBeCloseTo(0.3); // 0.7 − 0.4
    expect(f.q8Drop).toBeCloseTo(0.05); // 0.55 − 0.5
    expect(f.f16Drop).toBeCloseTo(0);
  });

  it("refuses arms from different starts, a missing evaluation, or quantisation at another decoding", () => {
    expect(() => seedFigures(rl, { ...control, startHash: "abd" })).toThrow(/different starts/);
    expect(() => seedFigures({ ...rl, quantized: undefined }, control)).toThrow(/lacks its evaluations/);
    expect(() => seedFigures({ ...rl, quantized: { ...rl.quantized!, decoding: "T0" } }, control)).toThrow(
      /quantised at T0/,
    );
  });
});

describe("robotxr1 split audit", () => {
  it("the bench's task options: test asks only held-out paraphrases, on the F track", () => {
    const a = auditSplits(TASK_OPTIONS, 400, FULL.evalExamples);
    expect(a).toMatchObject({ trainTracks: ["circular"], testTracks: ["F-shaped"], shared: 0, heldOutPerBehaviour: 6 });
    // 4 behaviours × 16 + 8 speeds × 16 train instructions; 12 × 6 held out, each asked once in the 72 test prompts
    expect(a.trainInstructions).toBe(12 * 16);
    expect(a.testInstructions).toBe(72);
  });

  it("without held-out paraphrases the audit sees every test instruction in training (so it can fail)", () => {
    const a = auditSplits({ ...TASK_OPTIONS, heldOutParaphrases: 0 }, 600, 264);
    expect(a.shared).toBe(264);
  });

  it("brief prompts are short and their gold answers still score full success", async () => {
    const task = getTask("mpc-car", TASK_OPTIONS);
    const exs = task.generate("test", 72, 0);
    expect(Math.max(...exs.map((e) => e.prompt.length))).toBeLessThanOrEqual(MODEL.maxSeqLen - FULL.maxTokens);
    expect(Math.max(...exs.map((e) => e.goldCompletion.length))).toBeLessThanOrEqual(FULL.maxTokens);
    const ex = exs.find((e) => e.gold.case === "racingLine")!;
    expect(ex.goldCompletion).toBe(
      '<reasoning>racing line</reasoning><answer>new_mpc_params = {"qv": 20, "qn": 100, "qalpha": 2.5, "qddelta": 0.025}</answer>',
    );
    expect((await task.score(ex, ex.goldCompletion)).terms.improved).toBe(1);
  });
});

describe("recipes/robotxr1.yaml", () => {
  it("loads, and its LoRA, task, SFT and RL fields are the bench's", () => {
    const y = loadRecipe(resolve(import.meta.dirname, "../../recipes/robotxr1.yaml"));
    const b = robotRecipe(FULL, { name: "x", outDir: "runs", seed: 0, base: "/base" });
    expect(y.lora).toEqual(b.lora);
    expect(y.task).toEqual(b.task);
    expect(y.sft).toEqual(b.sft);
    expect(y.algorithm).toEqual(b.algorithm);
    expect({ ...y.train }).toEqual({ ...b.train });
    expect(y.sampler).toEqual(b.sampler);
    expect(y.model).toEqual(MODEL); // the bench's base has this shape (the bench loads it as a checkpoint)
  });

  it("the system is registered under its name with a claim", () => {
    expect(robotxr1.name).toBe("robotxr1");
    expect(robotxr1.claim.length).toBeGreaterThan(20);
  });
});
