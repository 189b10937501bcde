/**
 * Timing noise is not paid as speed (issue 11): the naive kernel and disguised copies of it (renamed, while loops,
 * an arrow function, comments and dead code, `var` and swapped operands of the product) earn exactly 0 through the
 * reward, evaluation after evaluation, while kernels that really are faster are paid: the naive kernel against a
 * baseline that does 1.5x its work, and the register-blocked kernel against the naive one.
 *
 * These tests time real kernels on a shared machine. The "not paid" ones hold because of how the rule is built (a
 * bootstrap bound of the median over two baseline isolates, against a dead band), not because of a quiet machine,
 * so they have no retries. The rule errs towards not paying under heavy load (a wide interval), so the "paid" tests
 * measure longer and may retry.
 */
import { afterAll, describe, expect, it } from "vitest";
import { BLOCKED_MATMUL, NAIVE_MATMUL } from "../../src/rewards/kernel/baselines.js";
import { evaluateKernel } from "../../src/rewards/kernel/harness.js";
import { v8Backend } from "../../src/rewards/kernel/js-backend.js";
import { scoreKernel, type KernelGold } from "../../src/rewards/kernel/reward.js";
import { PROFILES } from "../../src/rewards/kernel/types.js";
import { closeSharedPool } from "../../src/rewards/sandbox/pool.js";

afterAll(() => closeSharedPool());

const GOLD: KernelGold = { m: 48, n: 48, k: 48, dtype: "float32", baseline: "naive" };
const fenced = (src: string) => "<think>same loop</think>\n```js\n" + src + "\n```";

/** The naive kernel in disguise: each computes exactly what NAIVE_MATMUL computes, in the same order. */
const DISGUISES: Record<string, string> = {
  renamed: `function matmul(X, Y, Z, rows, cols, inner) {
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      let acc = 0;
      for (let t = 0; t < inner; t++) acc += X[r * inner + t] * Y[t * cols + c];
      Z[r * cols + c] = acc;
    }
  }
}`,
  whileLoops: `function matmul(A, B, C, m, n, k) {
  let i = 0;
  while (i < m) {
    let j = 0;
    while (j < n) {
      let s = 0, p = 0;
      while (p < k) { s += A[i * k + p] * B[p * n + j]; p++; }
      C[i * n + j] = s;
      j++;
    }
    i++;
  }
}`,
  arrow: `const matmul = (A, B, C, m, n, k) => {
  for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) {
    let s = 0;
    for (let p = 0; p < k; p++) s += A[i * k + p] * B[p * n + j];
    C[i * n + j] = s;
  }
};`,
  deadCode: `// An optimised kernel (it is not).
const UNUSED = [1, 2, 3];
function helper(x) { return x * 2; }
function matmul(A, B, C, m, n, k) {
  /* blocking factor */ const BLOCK = 64;
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let p = 0; p < k; p++) s += A[i * k + p] * B[p * n + j];
      C[i * n + j] = s;
    }
  }
}`,
  varSwapped: `function matmul(A, B, C, m, n, k) {
  for (var i = 0; i < m; i++) {
    for (var j = 0; j < n; j++) {
      var s = 0;
      for (var p = 0; p < k; p++) s += B[p * n + j] * A[i * k + p];
      C[i * n + j] = s;
    }
  }
}`,
};

/** Scores `src` `count` times with distinct seeds (distinct seeds also bypass the memo). */
async function scores(src: string, count: number, seed0: number): Promise<number[]> {
  const out: number[] = [];
  for (let s = 0; s < count; s++) {
    const r = await scoreKernel(fenced(src), GOLD, { profile: "test", seed: seed0 + s });
    expect(r.terms.correct, String(r.info?.reason)).toBe(1);
    out.push(r.score!);
  }
  return out;
}

describe("noise is not paid", () => {
  it("the naive kernel earns exactly 0 over 20 evaluations", { timeout: 180_000 }, async () => {
    expect(await scores(NAIVE_MATMUL, 20, 1000)).toEqual(Array(20).fill(0));
  });

  it("a renamed copy of it earns exactly 0 over 20 evaluations", { timeout: 180_000 }, async () => {
    expect(await scores(DISGUISES.renamed!, 20, 2000)).toEqual(Array(20).fill(0));
  });

  const others = Object.keys(DISGUISES).filter((x) => x !== "renamed");
  it.each(others)("the disguise %s earns exactly 0 over 4 evaluations", { timeout: 120_000 }, async (name) => {
    expect(await scores(DISGUISES[name]!, 4, 3000)).toEqual([0, 0, 0, 0]);
  });
});

describe("real speed is still paid", () => {
  /** A baseline that does 1.5x the naive work: the naive loop, then the first half of the rows again. */
  const SLOW_BASELINE = NAIVE_MATMUL.replace(
    /\n}$/,
    `\n  for (let i = 0; i < m >> 1; i++) for (let j = 0; j < n; j++) {
    let s = 0;
    for (let p = 0; p < k; p++) s += A[i * k + p] * B[p * n + j];
    C[i * n + j] = s;
  }\n}`,
  );

  it("pays a kernel that does 2/3 of the baseline's work (a real 1.5x)", { timeout: 60_000, retry: 2 }, () => {
    expect(SLOW_BASELINE).not.toBe(NAIVE_MATMUL);
    for (const seed of [1, 2]) {
      const profile = { ...PROFILES.test, minIters: 60 };
      const ev = evaluateKernel(v8Backend, NAIVE_MATMUL, SLOW_BASELINE, GOLD, { profile, seed });
      expect(ev.correct).toBe(true);
      const s = ev.significance!;
      expect(s.verdict).toBe("faster");
      expect(s.lower).toBeGreaterThan(s.band);
      expect(ev.speedup!).toBeGreaterThan(1.2);
    }
  });

  let attempt = 0; // a retry needs a new seed, or the memoised result would come back
  it("pays the register-blocked kernel through the reward", { timeout: 60_000, retry: 2 }, async () => {
    const gold = { ...GOLD, m: 64, n: 64, k: 64 };
    const r = await scoreKernel(fenced(BLOCKED_MATMUL), gold, { profile: "test", seed: 5 + attempt++ });
    expect(r.info?.verdict).toBe("faster");
    expect(r.score!).toBeGreaterThan(0.1);
    expect(r.score).toBeCloseTo(Math.min(r.terms.speedup! - 1, 9), 12);
  });
});
