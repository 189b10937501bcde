/**
 * The kernel timing and checking protocol (rewards spec §10.2–10.3, after `deepreinforce-ai/CUDA-L2`
 * `benchmarking_offline.py`, `zero_one_correctness_check.py` and KernelBench's checks; issue 11). Backend-neutral.
 *
 * Order of work for one candidate:
 * 1. static screen (#10); load the baseline, a control (a second baseline) and the candidate twice into their own
 *    fresh realms (#8), each realm's Math.random seeded by a one-way hash of the evaluation seed;
 * 2. exact probe: {0,1} inputs, output must equal the float64 reference exactly (#1);
 * 3. tolerance probe: normal inputs, allclose(rtol 1e-4, atol 1e-5·√k) (#2);
 * 4. structural probes (probes.ts): zero, identity, near-identity, sparse and diagonal operands, non-square and
 *    degenerate shapes, operands sharing one buffer — each checked with the tolerance rule;
 * 5. warm-up, then timed iterations: fresh inputs per iteration from a stream keyed by SHA-256 of the evaluation
 *    seed and the iteration (so no kernel can predict the next input from the last), identical copies for all three
 *    kernels, C pre-filled with garbage, canaries around every operand (#4), a random layout, order [baseline,
 *    control, candidate, candidate2] shuffled each iteration. EVERY timed candidate call is verified afterwards: inputs and
 *    canaries unchanged (#5), C within tolerance of the reference (#3: the spot-check rate is 100%); a returned
 *    thenable fails (#6); per-call limit 20× the baseline median (or 2 s before it is known).
 * Times are measured by the backend's trusted clock around one synchronous call; the median cost of an empty call
 * through the same path is subtracted. Nothing is clamped: a candidate call no slower than an empty call flags the
 * run `suspicious`. S is the mean over paired iterations of baseline time / candidate time (paper eq. 2; the candidate time is the mean of its two isolates' calls);
 * "ratioOfMeans" (CUDA-L2 code) and "medianOfRatios" are options. Whether S is paid is decided by the pay rule of
 * significance.ts. Departure: above `capSpeedup` the run is flagged `suspicious` (and not paid), not re-timed.
 */
import { createHash } from "node:crypto";
import { Rng } from "../../util/rng.js";
import { randomInput, referenceMatmul, sizes, structuralInputs, view, type CallInput } from "./probes.js";
import { DEFAULT_SIGNIFICANCE, decideSpeedup, median, type SignificanceOptions } from "./significance.js";
import { staticScreen } from "./static-screen.js";
import type {
  CheckRecord,
  KernelBackend,
  KernelEvaluation,
  LoadedKernel,
  MatmulShape,
  TimingProfile,
} from "./types.js";

export { referenceMatmul } from "./probes.js";

/** Options of one evaluation. */
export interface HarnessOptions {
  profile: TimingProfile;
  /** Evaluation seed: inputs, layouts, call order, realm seeds and the bootstrap all derive from it. */
  seed: number;
  aggregate: "meanOfRatios" | "ratioOfMeans" | "medianOfRatios";
  capSpeedup: number;
  allowWasm: boolean;
  memoryMb: number;
  /** Canary elements on each side of every operand (≥ 4096 in the spec). */
  canary: number;
  rtol: number;
  /** atol = atolScale · √k. */
  atolScale: number;
  /** Run the structural probes (probes.ts). */
  structuralProbes: boolean;
  /** The pay rule's parameters. */
  significance: SignificanceOptions;
}

/** Spec defaults (§10). */
export const DEFAULT_HARNESS: Omit<HarnessOptions, "profile" | "seed"> = {
  aggregate: "medianOfRatios",
  capSpeedup: 10,
  allowWasm: false,
  memoryMb: 256,
  canary: 4096,
  rtol: 1e-4,
  atolScale: 1e-5,
  structuralProbes: true,
  significance: DEFAULT_SIGNIFICANCE,
};

class GateFailure extends Error {}
class InfraFailure extends Error {}

/** A 32-bit seed derived one-way from the evaluation seed and a label (SHA-256). */
export function deriveSeed(seed: number, label: string): number {
  return createHash("sha256").update(`rlvr-kernel:${seed}:${label}`).digest().readUInt32LE(0);
}

/** Throws GateFailure naming the first index (if any) where `x` and `y` differ outside [skipFrom, skipTo). */
function firstDiff(x: Float32Array, y: Float32Array, skipFrom: number, skipTo: number): number {
  for (let i = 0; i < x.length; i++) {
    if (i === skipFrom) i = skipTo;
    if (i < x.length && !Object.is(x[i], y[i])) return i;
  }
  return -1;
}

/**
 * Checks one call's read-back against the input (the harness's private copy): nothing outside C's view changed,
 * and, unless `mode` is "none", C matches the float64 reference. Throws GateFailure naming the check.
 */
function checkCall(
  input: CallInput,
  out: Float32Array[],
  o: HarnessOptions,
  mode: "exact" | "tolerance" | "none",
  ref?: Float64Array,
): void {
  if (out.length !== input.buffers.length) throw new GateFailure("canaries: the buffers changed");
  const c = input.c;
  for (let bi = 0; bi < input.buffers.length; bi++) {
    const orig = input.buffers[bi]!;
    const got = out[bi]!;
    if (got.length !== orig.length) throw new GateFailure("canaries: a buffer changed size");
    const holdsC = c.buffer === bi;
    const d = holdsC ? firstDiff(orig, got, c.offset, c.offset + sizes(input.shape).c) : firstDiff(orig, got, -1, -1);
    if (d === -1) continue;
    for (const x of ["a", "b"] as const) {
      const r = input[x];
      const inView = r.buffer === bi && d >= r.offset && d < r.offset + sizes(input.shape)[x];
      if (inView || (r.buffer === bi && !holdsC)) {
        throw new GateFailure(`inputs-unchanged: ${x.toUpperCase()} was modified (view or canaries) in ${input.label}`);
      }
    }
    throw new GateFailure(`canaries: a write outside C in ${input.label}`);
  }
  if (mode === "none") return;
  const want = ref ?? referenceMatmul(view(input, "a"), view(input, "b"), input.shape);
  const got = view(input, "c", out);
  const atol = o.atolScale * Math.sqrt(input.shape.k);
  for (let i = 0; i < want.length; i++) {
    const g = got[i]!;
    const w = want[i]!;
    const ok = mode === "exact" ? g === w : Math.abs(g - w) <= atol + o.rtol * Math.abs(w);
    if (!ok) {
      const gate = mode === "exact" ? "exact-probe" : "tolerance";
      throw new GateFailure(`${gate}: ${input.label}: C[${i}] = ${g}, reference ${w}`);
    }
  }
}

/** Evaluates a candidate kernel against a baseline on one backend. Never throws for anything the candidate does. */
export function evaluateKernel(
  backend: KernelBackend,
  candidateSource: string,
  baselineSource: string,
  shape: MatmulShape,
  opts: Partial<HarnessOptions> & { profile: TimingProfile; seed: number },
): KernelEvaluation {
  const significance = { ...DEFAULT_SIGNIFICANCE, ...opts.significance };
  const o: HarnessOptions = { ...DEFAULT_HARNESS, ...opts, significance };
  const checks: CheckRecord[] = [];
  const ev: KernelEvaluation = {
    correct: false,
    speedup: null,
    ci95: null,
    checks,
    iterations: 0,
    verifiedCalls: 0,
    significance: null,
    seed: o.seed,
    baselineMedianMs: null,
    candidateMedianMs: null,
    overheadMs: null,
    suspicious: false,
    suspiciousReasons: [],
    machine: {
      ...backend.describe(),
      kernelSha256: createHash("sha256").update(candidateSource).digest("hex").slice(0, 16),
    },
  };
  const screen = staticScreen(candidateSource, { allowWasm: o.allowWasm });
  const screenDetail = screen.length ? { detail: screen.join("; ") } : {};
  checks.push({ name: "static-screen", ok: screen.length === 0, ...screenDetail });
  if (screen.length) return ev;

  const loaded: LoadedKernel[] = [];
  const load = (source: string, who: string, allowWasm: boolean) => {
    const k = backend.load(source, { seed: deriveSeed(o.seed, `realm:${who}`), allowWasm, memoryMb: o.memoryMb });
    loaded.push(k);
    return k;
  };
  try {
    let baseline: LoadedKernel;
    let control: LoadedKernel;
    try {
      baseline = load(baselineSource, "baseline", false);
      control = load(baselineSource, "control", false);
    } catch (err) {
      throw new InfraFailure(`baseline failed to load: ${String(err)}`);
    }
    const loadCandidate = (who: string) => {
      try {
        return load(candidateSource, who, o.allowWasm);
      } catch (err) {
        throw new GateFailure(`load: ${err instanceof Error ? err.message : String(err)}`);
      }
    };
    runProtocol({ baseline, control, loadCandidate }, shape, o, ev);
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
    ev.significance = null;
  } finally {
    for (const k of loaded) k.dispose();
  }
  return ev;
}

/** The four timed isolates: two copies of the baseline and two of the candidate (significance.ts says why). */
type Who = "baseline" | "control" | "candidate" | "candidate2";
const isCandidate = (who: Who) => who === "candidate" || who === "candidate2";

/** One timed call of `kernel` on `input`: place (untimed), call (timed), and for the candidate a read-back. */
function callOnce(
  kernel: LoadedKernel,
  input: CallInput,
  limitMs: number,
  who: Who,
): { ns: number; out: Float32Array[] | null } {
  kernel.place(input);
  const t = kernel.timedCall(limitMs);
  if (!isCandidate(who)) {
    if (t.error) throw new InfraFailure(`the ${who} failed: ${t.error}`);
    return { ns: t.ns, out: null };
  }
  if (t.error) throw new GateFailure(`${/timed out/i.test(t.error) ? "per-call-limit" : "runs"}: ${t.error}`);
  if (t.thenable) throw new GateFailure("synchronous: the kernel returned a thenable");
  return { ns: t.ns, out: kernel.readBack() };
}

interface Kernels {
  baseline: LoadedKernel;
  control: LoadedKernel;
  /** Loads the candidate into a fresh realm (one for the probes, one for timing). */
  loadCandidate: (who: string) => LoadedKernel;
}

function runProtocol(k: Kernels, shape: MatmulShape, o: HarnessOptions, ev: KernelEvaluation): void {
  const p = o.profile;
  const rngFor = (label: string) => new Rng(deriveSeed(o.seed, label));
  const pass = (name: string, detail?: string) => ev.checks.push({ name, ok: true, ...(detail ? { detail } : {}) });
  // 1. The baseline and the control are checked once, so that a broken baseline is an infrastructure error.
  const first = randomInput(rngFor("baseline-check"), shape, "normal", o.canary, "the baseline check");
  for (const [who, kernel] of [
    ["baseline", k.baseline],
    ["control", k.control],
  ] as const) {
    kernel.place(first);
    const t = kernel.timedCall(2000);
    try {
      if (t.error) throw new Error(t.error);
      checkCall(first, kernel.readBack(), o, "tolerance");
    } catch (err) {
      throw new InfraFailure(`the ${who} is wrong: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  // 2-4. Probes of the candidate alone, in a realm of their own: calls at many shapes would otherwise leave the
  // timed realm's JIT state deoptimised (measured: the blocked kernel went from 2.3x to 0.06x at 48^3).
  const probeRealm = k.loadCandidate("candidate-probes");
  const candOnce = (input: CallInput, mode: "exact" | "tolerance") =>
    checkCall(input, callOnce(probeRealm, input, 2000, "candidate").out!, o, mode);
  for (let i = 0; i < p.exactIters; i++) {
    candOnce(randomInput(rngFor(`exact:${i}`), shape, "binary", o.canary, `exact probe ${i}`, false), "exact");
  }
  pass("exact-probe", `${p.exactIters} iterations`);
  for (let i = 0; i < p.toleranceIters; i++) {
    candOnce(randomInput(rngFor(`tolerance:${i}`), shape, "normal", o.canary, `tolerance probe ${i}`), "tolerance");
  }
  pass("tolerance-probe", `${p.toleranceIters} iterations, rtol ${o.rtol}, atol ${o.atolScale}·√k`);
  if (o.structuralProbes) {
    const probes = structuralInputs(rngFor("structural"), shape, o.canary);
    for (const input of probes) candOnce(input, "tolerance");
    const names = probes.map((x) => x.label.replace(/^structural /, ""));
    pass("structural-probes", `${probes.length} probes: ${names.join("; ")}`);
  }
  probeRealm.dispose();
  const cand = k.loadCandidate("candidate");
  const cand2 = k.loadCandidate("candidate2");
  const kernelOf: Record<Who, LoadedKernel> = {
    baseline: k.baseline,
    control: k.control,
    candidate: cand,
    candidate2: cand2,
  };

  // 5. JIT warm-up (same input, back to back; outputs unused), then timed warm-up and measurement.
  const jit = randomInput(rngFor("jit"), shape, "normal", o.canary, "the JIT warm-up");
  for (const [who, kernel] of Object.entries(kernelOf) as [Who, LoadedKernel][]) {
    kernel.place(jit);
    for (let i = 0; i < p.warmupCalls; i++) {
      const t = kernel.timedCall(2000);
      if (t.error && !isCandidate(who)) throw new InfraFailure(`the ${who} failed: ${t.error}`);
      if (t.error) throw new GateFailure(`${/timed out/i.test(t.error) ? "per-call-limit" : "runs"}: ${t.error}`);
      if (t.thenable) throw new GateFailure("synchronous: the kernel returned a thenable");
    }
  }
  const overhead: number[] = [];
  for (let i = 0; i < 64; i++) for (const kernel of Object.values(kernelOf)) overhead.push(kernel.timedNoop());
  const overheadNs = median(overhead);
  ev.overheadMs = overheadNs / 1e6;
  let limitMs = 2000;
  const times: Record<Who, number[]> = { baseline: [], control: [], candidate: [], candidate2: [] };
  let floorHits = 0;
  let iteration = 0;
  const phase = (ms: number, minIters: number, maxIters: number) => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < maxIters; i++) {
      if (i >= minIters && Number(process.hrtime.bigint() - start) / 1e6 >= ms) break;
      const rng = rngFor(`timed:${iteration++}`);
      const input = randomInput(rng, shape, "normal", o.canary, "a timed call");
      const ref = referenceMatmul(view(input, "a"), view(input, "b"), shape);
      const order = rng.shuffle(["baseline", "control", "candidate", "candidate2"] as Who[]);
      for (const who of order) {
        const r = callOnce(kernelOf[who], input, isCandidate(who) ? limitMs : 2000, who);
        if (r.out) checkCall(input, r.out, o, "tolerance", ref); // every timed candidate call, no sampling
        times[who].push(r.ns - overheadNs);
      }
      if (times.candidate.at(-1)! <= 0 || times.candidate2.at(-1)! <= 0) floorHits++;
    }
  };
  phase(p.warmupMs, 2, p.maxIters);
  // The 500 ms floor keeps a scheduler stall on a busy shared machine from failing an honest kernel.
  limitMs = Math.max(500, (20 * median(times.baseline)) / 1e6);
  for (const t of Object.values(times)) t.length = 0;
  floorHits = 0;
  phase(p.measureMs, Math.max(2, p.minIters), p.maxIters);
  const n = 2 * times.candidate.length;
  ev.verifiedCalls = n;
  pass("every-timed-call-verified", `${n} of ${n} timed candidate calls checked (inputs, canaries, C)`);
  pass("canaries", `${o.canary} elements each side`);
  pass("inputs-unchanged");
  pass("layouts", "separate buffers or one shared buffer, drawn per call");
  pass("plain-output", "the return value is ignored; only the harness-owned Float32Array C is read");
  pass("synchronous");
  summarise(times, o, ev, floorHits);
}

/** S, its interval, the pay rule's verdict and the suspicious flags, from the measured times (ns). */
function summarise(times: Record<Who, number[]>, o: HarnessOptions, ev: KernelEvaluation, floorHits: number): void {
  const tb = times.baseline;
  // S compares the baseline with the candidate's mean over its two isolates, round by round.
  const tc = times.candidate.map((c, i) => (c + times.candidate2[i]!) / 2);
  const pos = (x: number) => Math.max(x, 1);
  const ratios = tb.map((b, i) => pos(b) / pos(tc[i]!));
  const mean = ratios.reduce((s, r) => s + r, 0) / ratios.length;
  const sd = Math.sqrt(ratios.reduce((s, r) => s + (r - mean) ** 2, 0) / Math.max(1, ratios.length - 1));
  const half = (1.96 * sd) / Math.sqrt(ratios.length);
  const S =
    o.aggregate === "meanOfRatios"
      ? mean
      : o.aggregate === "medianOfRatios"
        ? median(ratios)
        : tb.reduce((s, x) => s + pos(x), 0) / tc.reduce((s, x) => s + pos(x), 0);
  ev.iterations = ratios.length;
  ev.speedup = S;
  ev.ci95 = [mean - half, mean + half];
  ev.baselineMedianMs = median(tb) / 1e6;
  ev.candidateMedianMs = median(tc) / 1e6;
  ev.significance = decideSpeedup(
    [tb, times.control],
    [times.candidate, times.candidate2],
    o.significance,
    deriveSeed(o.seed, "bootstrap"),
  );
  // The cap is checked on the robust median (a single stall can push a mean of ratios far above it).
  const robust = Math.min(ev.significance.medianVsBaseline, ev.significance.medianVsControl);
  if (robust > o.capSpeedup) {
    ev.suspiciousReasons.push(`median speed-up ${robust.toFixed(2)} is above capSpeedup ${o.capSpeedup}`);
  }
  if (floorHits) ev.suspiciousReasons.push(`${floorHits} timed call(s) took no longer than an empty call`);
  ev.suspicious = ev.suspiciousReasons.length > 0;
}
