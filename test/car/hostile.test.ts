/** Hostile completions and parameter extremes: the car reward never throws, stays fast, and never pays a broken dict. */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { readParams } from "../../src/rewards/car/params.js";
import { carRewardOptions, drivingTerm } from "../../src/rewards/car/reward.js";
import { evaluateParams, SIM_VERSION } from "../../src/rewards/car/evaluate.js";
import { DEFAULT_PARAMS, PARAM_NAMES } from "../../src/rewards/car/mpc.js";
import { PARAM_RANGES } from "../../src/rewards/car/params.js";

const opts = carRewardOptions.parse({ worker: false });
// A cached baseline of the current simulator version: failures need no simulation at all.
const gold = { case: "racingLine", track: "circle" as const, baselineRmse: 0.05, simVersion: SIM_VERSION };

const dictish = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.array(fc.constantFrom("{", "}", ":", ",", '"qv"', "'qn'", "1e9", "-", ".", "NaN", " ", "new_mpc_params =", "<answer>", "</answer>", "\\", "\n"), { maxLength: 60 }).map((a) => a.join("")),
  fc.string({ maxLength: 60 }).map((s) => `<answer>new_mpc_params = {"qv": ${s}}</answer>`),
);

describe("hostile completions", () => {
  it("readParams never throws and takes under 20 ms", () => {
    fc.assert(
      fc.property(dictish, (s) => {
        const p = readParams(s);
        expect(typeof p.extracted).toBe("boolean");
        // Wall-clock budget: a slow call is re-timed and the fastest of three counts, so a GC pause or a loaded
        // machine is not mistaken for pathological parsing.
        let best = Infinity;
        for (let i = 0; i < 3 && best >= 20; i++) {
          const t0 = performance.now();
          readParams(s);
          best = Math.min(best, performance.now() - t0);
        }
        expect(best).toBeLessThan(20);
      }),
      { numRuns: 300, seed: 11 },
    );
  });
  it("a dict that fails to parse or validate always earns −4, whatever surrounds it", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), fc.constantFrom('{"qv": NaN}', '{"qv": 1e9}', '{"qv": 1, "qv": 2}', '{"qv": 1', "{qv: 1}"), (noise, bad) => {
        const r = drivingTerm(`<reasoning>${noise}</reasoning><answer>new_mpc_params = ${bad}</answer>`, gold, opts);
        expect(r.score).toBe(-4);
      }),
      { numRuns: 30, seed: 12 },
    );
  });
  it("a 1 MB completion is refused by the size cap, quickly", () => {
    const t0 = performance.now();
    expect(readParams(`<answer>new_mpc_params = {${'"qv": 1, '.repeat(100_000)}}</answer>`).extracted).toBe(false);
    expect(performance.now() - t0).toBeLessThan(200);
    expect(drivingTerm("x".repeat(1_000_000), gold, opts).score).toBe(-4);
  });
});

describe("parameter extremes inside the range table", () => {
  const lo = Object.fromEntries(PARAM_NAMES.map((n) => [n, PARAM_RANGES[n][0]])) as typeof DEFAULT_PARAMS;
  const hi = Object.fromEntries(PARAM_NAMES.map((n) => [n, PARAM_RANGES[n][1]])) as typeof DEFAULT_PARAMS;
  it.each([
    ["every parameter at its lower bound", { ...lo, v_max: lo.v_min }],
    ["every parameter at its upper bound", hi],
    ["all weights zero", { ...DEFAULT_PARAMS, qv: 0, qn: 0, qalpha: 0, qac: 0, qddelta: 0 }],
  ])("%s: finishes without throwing, as a crash, a stall or a finite metric", (_label, params) => {
    const e = evaluateParams({ kind: "racingLine" }, "circle", params);
    expect(e.crashed || e.stalled || Number.isFinite(e.metric)).toBe(true);
    if (e.metric !== null) expect(Number.isFinite(e.metric)).toBe(true);
  });
});
