/**
 * Hostile completions and parameter extremes: the car reward never throws, stays fast, and never pays a broken dict.
 * "Fast" is bounded by work, not wall time (issue 20 #11): the size cap is shown by the reason it refuses with (it
 * never parsed), and the parser's cost by this process's CPU time with a wide margin, which a loaded machine's
 * scheduling does not inflate as it does wall time.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { readParams } from "../../src/rewards/car/params.js";
import { carRewardOptions, drivingTerm } from "../../src/rewards/car/reward.js";
import { evaluateParams, SIM_VERSION } from "../../src/rewards/car/evaluate.js";
import { DEFAULT_PARAMS, PARAM_NAMES } from "../../src/rewards/car/mpc.js";
import { PARAM_RANGES } from "../../src/rewards/car/params.js";

const opts = carRewardOptions.parse({ worker: false });

/** CPU time (ms) this process spends in `f`; the fastest of up to three runs, so one GC pause does not count. */
function cpuMs(f: () => void, enough: number): number {
  let best = Infinity;
  for (let i = 0; i < 3 && best >= enough; i++) {
    const t0 = process.cpuUsage();
    f();
    const d = process.cpuUsage(t0);
    best = Math.min(best, (d.user + d.system) / 1000);
  }
  return best;
}
// A cached baseline of the current simulator version: failures need no simulation at all.
const gold = { case: "racingLine", track: "circle" as const, baselineRmse: 0.05, simVersion: SIM_VERSION };

const dictish = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc
    .array(
      fc.constantFrom(
        "{",
        "}",
        ":",
        ",",
        '"qv"',
        "'qn'",
        "1e9",
        "-",
        ".",
        "NaN",
        " ",
        "new_mpc_params =",
        "<answer>",
        "</answer>",
        "\\",
        "\n",
      ),
      { maxLength: 60 },
    )
    .map((a) => a.join("")),
  fc.string({ maxLength: 60 }).map((s) => `<answer>new_mpc_params = {"qv": ${s}}</answer>`),
);

describe("hostile completions", () => {
  it("readParams never throws and takes under 20 ms of CPU time", () => {
    fc.assert(
      fc.property(dictish, (s) => {
        const p = readParams(s);
        expect(typeof p.extracted).toBe("boolean");
        // A catastrophic backtrack or quadratic scan of these ≤ 1,000-char inputs costs seconds; parsing costs µs.
        expect(cpuMs(() => readParams(s), 20)).toBeLessThan(20);
      }),
      { numRuns: 300, seed: 11 },
    );
  });
  it("a dict that fails to parse or validate always earns −4, whatever surrounds it", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 40 }),
        fc.constantFrom('{"qv": NaN}', '{"qv": 1e9}', '{"qv": 1, "qv": 2}', '{"qv": 1', "{qv: 1}"),
        (noise, bad) => {
          const r = drivingTerm(`<reasoning>${noise}</reasoning><answer>new_mpc_params = ${bad}</answer>`, gold, opts);
          expect(r.score).toBe(-4);
        },
      ),
      { numRuns: 30, seed: 12 },
    );
  });
  it("a 1 MB completion is refused by the size cap before any parsing", () => {
    // The reason is the region cap's (PARSE_CAPS.maxRegionChars), so the dict grammar never saw the 100,000 keys.
    const huge = `<answer>new_mpc_params = {${'"qv": 1, '.repeat(100_000)}}</answer>`;
    expect(readParams(huge)).toMatchObject({ extracted: false, error: "answer region too long" });
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
