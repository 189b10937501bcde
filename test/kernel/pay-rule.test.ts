/**
 * The whole pay path on a scripted backend (no real clock, so every number is exact): the harness's verdicts, the
 * suspicious flags that replace the old 1 ns clamp, and `speedScore`, which turns an evaluation into the speed part
 * of the reward (suspicious and noise are paid 0; the sign follows the verdict).
 */
import { describe, expect, it } from "vitest";
import { evaluateKernel } from "../../src/rewards/kernel/harness.js";
import { referenceMatmul, view } from "../../src/rewards/kernel/probes.js";
import { speedScore } from "../../src/rewards/kernel/reward.js";
import { DEFAULT_SIGNIFICANCE, type Significance } from "../../src/rewards/kernel/significance.js";
import { PROFILES, type KernelBackend, type LoadedKernel, type PlacedBuffers } from "../../src/rewards/kernel/types.js";
import { Rng } from "../../src/util/rng.js";

const NOOP_NS = 2000;
const BASE_NS = 1e6;

/**
 * A backend whose kernels compute the exact product on the host and report scripted times: the source "BASE" takes
 * BASE_NS, "FAST x" takes BASE_NS / x, "FLOOR" takes no longer than an empty call; each with 3% log-normal jitter
 * drawn from the realm seed.
 */
function scriptedBackend(): KernelBackend {
  return {
    name: "scripted",
    describe: () => ({ backend: "scripted" }),
    load(source, opts): LoadedKernel {
      const rng = new Rng(opts.seed);
      const factor = source === "BASE" ? 1 : source.startsWith("FAST ") ? Number(source.slice(5)) : Number.NaN;
      let placed: PlacedBuffers | null = null;
      let out: Float32Array[] = [];
      return {
        place(p) {
          placed = p;
          out = p.buffers.map((b) => b.slice());
        },
        timedCall() {
          const p = placed!;
          view(p, "c", out).set(referenceMatmul(view(p, "a"), view(p, "b"), p.shape));
          const work = source === "FLOOR" ? 0 : (BASE_NS / factor) * Math.exp(0.03 * rng.normal());
          return { ns: NOOP_NS + work };
        },
        timedNoop: () => NOOP_NS,
        readBack: () => out.map((b) => b.slice()),
        dispose() {},
      };
    },
  };
}

/** No time budget: exactly 2 warm-up and 30 measured iterations, so every run is a pure function of its seed. */
const EXACT = { ...PROFILES.test, warmupCalls: 2, warmupMs: 0, measureMs: 0, minIters: 30 };
const run = (source: string, seed = 1) =>
  evaluateKernel(scriptedBackend(), source, "BASE", { m: 6, n: 5, k: 4 }, { profile: EXACT, seed, canary: 8 });

describe("the pay rule on scripted times", () => {
  it("calls a copy of the baseline noise and pays it 0, on every seed", () => {
    for (let seed = 0; seed < 20; seed++) {
      const ev = run("BASE", seed);
      expect(ev.correct).toBe(true);
      expect(ev.significance!.verdict).toBe("noise");
      expect(speedScore(ev, 10)).toEqual({ verdict: "noise", paid: 0 });
      expect(ev.iterations).toBe(30);
    }
  });

  it("pays a 1.5x kernel S − 1, and calls a 2x slower one slower", () => {
    const fast = run("FAST 1.5");
    expect(fast.significance!.verdict).toBe("faster");
    expect(speedScore(fast, 10).paid).toBeCloseTo(fast.speedup! - 1, 12);
    expect(fast.speedup!).toBeGreaterThan(1.4);
    expect(fast.speedup!).toBeLessThan(1.6);
    const slow = run("FAST 0.5");
    expect(slow.significance!.verdict).toBe("slower");
    expect(speedScore(slow, 10).paid).toBeCloseTo(slow.speedup! - 1, 12);
  });

  it("flags a kernel whose timed calls take no longer than an empty call, and never pays it", () => {
    const ev = run("FLOOR");
    expect(ev.correct).toBe(true);
    expect(ev.suspicious).toBe(true);
    expect(ev.suspiciousReasons.join()).toMatch(/took no longer than an empty call/);
    expect(speedScore(ev, 10)).toEqual({ verdict: "suspicious", paid: 0 });
  });

  it("flags a median speed-up above capSpeedup, and never pays it", () => {
    const ev = run("FAST 30");
    expect(ev.suspiciousReasons.join()).toMatch(/above capSpeedup 10/);
    expect(speedScore(ev, 10)).toEqual({ verdict: "suspicious", paid: 0 });
  });
});

describe("speedScore", () => {
  const sig = (verdict: Significance["verdict"]): Significance => ({
    ...DEFAULT_SIGNIFICANCE,
    verdict,
    lower: 1,
    upper: 1,
    medianVsBaseline: 1,
    medianVsControl: 1,
    control: 1,
    candidateGap: 1,
    band: 1.1,
    iterations: 30,
  });
  it.each([
    // [verdict, S, suspicious, paid]: each row pins one branch
    ["faster", 2.5, false, 1.5], // paid S − 1
    ["faster", 40, false, 9], // clipped at capSpeedup − 1
    ["faster", 0.97, false, 0], // a faster verdict never pays a negative mean
    ["slower", 0.5, false, -0.5], // real slow-downs cost
    ["slower", 0.01, false, -0.9], // clipped at −0.9
    ["slower", 1.2, false, 0], // the sign follows the verdict
    ["noise", 1.08, false, 0], // inside the band: exactly 0
    ["noise", 0.93, false, 0],
    ["faster", 3, true, 0], // suspicious: never paid
  ] as const)("%s with S = %d (suspicious %s) pays %d", (verdict, S, suspicious, paid) => {
    expect(speedScore({ speedup: S, significance: sig(verdict), suspicious }, 10).paid).toBe(paid);
  });
});
