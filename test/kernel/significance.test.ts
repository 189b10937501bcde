/**
 * The pay rule of the kernel speed reward (significance.ts), on synthetic times: no clocks, so every case is exact.
 * Hand-made cases pin each part of the rule (the bound, the band, the control, the symmetry); property tests pin
 * what holds by construction: a candidate whose every paired ratio lies inside the dead band is never paid, the
 * verdict is a pure function of (times, seed), and swapping the candidate with the baseline mirrors the verdict.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_SIGNIFICANCE, decideSpeedup, median, medianInPlace } from "../../src/rewards/kernel/significance.js";
import { Rng } from "../../src/util/rng.js";

const O = DEFAULT_SIGNIFICANCE;

/** n paired times (ns): baseline ~1 ms with log-normal jitter `sd`, candidate = baseline / speedup (own jitter). */
function times(n: number, speedup: number, sd: number, seed: number, controlBias = 1) {
  const rng = new Rng(seed);
  const jit = () => Math.exp(sd * rng.normal());
  const b1 = Array.from({ length: n }, () => 1e6 * jit());
  const b2 = b1.map(() => 1e6 * controlBias * jit());
  const c = b1.map(() => (1e6 / speedup) * jit());
  return { b1, b2, c };
}

describe("median", () => {
  it("matches hand-computed values, odd and even", () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
    expect(Number.isNaN(median([]))).toBe(true);
  });

  it("equals the sorted middle for any array (quickselect against sort)", () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 60 }), (xs) => {
        const s = [...xs].sort((a, b) => a - b);
        const h = s.length >> 1;
        const want = s.length % 2 ? s[h]! : (s[h - 1]! + s[h]!) / 2;
        // + 0 maps −0 to 0: which of two equal values (−0, 0) quickselect returns does not matter
        expect(medianInPlace(Float64Array.from(xs), xs.length) + 0).toBe(want + 0);
      }),
      { numRuns: 300, seed: 111 },
    );
  });
});

describe("decideSpeedup", () => {
  it("calls identical times noise, with bounds of exactly 1", () => {
    const t = Array.from({ length: 20 }, (_, i) => 1e6 + i * 1000);
    const s = decideSpeedup([t, t], [t], O, 1);
    expect(s).toMatchObject({ verdict: "noise", lower: 1, upper: 1, control: 1, band: 1.1, iterations: 20 });
  });

  it("pays a 1.5x candidate under 5% jitter, and its lower bound is near 1.5", () => {
    const { b1, b2, c } = times(30, 1.5, 0.05, 2);
    const s = decideSpeedup([b1, b2], [c], O, 3);
    expect(s.verdict).toBe("faster");
    expect(s.lower).toBeGreaterThan(1.35);
    expect(s.lower).toBeLessThan(1.5);
    expect(s.upper).toBeGreaterThan(1.5);
  });

  it("calls a 2x slower candidate slower", () => {
    const { b1, b2, c } = times(30, 0.5, 0.05, 4);
    expect(decideSpeedup([b1, b2], [c], O, 5).verdict).toBe("slower");
  });

  it("widens the band to the measured baseline-against-baseline difference", () => {
    // The two baseline isolates differ by 30%: a 1.2x candidate is inside that noise, though outside deadBand.
    const { b1, b2, c } = times(40, 1.2, 0.01, 6, 1 / 1.3);
    const s = decideSpeedup([b1, b2], [c], O, 7);
    expect(s.control).toBeGreaterThan(1.25);
    expect(s.band).toBeCloseTo(s.control, 12);
    expect(s.verdict).toBe("noise");
    // Against a quiet control the same candidate is paid.
    const quiet = decideSpeedup([b1, b1], [c], O, 7);
    expect(quiet.band).toBe(1.1);
    expect(quiet.verdict).toBe("faster");
  });

  it("requires the candidate to beat both baseline isolates", () => {
    // 1.5x faster than the first baseline isolate but no faster than the second.
    const { b1, c } = times(30, 1.5, 0.02, 8);
    const s = decideSpeedup([b1, c], [c], { ...O, deadBand: 0.1 }, 9);
    expect(s.medianVsBaseline).toBeGreaterThan(1.4);
    expect(s.medianVsControl).toBe(1);
    expect(s.verdict).toBe("noise");
  });

  it("calls an equal candidate noise when one of its two isolates is biased slow (the CI case)", () => {
    // Baselines and the first candidate isolate are equal; the second candidate isolate runs 26% slow throughout,
    // as a deoptimised or collector-hit isolate does. One isolate alone would be "slower" (median 0.79).
    const { b1, b2, c } = times(30, 1, 0.02, 20);
    const slowIsolate = c.map((x) => x * 1.26);
    expect(decideSpeedup([b1, b2], [slowIsolate], O, 21).verdict).toBe("slower");
    const s = decideSpeedup([b1, b2], [c, slowIsolate], O, 21);
    expect(s.candidateGap).toBeLessThan(1 / 1.2);
    expect(s.band).toBeCloseTo(1 / s.candidateGap, 12);
    expect(s.verdict).toBe("noise");
    // The mirror: one isolate biased fast is not paid either.
    const fastIsolate = c.map((x) => x / 1.26);
    expect(decideSpeedup([b1, b2], [fastIsolate], O, 22).verdict).toBe("faster");
    expect(decideSpeedup([b1, b2], [c, fastIsolate], O, 22).verdict).toBe("noise");
  });

  it("pays and penalises a real difference seen in both candidate isolates", () => {
    const { b1, b2, c } = times(30, 1.5, 0.03, 23);
    const c2 = times(30, 1.5, 0.03, 24).c;
    const fast = decideSpeedup([b1, b2], [c, c2], O, 25);
    expect(fast.verdict).toBe("faster");
    expect(fast.lower).toBeGreaterThan(1.3);
    // every one of the four (baseline, candidate) pairs is at least the bound's statistic
    expect(Math.min(fast.medianVsBaseline, fast.medianVsControl)).toBeGreaterThanOrEqual(fast.lower);
    const slow = decideSpeedup([b1, b2], [c.map((x) => x * 3), c2.map((x) => x * 3)], O, 25);
    expect(slow.verdict).toBe("slower");
    expect(slow.upper).toBeLessThan(0.6);
  });

  it("rejects candidate lists of different lengths", () => {
    expect(() =>
      decideSpeedup(
        [
          [1, 2],
          [1, 2],
        ],
        [
          [1, 2],
          [1, 2, 3],
        ],
        O,
        0,
      ),
    ).toThrow(/every list/);
  });

  it("is not moved by a few huge stalls of the baseline (the mean of ratios would be)", () => {
    const { b1, b2, c } = times(31, 1, 0.03, 10);
    for (const i of [3, 17, 25]) b1[i] = b1[i]! * 200; // three scheduler stalls during baseline calls
    const s = decideSpeedup([b1, b2], [c], O, 11);
    expect(s.verdict).toBe("noise");
    const meanOfRatios = b1.reduce((acc, b, i) => acc + b / c[i]!, 0) / b1.length;
    expect(meanOfRatios).toBeGreaterThan(10);
  });

  it("rejects bad parameters and too few pairs with a clear error", () => {
    expect(() => decideSpeedup([[1], [1]], [[1]], O, 0)).toThrow(/≥ 2 paired times/);
    expect(() =>
      decideSpeedup(
        [
          [1, 2],
          [1, 2],
        ],
        [[1, 2]],
        { ...O, confidence: 1 },
        0,
      ),
    ).toThrow(/confidence/);
    expect(() =>
      decideSpeedup(
        [
          [1, 2],
          [1, 2],
        ],
        [[1, 2]],
        { ...O, deadBand: -1 },
        0,
      ),
    ).toThrow(/deadBand/);
  });
});

describe("decideSpeedup properties", () => {
  const unit = fc.double({ min: -1, max: 1, noNaN: true });
  const time = fc.double({ min: 1e3, max: 1e7, noNaN: true });
  const pairs = fc.array(fc.tuple(time, unit, unit), { minLength: 2, maxLength: 40 });

  it("never pays a candidate whose every paired ratio lies inside the dead band (by construction, not by luck)", () => {
    fc.assert(
      fc.property(pairs, fc.integer({ min: 0, max: 2 ** 31 }), (ps, seed) => {
        const band = 1 + O.deadBand;
        // ratios b / c and b2 / c in [1 / band, band]: x in [-1, 1] maps to band^x
        const b1 = ps.map(([t]) => t);
        const c = ps.map(([t, x]) => t / band ** x);
        const b2 = ps.map(([t, x, y]) => (t / band ** x) * band ** y);
        expect(decideSpeedup([b1, b2], [c], O, seed).verdict).toBe("noise");
        expect(decideSpeedup([b1, b2], [c, b2], O, seed).verdict).toBe("noise");
      }),
      { numRuns: 60, seed: 112 },
    );
  });

  it("is a pure function of the times and the seed, and mirrors when candidate and baseline swap", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1000 }), fc.double({ min: 0.3, max: 3, noNaN: true }), (seed, f) => {
        const { b1, c } = times(21, f, 0.02, seed);
        const s = decideSpeedup([b1, b1], [c], O, seed);
        expect(decideSpeedup([b1, b1], [c], O, seed)).toEqual(s);
        const swapped = decideSpeedup([c, c], [b1], O, seed).verdict;
        expect(swapped).toBe(s.verdict === "faster" ? "slower" : s.verdict === "slower" ? "faster" : "noise");
      }),
      { numRuns: 40, seed: 113 },
    );
  });
});
