/**
 * Kernels that skip work on some calls earn nothing (issue 11, sandbox suite item 3). Every timed call's output is
 * verified, inputs come from a fresh seed per evaluation, and a skipped call's time is never clamped and averaged
 * in: it fails the evaluation. Seven variants: every other call, 3 calls in 100 at random, only after the number of
 * calls the probes use, only when the input changes after a run of repeats (the end of the JIT warm-up), only when
 * the operands share a buffer, half the rows on every fifth timed call, and the register-blocked kernel skipping
 * one timed call in seven (which would otherwise be paid about 2x).
 */
import { afterAll, describe, expect, it } from "vitest";
import { BLOCKED_MATMUL, NAIVE_MATMUL } from "../../src/rewards/kernel/baselines.js";
import { evaluateKernel } from "../../src/rewards/kernel/harness.js";
import { v8Backend } from "../../src/rewards/kernel/js-backend.js";
import { scoreKernel, type KernelGold } from "../../src/rewards/kernel/reward.js";
import { PROFILES, type KernelEvaluation } from "../../src/rewards/kernel/types.js";
import { closeSharedPool } from "../../src/rewards/sandbox/pool.js";

afterAll(() => closeSharedPool());

const SHAPE = { m: 32, n: 24, k: 20 };
const GOLD: KernelGold = { ...SHAPE, dtype: "float32", baseline: "naive" };
const honest = `for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) {
    let s = 0;
    for (let p = 0; p < k; p++) s += A[i * k + p] * B[p * n + j];
    C[i * n + j] = s;
  }`;
/** A kernel with a call counter that runs `skip` first and the honest loop unless `skip` returned. */
const skipper = (skip: string, prelude = "") => `let calls = 0;
${prelude}
function matmul(A, B, C, m, n, k) {
  calls++;
  ${skip}
  ${honest}
}`;

const run = (src: string, seed: number): KernelEvaluation =>
  evaluateKernel(v8Backend, src, NAIVE_MATMUL, SHAPE, { profile: PROFILES.test, seed });

function expectCaught(ev: KernelEvaluation, detail: RegExp = /./): void {
  expect(ev.correct).toBe(false);
  expect(ev.speedup).toBeNull();
  expect(ev.significance).toBeNull();
  const failed = ev.checks.filter((c) => !c.ok);
  expect(failed).toHaveLength(1);
  expect(["exact-probe", "tolerance"]).toContain(failed[0]!.name);
  expect(failed[0]!.detail).toMatch(detail);
}

const VARIANTS: Record<string, { src: string; caughtIn: RegExp }> = {
  "every other call": { src: skipper("if (calls % 2 === 0) return;"), caughtIn: /probe/ },
  // The probes take 3 + 3 + structural calls in their own realm; the timed realm then sees 40 warm-up calls first.
  "only after the calls the probes and warm-up use": {
    src: skipper("if (calls > 45 && calls % 9 === 0) return;"),
    caughtIn: /a timed call/,
  },
  "only when a fresh input follows a run of repeats (timing has begun)": {
    src: skipper(
      `const a0 = A[0]; if (a0 === last) repeats++; else { if (repeats > 10) timing = true; repeats = 0; }
  last = a0;
  if (timing && calls % 3 === 0) return;`,
      "let last = NaN, repeats = 0, timing = false;",
    ),
    caughtIn: /a timed call/,
  },
  "only when the operands share one buffer": {
    src: skipper("if (A.buffer === C.buffer && calls > 30) return;"),
    caughtIn: /./,
  },
  "half the rows on every fifth timed call": {
    src: skipper("if (calls > 45 && calls % 5 === 0) { m = m >> 1; }"),
    caughtIn: /a timed call/,
  },
  "the blocked kernel, skipping one timed call in seven": {
    src: BLOCKED_MATMUL.replace(
      "function matmul(A, B, C, m, n, k) {",
      "let calls = 0;\nfunction matmul(A, B, C, m, n, k) {\n  if (++calls > 45 && calls % 7 === 0) return;",
    ),
    caughtIn: /a timed call/,
  },
};

describe("skipping work on some calls", () => {
  it.each(Object.keys(VARIANTS))("catches a kernel that skips %s", (name) => {
    const v = VARIANTS[name]!;
    expect(v.src).toMatch(/return;|m = m >> 1/);
    expectCaught(run(v.src, 11), v.caughtIn);
  });

  it("never pays a kernel that skips 3 calls in 100 at random (caught, or honest: noise)", { timeout: 120_000 }, () => {
    const src = skipper("if (Math.random() < 0.03) return;");
    const evs = [21, 22, 23, 24, 25, 26].map((seed) => run(src, seed));
    for (const ev of evs) expect(ev.correct === false || ev.significance!.verdict !== "faster").toBe(true);
    // The realm's Math.random is seeded from the evaluation seed, so which seeds catch it is fixed; most do.
    expect(evs.filter((ev) => !ev.correct).length).toBeGreaterThanOrEqual(4);
  });

  it("scores a skipping kernel gateFailScore through the reward, with a fresh seed", { timeout: 60_000 }, async () => {
    const names = [
      "only after the calls the probes and warm-up use",
      "the blocked kernel, skipping one timed call in seven",
    ];
    for (const name of names) {
      const r = await scoreKernel("```js\n" + VARIANTS[name]!.src + "\n```", GOLD, { profile: "test" });
      expect(r.score).toBe(-1);
      expect(String(r.info?.reason)).toMatch(/^tolerance: a timed call/);
    }
  });
});
