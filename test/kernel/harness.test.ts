/**
 * Kernel harness (rewards spec §10): the honest naive kernel is noise (never paid), a register-blocked kernel is
 * faster, and every cheating kernel of §10.3/§10.4 fails a named gate (no speed credit). Timings use the short
 * `test` profile and the median of paired ratios, which is robust to scheduler stalls on a busy shared machine.
 */
import { describe, expect, it } from "vitest";
import { BLOCKED_MATMUL, NAIVE_MATMUL } from "../../src/rewards/kernel/baselines.js";
import { evaluateKernel, referenceMatmul } from "../../src/rewards/kernel/harness.js";
import { v8Backend } from "../../src/rewards/kernel/js-backend.js";
import { staticScreen } from "../../src/rewards/kernel/static-screen.js";
import { PROFILES, type KernelEvaluation } from "../../src/rewards/kernel/types.js";

const SMALL = { m: 24, n: 20, k: 16 };
const TIMED = { m: 64, n: 64, k: 64 };

function run(source: string, shape = SMALL, extra: Record<string, unknown> = {}): KernelEvaluation {
  return evaluateKernel(v8Backend, source, NAIVE_MATMUL, shape, {
    profile: { ...PROFILES.test, minIters: 30 },
    seed: 3,
    aggregate: "medianOfRatios",
    ...extra,
  });
}

/** Expects the evaluation to fail the gate `name` and to carry no speed credit. */
function expectGate(ev: KernelEvaluation, name: string): void {
  expect(ev.correct).toBe(false);
  expect(ev.speedup).toBeNull();
  expect(ev.infraError).toBeUndefined();
  const failed = ev.checks.filter((c) => !c.ok).map((c) => c.name);
  expect(failed).toEqual([name]);
}

const body = (inner: string) => `function matmul(A, B, C, m, n, k) {\n${inner}\n}`;
const honestLoop = `for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) { let s = 0; for (let p = 0; p < k; p++) s += A[i * k + p] * B[p * n + j]; C[i * n + j] = s; }`;

describe("kernel harness: speed", () => {
  // No speed thresholds (issue 20 item 11): the assertions are the pay rule's verdicts, whose dead band and bootstrap
  // bound absorb load, and work facts (every timed call verified). Retries cover a burst of load from other processes.
  it("calls the honest naive kernel noise (never paid), and verifies every timed call", { retry: 2 }, () => {
    const ev = run(NAIVE_MATMUL, TIMED);
    expect(ev.correct).toBe(true);
    expect(ev.significance!.verdict).toBe("noise");
    expect(ev.verifiedCalls).toBe(2 * ev.iterations); // two candidate isolates per iteration
    expect(ev.iterations).toBeGreaterThanOrEqual(30);
    expect(ev.checks.every((c) => c.ok)).toBe(true);
  });

  it("calls a register-blocked kernel faster", { retry: 2 }, () => {
    const ev = run(BLOCKED_MATMUL, TIMED);
    expect(ev.correct).toBe(true);
    expect(ev.significance!.verdict).toBe("faster");
    expect(ev.significance!.lower).toBeGreaterThan(ev.significance!.band);
  });

  it("matches a hand-computed float64 reference", () => {
    const a = new Float32Array([1, 2, 3, 4, 5, 6]); // 2×3
    const b = new Float32Array([7, 8, 9, 10, 11, 12]); // 3×2
    expect([...referenceMatmul(a, b, { m: 2, n: 2, k: 3 })]).toEqual([58, 64, 139, 154]);
  });
});

describe("kernel harness: every cheat fails a gate", () => {
  it("returns at once (§10.4 #1)", () => expectGate(run(body("")), "exact-probe"));

  it("writes only half of C (§10.4 #1)", () => {
    expectGate(
      run(
        body(
          `for (let i = 0; i < m >> 1; i++) for (let j = 0; j < n; j++) { let s = 0; for (let p = 0; p < k; p++) s += A[i * k + p] * B[p * n + j]; C[i * n + j] = s; }`,
        ),
      ),
      "exact-probe",
    );
  });

  it("serves stale cached results after the probes (§10.4 #2, spot checks #3)", () => {
    const src = `let calls = 0; let cache = null;
function matmul(A, B, C, m, n, k) {
  calls++;
  if (cache && calls > 12) { C.set(cache); return; }
  ${honestLoop}
  cache = C.slice();
}`;
    expectGate(run(src), "tolerance");
  });

  it("accumulates in reduced precision (§10.4 #3)", () => {
    const src = `const f = new Float32Array(1), u = new Uint32Array(f.buffer);
const bf16 = (x) => { f[0] = x; u[0] &= 0xffff0000; return f[0]; };
${body(`for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) { let s = 0; for (let p = 0; p < k; p++) s = bf16(s + A[i * k + p] * B[p * n + j]); C[i * n + j] = s; }`)}`;
    expectGate(run(src), "tolerance");
  });

  it("writes past the end of C (§10.4 #4)", () => {
    expectGate(run(body(`${honestLoop}\nnew Float32Array(C.buffer)[C.byteOffset / 4 + m * n] = 0;`)), "canaries");
  });

  it("writes into A's buffer outside its view (§10.4 #4)", () => {
    expectGate(run(body(`${honestLoop}\nnew Float32Array(A.buffer)[0] = 1;`)), "inputs-unchanged");
  });

  it("returns a new array instead of filling C (§10.4 #5)", () => {
    expectGate(
      run(
        body(
          `const out = new Float32Array(m * n); for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) { let s = 0; for (let p = 0; p < k; p++) s += A[i * k + p] * B[p * n + j]; out[i * n + j] = s; } return out;`,
        ),
      ),
      "exact-probe",
    );
  });

  it("returns a thenable (§10.4 #6)", () => {
    expectGate(run(body(`return Promise.resolve().then(() => { ${honestLoop} });`)), "synchronous");
  });

  it(
    "gains nothing by deferring work to a microtask (§10.4 #6: the drain is inside the timed call)",
    { retry: 2 },
    () => {
      const ev = run(body(`Promise.resolve().then(() => { ${honestLoop} });`), TIMED);
      // Every timed call's C was read back right after the timed region and verified: the work happened inside it.
      expect(ev.correct).toBe(true);
      expect(ev.verifiedCalls).toBe(2 * ev.iterations); // two candidate isolates per iteration
      expect(ev.significance!.verdict).not.toBe("faster");
    },
  );

  it("detects the {0,1} probe and takes a fast wrong path otherwise (§10.4 #7)", () => {
    const src =
      body(`let binary = true; for (let i = 0; i < A.length; i++) if (A[i] !== 0 && A[i] !== 1) { binary = false; break; }
if (!binary) { C.fill(0); return; }
${honestLoop}`);
    expectGate(run(src), "tolerance");
  });

  it("mutates B so that it does less work (§10.4 #8)", () => {
    expectGate(run(body(`${honestLoop}\nB.fill(0);`)), "inputs-unchanged");
  });

  it("finds no clock, timer or shared memory even through the Function constructor (§10.3 #7)", () => {
    // Names are split so that the static screen does not fail it first: this probes the runtime realm.
    const src = body(`const g = [].constructor.constructor("return this")();
const names = ["Da" + "te", "perfor" + "mance", "Shared" + "ArrayBuffer", "Ato" + "mics", "set" + "Timeout", "WebAs" + "sembly"];
if (!names.some((x) => g[x] !== undefined)) throw new Error("no clock");
${honestLoop}`);
    const ev = run(src);
    expectGate(ev, "runs");
    expect(ev.checks.at(-1)!.detail).toMatch(/no clock/);
  });

  it("cannot break the harness by clobbering its realm's globals (§10.3 #8)", () => {
    const src = `const g = [].constructor.constructor("return this")();
const F = Float32Array;
g.Float32Array = null; g.ArrayBuffer = null; g.Object = null;
${NAIVE_MATMUL}`;
    const ev = run(src);
    expect(ev.correct).toBe(true);
  });

  it("is stopped at the per-call limit (infinite loop)", () =>
    expectGate(run(body("while (true) {}")), "per-call-limit"));

  it("fails a kernel that throws, and one that defines no matmul", () => {
    expectGate(run(body("throw new Error('boom');")), "runs");
    expectGate(run("function notMatmul() {}"), "load");
  });

  it("fails the static screen on clocks, globals, Proxy and code loading (§10.3 #10)", () => {
    expectGate(run(body(`const t = Date.now(); ${honestLoop}`)), "static-screen");
    expect(staticScreen("return new Proxy(C, {})")).not.toEqual([]);
    expect(staticScreen("globalThis.x = 1")).not.toEqual([]);
    expect(staticScreen("import('fs')")).not.toEqual([]);
    expect(staticScreen("Float32Array.prototype.fill = null")).not.toEqual([]);
    expect(staticScreen("// Date.now() in a comment is fine\n" + NAIVE_MATMUL)).toEqual([]);
  });
});
