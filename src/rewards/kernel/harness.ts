/**
 * The kernel timing and checking protocol (rewards spec §10.2–10.3, after `deepreinforce-ai/CUDA-L2`
 * `benchmarking_offline.py`, `zero_one_correctness_check.py` and KernelBench's checks). Backend-neutral.
 *
 * Order of work for one candidate:
 * 1. static screen (#10); load candidate and baseline into their own fresh realms (#8);
 * 2. exact probe: {0,1} inputs, output must equal the float64 reference exactly (#1);
 * 3. tolerance probe: normal inputs, allclose(rtol 1e-4, atol 1e-5·√k) (#2);
 * 4. warm-up, then timed iterations: fresh inputs per iteration, identical copies for both kernels, C pre-filled
 *    with random values, canaries around every operand (#4), order [baseline, candidate] shuffled each iteration,
 *    inputs checked unchanged after every call (#5), a random share (≥ 5%) of timed iterations spot-checked with
 *    the tolerance rule (#3), a returned thenable fails (#6); per-call limit 20× the baseline median (or 2 s before
 *    it is known).
 * Times are measured by the backend's trusted clock around one synchronous call; the median cost of an empty call
 * through the same path is subtracted from both kernels' times. S is the mean over paired iterations of
 * baseline time / candidate time (paper eq. 2); "ratioOfMeans" (CUDA-L2 code) and "medianOfRatios" are options.
 * Departure: above `capSpeedup` the run is flagged `suspicious` and capped, but not re-timed (no server mode yet).
 */
import { createHash } from "node:crypto";
import { Rng } from "../../util/rng.js";
import { staticScreen } from "./static-screen.js";
import type { CheckRecord, KernelBackend, KernelEvaluation, LoadedKernel, MatmulShape, TimingProfile } from "./types.js";

/** Options of one evaluation. */
export interface HarnessOptions {
  profile: TimingProfile;
  seed: number;
  aggregate: "meanOfRatios" | "ratioOfMeans" | "medianOfRatios";
  /** Share of timed iterations also checked for correctness (≥ 0.05). */
  spotCheckRate: number;
  capSpeedup: number;
  allowWasm: boolean;
  memoryMb: number;
  /** Canary elements on each side of every operand (≥ 4096 in the spec). */
  canary: number;
  rtol: number;
  /** atol = atolScale · √k. */
  atolScale: number;
}

/** Spec defaults (§10). */
export const DEFAULT_HARNESS: Omit<HarnessOptions, "profile" | "seed"> = {
  aggregate: "meanOfRatios",
  spotCheckRate: 0.1,
  capSpeedup: 10,
  allowWasm: false,
  memoryMb: 256,
  canary: 4096,
  rtol: 1e-4,
  atolScale: 1e-5,
};

class GateFailure extends Error {}

/** Float64 reference product of float32 inputs. */
export function referenceMatmul(a: Float32Array, b: Float32Array, { m, n, k }: MatmulShape): Float64Array {
  const c = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let p = 0; p < k; p++) {
      const x = a[i * k + p]!;
      if (x === 0) continue;
      const row = p * n;
      for (let j = 0; j < n; j++) c[i * n + j] += x * b[row + j]!;
    }
  }
  return c;
}

type Fill = "binary" | "normal";

/** One iteration's harness-owned data: full buffers (canaries + operand + canaries) and private copies. */
interface Iteration {
  a: Float32Array;
  b: Float32Array;
  c: Float32Array;
}

function sizeOf(s: MatmulShape) {
  return { a: s.m * s.k, b: s.k * s.n, c: s.m * s.n };
}

function makeIteration(rng: Rng, shape: MatmulShape, fill: Fill, canary: number): Iteration {
  const sz = sizeOf(shape);
  const buf = (len: number, body: () => number) => {
    const x = new Float32Array(len + 2 * canary);
    for (let i = 0; i < x.length; i++) x[i] = i >= canary && i < canary + len ? body() : (rng.nextU32() - 2147483648) / 1024;
    return x;
  };
  const value = fill === "binary" ? () => rng.int(2) : () => rng.normal();
  return { a: buf(sz.a, value), b: buf(sz.b, value), c: buf(sz.c, () => rng.normal() * 7 + 3) };
}

function firstDiff(x: Float32Array, y: Float32Array, from: number, to: number): number {
  if (x.length !== y.length) return -2;
  for (let i = from; i < to; i++) if (!Object.is(x[i], y[i])) return i;
  return -1;
}

/** Checks one call's read-back against the iteration's private copies; throws GateFailure naming the check. */
function checkBuffers(
  it: Iteration,
  out: { a: Float32Array; b: Float32Array; c: Float32Array },
  shape: MatmulShape,
  o: HarnessOptions,
  mode: "exact" | "tolerance" | "none",
): void {
  const sz = sizeOf(shape);
  const cv = o.canary;
  if (firstDiff(it.a, out.a, 0, it.a.length) !== -1) throw new GateFailure("inputs-unchanged: A was modified (view or canaries)");
  if (firstDiff(it.b, out.b, 0, it.b.length) !== -1) throw new GateFailure("inputs-unchanged: B was modified (view or canaries)");
  if (out.c.length !== it.c.length) throw new GateFailure("canaries: C's buffer changed size");
  if (firstDiff(it.c, out.c, 0, cv) !== -1 || firstDiff(it.c, out.c, cv + sz.c, it.c.length) !== -1) {
    throw new GateFailure("canaries: a write outside C");
  }
  if (mode === "none") return;
  const ref = referenceMatmul(it.a.subarray(cv, cv + sz.a), it.b.subarray(cv, cv + sz.b), shape);
  const atol = o.atolScale * Math.sqrt(shape.k);
  for (let i = 0; i < sz.c; i++) {
    const got = out.c[cv + i]!;
    const want = ref[i]!;
    const ok = mode === "exact" ? got === want : Math.abs(got - want) <= atol + o.rtol * Math.abs(want);
    if (!ok) throw new GateFailure(`${mode === "exact" ? "exact-probe" : "tolerance"}: C[${i}] = ${got}, reference ${want}`);
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((p, q) => p - q);
  const h = s.length >> 1;
  return s.length % 2 ? s[h]! : (s[h - 1]! + s[h]!) / 2;
}

/** Evaluates a candidate kernel against a baseline on one backend. Never throws for anything the candidate does. */
export function evaluateKernel(
  backend: KernelBackend,
  candidateSource: string,
  baselineSource: string,
  shape: MatmulShape,
  opts: Partial<HarnessOptions> & { profile: TimingProfile; seed: number },
): KernelEvaluation {
  const o: HarnessOptions = { ...DEFAULT_HARNESS, ...opts };
  const rng = new Rng(o.seed);
  const checks: CheckRecord[] = [];
  const ev: KernelEvaluation = {
    correct: false,
    speedup: null,
    ci95: null,
    checks,
    iterations: 0,
    spotChecks: 0,
    baselineMedianMs: null,
    candidateMedianMs: null,
    overheadMs: null,
    suspicious: false,
    machine: { ...backend.describe(), kernelSha256: createHash("sha256").update(candidateSource).digest("hex").slice(0, 16) },
  };
  const screen = staticScreen(candidateSource, { allowWasm: o.allowWasm });
  checks.push({ name: "static-screen", ok: screen.length === 0, ...(screen.length ? { detail: screen.join("; ") } : {}) });
  if (screen.length) return ev;

  let baseline: LoadedKernel;
  try {
    baseline = backend.load(baselineSource, shape, { seed: o.seed, allowWasm: false, memoryMb: o.memoryMb });
  } catch (err) {
    return { ...ev, infraError: `baseline failed to load: ${String(err)}` };
  }
  let cand: LoadedKernel | null = null;
  try {
    try {
      cand = backend.load(candidateSource, shape, { seed: o.seed + 1, allowWasm: o.allowWasm, memoryMb: o.memoryMb });
    } catch (err) {
      throw new GateFailure(`load: ${err instanceof Error ? err.message : String(err)}`);
    }
    runProtocol(baseline, cand, shape, o, rng, ev);
    ev.correct = true;
  } catch (err) {
    if (err instanceof GateFailure) {
      const [name, ...rest] = err.message.split(": ");
      checks.push({ name: name!, ok: false, detail: rest.join(": ") });
    } else if (err instanceof InfraFailure) {
      ev.infraError = err.message;
    } else {
      checks.push({ name: "harness", ok: false, detail: err instanceof Error ? err.message : String(err) });
    }
    ev.speedup = null;
    ev.ci95 = null;
  } finally {
    baseline.dispose();
    cand?.dispose();
  }
  return ev;
}

class InfraFailure extends Error {}

/** One call of `kernel` on `it`: place, timed call, read back. */
function callOnce(kernel: LoadedKernel, it: Iteration, o: HarnessOptions, limitMs: number, who: "candidate" | "baseline") {
  kernel.place({ a: it.a, b: it.b, c: it.c, offset: o.canary });
  const t = kernel.timedCall(limitMs);
  if (t.error) {
    if (who === "baseline") throw new InfraFailure(`the baseline failed: ${t.error}`);
    throw new GateFailure(`${/timed out/i.test(t.error) ? "per-call-limit" : "runs"}: ${t.error}`);
  }
  if (t.thenable) throw new GateFailure("synchronous: the kernel returned a thenable");
  return { ns: t.ns, out: kernel.readBack() };
}

function runProtocol(baseline: LoadedKernel, cand: LoadedKernel, shape: MatmulShape, o: HarnessOptions, rng: Rng, ev: KernelEvaluation): void {
  const p = o.profile;
  const pass = (name: string, detail?: string) => ev.checks.push({ name, ok: true, ...(detail ? { detail } : {}) });
  // 1-2. Probes (candidate only; the baseline is checked once so a broken baseline is an infrastructure error).
  const first = makeIteration(rng, shape, "normal", o.canary);
  try {
    checkBuffers(first, callOnce(baseline, first, o, 2000, "baseline").out, shape, o, "tolerance");
  } catch (err) {
    throw new InfraFailure(`the baseline is wrong: ${err instanceof Error ? err.message : String(err)}`);
  }
  for (let i = 0; i < p.exactIters; i++) {
    const it = makeIteration(rng, shape, "binary", o.canary);
    checkBuffers(it, callOnce(cand, it, o, 2000, "candidate").out, shape, o, "exact");
  }
  pass("exact-probe", `${p.exactIters} iterations`);
  for (let i = 0; i < p.toleranceIters; i++) {
    const it = makeIteration(rng, shape, "normal", o.canary);
    checkBuffers(it, callOnce(cand, it, o, 2000, "candidate").out, shape, o, "tolerance");
  }
  pass("tolerance-probe", `${p.toleranceIters} iterations, rtol ${o.rtol}, atol ${o.atolScale}·√k`);

  // 3-4. JIT warm-up (same input, back to back), then timed warm-up and measurement, interleaved in shuffled order
  // with spot checks.
  const jit = makeIteration(rng, shape, "normal", o.canary);
  for (const [who, kernel] of [["baseline", baseline], ["candidate", cand]] as const) {
    kernel.place({ a: jit.a, b: jit.b, c: jit.c, offset: o.canary });
    for (let i = 0; i < p.warmupCalls; i++) {
      const t = kernel.timedCall(2000);
      if (t.error && who === "baseline") throw new InfraFailure(`the baseline failed: ${t.error}`);
      if (t.error) throw new GateFailure(`${/timed out/i.test(t.error) ? "per-call-limit" : "runs"}: ${t.error}`);
      if (t.thenable) throw new GateFailure("synchronous: the kernel returned a thenable");
    }
  }
  const overhead: number[] = [];
  for (let i = 0; i < 64; i++) overhead.push(baseline.timedNoop(), cand.timedNoop());
  const overheadNs = median(overhead);
  ev.overheadMs = overheadNs / 1e6;
  let limitMs = 2000;
  const tb: number[] = [];
  const tc: number[] = [];
  const phase = (ms: number, minIters: number, maxIters: number, record: boolean) => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < maxIters; i++) {
      if (i >= minIters && Number(process.hrtime.bigint() - start) / 1e6 >= ms) break;
      const it = makeIteration(rng, shape, "normal", o.canary);
      const spot = rng.random() < o.spotCheckRate;
      const order = rng.random() < 0.5 ? (["baseline", "candidate"] as const) : (["candidate", "baseline"] as const);
      let b = 0;
      let c = 0;
      for (const who of order) {
        const r = callOnce(who === "baseline" ? baseline : cand, it, o, who === "baseline" ? 2000 : limitMs, who);
        if (who === "baseline") b = r.ns;
        else {
          c = r.ns;
          checkBuffers(it, r.out, shape, o, spot ? "tolerance" : "none");
        }
      }
      if (record) {
        tb.push(Math.max(b - overheadNs, 1));
        tc.push(Math.max(c - overheadNs, 1));
        if (spot) ev.spotChecks++;
      }
    }
  };
  phase(p.warmupMs, 2, p.maxIters, true);
  // The 500 ms floor keeps a scheduler stall on a busy shared machine from failing an honest kernel.
  limitMs = Math.max(500, (20 * median(tb)) / 1e6);
  tb.length = 0;
  tc.length = 0;
  ev.spotChecks = 0;
  phase(p.measureMs, p.minIters, p.maxIters, true);
  // At least one spot check per evaluation, on a fresh timed-style iteration.
  if (ev.spotChecks === 0) {
    const it = makeIteration(rng, shape, "normal", o.canary);
    checkBuffers(it, callOnce(cand, it, o, limitMs, "candidate").out, shape, o, "tolerance");
    ev.spotChecks = 1;
  }
  pass("spot-checks", `${ev.spotChecks} of ${tc.length} timed iterations`);
  pass("canaries", `${o.canary} elements each side`);
  pass("inputs-unchanged");
  pass("no-aliasing", "A, B and C are separate harness-owned buffers");
  pass("plain-output", "the return value is ignored; only the harness-owned Float32Array C is read");
  pass("synchronous");

  const ratios = tb.map((b, i) => b / tc[i]!);
  const mean = ratios.reduce((s, r) => s + r, 0) / ratios.length;
  const sd = Math.sqrt(ratios.reduce((s, r) => s + (r - mean) ** 2, 0) / Math.max(1, ratios.length - 1));
  const half = (1.96 * sd) / Math.sqrt(ratios.length);
  const S =
    o.aggregate === "meanOfRatios"
      ? mean
      : o.aggregate === "medianOfRatios"
        ? median(ratios)
        : tb.reduce((s, x) => s + x, 0) / tc.reduce((s, x) => s + x, 0);
  ev.iterations = ratios.length;
  ev.speedup = S;
  ev.ci95 = [mean - half, mean + half];
  ev.baselineMedianMs = median(tb) / 1e6;
  ev.candidateMedianMs = median(tc) / 1e6;
  ev.suspicious = S > o.capSpeedup || median(tc) < 1000;
}
