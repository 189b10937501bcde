/**
 * `firstGain` (src/cli/commands/demo.ts): the first evaluation after the start at the target gain or more, read on
 * made-up curves. bench:demo's `demo.seconds_to_10_points` is that evaluation's clock.
 */
import { describe, expect, it } from "vitest";
import { firstGain, type DemoResult } from "../../src/cli/commands/demo.js";

const run = (before: number, evals: [number, number, number][]): DemoResult => ({
  runDir: "x",
  before,
  after: evals[evals.length - 1]![2],
  seconds: 99,
  evals: evals.map(([step, seconds, pass]) => ({ step, seconds, pass })),
});

describe("firstGain", () => {
  it("takes the first evaluation at start + target or more, even if a later one dips", () => {
    const r = run(0.225, [
      [0, 2, 0.225],
      [25, 14, 0.3],
      [50, 26, 0.325], // exactly +10 points: 0.225 + 0.1 is not exactly 0.325 in floating point, and still counts
      [75, 38, 0.31],
      [100, 50, 0.4],
    ]);
    expect(firstGain(r, 0.1)).toEqual({ step: 50, seconds: 26, pass: 0.325 });
    expect(firstGain(r, 0.15)).toEqual({ step: 100, seconds: 50, pass: 0.4 });
  });

  it("never counts the start's own evaluation, and is null when no evaluation gets there", () => {
    expect(firstGain(run(0.2, [[0, 1, 0.5]]), 0)).toBeNull();
    expect(
      firstGain(
        run(0.2, [
          [0, 1, 0.2],
          [10, 5, 0.29],
        ]),
        0.1,
      ),
    ).toBeNull();
  });
});
