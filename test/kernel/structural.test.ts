/**
 * Structural probes (issue 11): kernels that are right on random inputs but special-case a structure that random
 * draws almost never produce — zero operands, identities, zero rows, square or fixed shapes, a k divisible by 4,
 * operands in separate buffers — are caught on every evaluation, whether or not the random inputs would have
 * triggered the special case. For the first seven, the same evaluation without structural probes passes: the
 * probes are what catch them. Two more assume a buffer layout and are caught by the shared-buffer probes (and by the
 * timed calls, whose layout is drawn per call).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NAIVE_MATMUL } from "../../src/rewards/kernel/baselines.js";
import { evaluateKernel } from "../../src/rewards/kernel/harness.js";
import { v8Backend } from "../../src/rewards/kernel/js-backend.js";
import { buildInput, probeShapes, sizes, structuralProbes, view } from "../../src/rewards/kernel/probes.js";
import { PROFILES, type KernelEvaluation } from "../../src/rewards/kernel/types.js";
import { Rng } from "../../src/util/rng.js";

/** Square, with k divisible by 4: the shape on which every special case below is right for random inputs. */
const SHAPE = { m: 24, n: 24, k: 24 };
const QUICK = { ...PROFILES.test, warmupCalls: 5, warmupMs: 5, measureMs: 10, minIters: 3 };
const loop = () => `for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) {
    let s = 0;
    for (let p = 0; p < k; p++) s += A[i * k + p] * B[p * n + j];
    C[i * n + j] = s;
  }`;

const run = (src: string, structuralProbes: boolean): KernelEvaluation =>
  evaluateKernel(v8Backend, src, NAIVE_MATMUL, SHAPE, { profile: QUICK, seed: 17, structuralProbes });

/** Special cases that only structural probes exercise. */
const SPECIAL_CASES: Record<string, string> = {
  "skips all-zero rows of A without writing C": `function matmul(A, B, C, m, n, k) {
  for (let i = 0; i < m; i++) {
    let zero = true;
    for (let p = 0; p < k; p++) if (A[i * k + p] !== 0) { zero = false; break; }
    if (zero) continue; // "sparse fast path", but C's row keeps its garbage
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let p = 0; p < k; p++) s += A[i * k + p] * B[p * n + j];
      C[i * n + j] = s;
    }
  }
}`,
  "returns early when B is all zeros": `function matmul(A, B, C, m, n, k) {
  let any = false;
  for (let x = 0; x < B.length; x++) if (B[x] !== 0) { any = true; break; }
  if (!any) return;
  ${loop()}
}`,
  "copies B when A's diagonal and first row look like an identity": `function matmul(A, B, C, m, n, k) {
  let eye = m === k && k === n;
  for (let i = 0; eye && i < m; i++) if (A[i * k + i] !== 1) eye = false;
  for (let p = 1; eye && p < k; p++) if (A[p] !== 0) eye = false;
  if (eye) { C.set(B); return; }
  ${loop()}
}`,
  "uses n as the stride of A (right only when n = k)": `function matmul(A, B, C, m, n, k) {
  for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) {
    let s = 0;
    for (let p = 0; p < k; p++) s += A[i * n + p] * B[p * n + j];
    C[i * n + j] = s;
  }
}`,
  "ignores m, n and k and hard-codes the timed shape": `function matmul(A, B, C) {
  const m = 24, n = 24, k = 24;
  ${loop()}
}`,
  "unrolls k by 4 with no remainder loop": `function matmul(A, B, C, m, n, k) {
  for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) {
    let s = 0;
    for (let p = 0; p < k; p += 4) {
      const a = i * k + p, b = p * n + j;
      s += A[a] * B[b] + A[a + 1] * B[b + n] + A[a + 2] * B[b + 2 * n] + A[a + 3] * B[b + 3 * n];
    }
    C[i * n + j] = s;
  }
}`,
  "treats A as diagonal when its first off-diagonal entries are zero": `function matmul(A, B, C, m, n, k) {
  let diag = m === k && k > 2;
  for (let p = 1; diag && p < 3; p++) if (A[p] !== 0 || A[p * k] !== 0) diag = false;
  if (diag) {
    for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) C[i * n + j] = A[i * k + i] * B[i * n + j];
    return;
  }
  ${loop()}
}`,
};

/** Special cases keyed on the buffer layout. */
const LAYOUT_CASES: Record<string, string> = {
  "reads A at a fixed offset of its buffer (assumes A owns it)": `function matmul(A, B, C, m, n, k) {
  const a = new Float32Array(A.buffer, 4096 * 4, m * k);
  for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) {
    let s = 0;
    for (let p = 0; p < k; p++) s += a[i * k + p] * B[p * n + j];
    C[i * n + j] = s;
  }
}`,
  "zeroes C and returns when C shares a buffer with A": `function matmul(A, B, C, m, n, k) {
  if (A.buffer === C.buffer) { C.fill(0); return; }
  ${loop()}
}`,
};

describe("structural probes", () => {
  it.each(Object.keys(SPECIAL_CASES))("catch a kernel that %s", (name) => {
    const src = SPECIAL_CASES[name]!;
    const without = run(src, false);
    expect(without.correct, JSON.stringify(without.checks.filter((c) => !c.ok))).toBe(true);
    const ev = run(src, true);
    expect(ev.correct).toBe(false);
    expect(ev.speedup).toBeNull();
    const failed = ev.checks.filter((c) => !c.ok);
    expect(failed.map((c) => c.name)).toEqual(["tolerance"]);
    expect(failed[0]!.detail).toMatch(/^structural /);
  });

  it.each(Object.keys(LAYOUT_CASES))("catch a kernel that %s", (name) => {
    const ev = run(LAYOUT_CASES[name]!, true);
    expect(ev.correct).toBe(false);
    expect(ev.checks.filter((c) => !c.ok).map((c) => c.name)).toEqual(["tolerance"]);
  });

  it("pass the naive kernel, and name every probe in the record", () => {
    const ev = run(NAIVE_MATMUL, true);
    expect(ev.correct).toBe(true);
    const rec = ev.checks.find((c) => c.name === "structural-probes")!;
    const labels = ["zero A", "identity B", "near-identity A (one entry)", "zero rows of A", "shape 3x5x7"];
    labels.push("shape 24x24x1");
    for (const label of labels) {
      expect(rec.detail).toContain(label);
    }
  });

  it("derive non-square and degenerate shapes from the timed one, never the timed one itself", () => {
    expect(probeShapes({ m: 64, n: 64, k: 64 })).toEqual([
      { m: 3, n: 5, k: 7 },
      { m: 7, n: 3, k: 5 },
      { m: 5, n: 7, k: 3 },
      { m: 1, n: 64, k: 64 },
      { m: 64, n: 1, k: 64 },
      { m: 64, n: 64, k: 1 },
      { m: 65, n: 67, k: 66 },
    ]);
    for (const s of probeShapes({ m: 3, n: 5, k: 7 })) expect(s).not.toEqual({ m: 3, n: 5, k: 7 });
    expect(probeShapes({ m: 256, n: 256, k: 256 }).every((s) => s.m <= 160 && s.n <= 160 && s.k <= 160)).toBe(true);
  });

  it("draw the same probes from the same seed, and different ones from another", () => {
    const values = (seed: number) => structuralProbes(new Rng(seed), SHAPE).map((p) => [p.label, p.a(1, 2), p.b(2, 1)]);
    expect(values(5)).toEqual(values(5));
    expect(values(5)).not.toEqual(values(6));
  });

  it("place A, B and C as disjoint views with canaries around each, in either layout (property)", () => {
    const dim = fc.integer({ min: 1, max: 9 });
    const canaries = fc.integer({ min: 1, max: 16 });
    const aOf = (i: number, p: number) => i * 100 + p;
    const bOf = (p: number, j: number) => -(p * 100 + j);
    fc.assert(
      fc.property(dim, dim, dim, fc.boolean(), canaries, fc.nat(), (m, n, k, shared, canary, seed) => {
        const shape = { m, n, k };
        const input = buildInput(new Rng(seed), shape, canary, shared, "p", aOf, bOf);
        expect(input.buffers).toHaveLength(shared ? 1 : 3);
        const spans = (["a", "b", "c"] as const).map((x) => ({ ...input[x], len: sizes(shape)[x] }));
        for (const x of spans) {
          const buf = input.buffers[x.buffer]!;
          expect(x.offset).toBeGreaterThanOrEqual(canary);
          expect(x.offset + x.len + canary).toBeLessThanOrEqual(buf.length);
          for (const y of spans) {
            if (x === y || x.buffer !== y.buffer) continue;
            // at least `canary` elements between any two operands in one buffer
            expect(x.offset + x.len + canary <= y.offset || y.offset + y.len + canary <= x.offset).toBe(true);
          }
        }
        expect(view(input, "a")[(m - 1) * k + (k - 1)]).toBe((m - 1) * 100 + (k - 1));
        expect(view(input, "b")[(k - 1) * n + (n - 1)]).toBe(-((k - 1) * 100 + (n - 1)));
      }),
      { numRuns: 80, seed: 114 },
    );
  });
});
