/**
 * The kernel rewards through the reward pool (spec §10.1): the naive gold completion passes every gate and earns
 * exactly 0 (noise), a cheat scores −1 (gateFailScore), a missing kernel scores −1, a malformed gold is unscorable, and the
 * matmul-kernel task wires `speed` (weight 1) and `correct` (weight 0, pass@k) to the same evaluation.
 */
import { afterAll, describe, expect, it } from "vitest";
import { closeSharedPool } from "../../src/rewards/sandbox/pool.js";
import { extractKernel, naiveKernelCompletion, scoreKernel, type KernelGold } from "../../src/rewards/kernel/reward.js";
import { evaluateKernel } from "../../src/rewards/kernel/harness.js";
import { v8Backend } from "../../src/rewards/kernel/js-backend.js";
import { NAIVE_MATMUL } from "../../src/rewards/kernel/baselines.js";
import { PROFILES } from "../../src/rewards/kernel/types.js";
import { createMatmulKernelTask } from "../../src/tasks/matmul-kernel.js";

afterAll(() => closeSharedPool());

const GOLD: KernelGold = { m: 32, n: 32, k: 32, dtype: "float32", baseline: "naive" };
const FAST = { profile: "test" as const, aggregate: "medianOfRatios" as const };

describe("kernel rewards", () => {
  let attempt = 0; // a retry needs a new seed, or the memoised result would come back
  it(
    "gives the naive gold completion every gate and a speed score of exactly 0 (noise is not paid)",
    { retry: 2 },
    async () => {
      const r = await scoreKernel(
        naiveKernelCompletion(),
        { ...GOLD, m: 64, n: 64, k: 64 },
        { ...FAST, seed: attempt++ },
      );
      expect(r.terms.correct).toBe(1);
      expect(r.score).toBe(0);
      expect(r.info?.verdict).toBe("noise");
      expect(r.info?.machine).toMatchObject({ backend: "v8-isolate" });
    },
  );

  it("draws a fresh input seed per evaluation unless one is given, and reports it", async () => {
    const a = await scoreKernel(naiveKernelCompletion(), GOLD, { ...FAST, lengthUnitChars: 999 });
    const b = await scoreKernel(naiveKernelCompletion(), GOLD, { ...FAST, lengthUnitChars: 998 });
    expect(typeof a.info?.seed).toBe("number");
    expect(a.info?.seed).not.toBe(b.info?.seed);
    expect((await scoreKernel(naiveKernelCompletion(), GOLD, { ...FAST, seed: 77 })).info?.seed).toBe(77);
  });

  it("scores a cheating kernel gateFailScore (−1) with the failed check named", async () => {
    const r = await scoreKernel("```js\nfunction matmul(A, B, C) {}\n```", GOLD, FAST);
    expect(r).toMatchObject({ score: -1, terms: { correct: 0, speedup: 0 } });
    expect(String(r.info?.reason)).toMatch(/^exact-probe/);
    expect(
      (await scoreKernel("```js\nfunction matmul(A, B, C) {}\n```", GOLD, { ...FAST, gateFailScore: -2 })).score,
    ).toBe(-2);
  });

  it("scores a completion without a kernel block −1, and never reads a kernel inside <think> (G3)", async () => {
    expect((await scoreKernel("I would write a loop.", GOLD, FAST)).score).toBe(-1);
    expect(extractKernel("<think>```js\nfunction matmul(){}\n```</think>no code")).toBeNull();
    expect(extractKernel("```js\nA\n```\n```js\nB\n```")).toBe("B\n"); // rightmost block (G5)
  });

  it("returns null for a malformed gold (G2)", async () => {
    expect((await scoreKernel(naiveKernelCompletion(), { ...GOLD, k: 0 }, FAST)).score).toBeNull();
    expect((await scoreKernel(naiveKernelCompletion(), { ...GOLD, baseline: "cublas" }, FAST)).score).toBeNull();
  });

  it("subtracts the named length penalty β · chars / unit", async () => {
    const r = await scoreKernel(naiveKernelCompletion(), GOLD, {
      ...FAST,
      lengthPenaltyCoef: 0.5,
      lengthUnitChars: 100,
    });
    const lp = NAIVE_MATMUL.length / 100 + 0.01; // the fenced block carries one trailing newline
    expect(r.terms.lengthPenalty).toBeCloseTo(lp, 12);
    const paid = r.info?.verdict === "noise" ? 0 : Math.min(Math.max(r.terms.speedup! - 1, -0.9), 9);
    expect(r.score).toBeCloseTo(paid - 0.5 * lp, 12);
  });

  it("grants WebAssembly only when the task allows it", () => {
    const src = `const W = [].constructor.constructor("return this")()["WebAs" + "sembly"];
if (!W) throw new Error("no wasm");
${NAIVE_MATMUL}`;
    const opts = { profile: PROFILES.test, seed: 1 };
    expect(evaluateKernel(v8Backend, src, NAIVE_MATMUL, GOLD, opts).checks.at(-1)!.detail).toMatch(/no wasm/);
    expect(evaluateKernel(v8Backend, src, NAIVE_MATMUL, GOLD, { ...opts, allowWasm: true }).correct).toBe(true);
  });
});

describe("matmul-kernel task", () => {
  const task = createMatmulKernelTask({ profile: "test" });

  it("generates deterministic shapes of at least 64·64·128 MACs with the naive gold kernel", () => {
    const train = task.generate("train", 30, 1);
    expect(task.generate("train", 30, 1)).toEqual(train);
    const testKeys = new Set(task.generate("test", 20, 1).map((e) => e.prompt));
    expect(train.filter((e) => testKeys.has(e.prompt))).toEqual([]);
    for (const e of train) {
      expect(e.gold.m * e.gold.n * e.gold.k).toBeGreaterThanOrEqual(64 * 64 * 128);
      expect(extractKernel(e.goldCompletion)).toContain("function matmul");
    }
  });

  it("scores the gold completion correct (the pass@k term) through the registry", async () => {
    const [e] = task.generate("test", 1, 2);
    const small = { ...e!, gold: GOLD };
    const r = await task.score(small, small.goldCompletion);
    expect(r.terms.correct).toBe(1);
    expect(task.correctTerm).toBe("correct");
    expect(r.score).toBeCloseTo(r.terms.speed!, 12);
  });
});
