/** pass@k (spec §11.5 values), the SVG plot, and the run folder's resume truncation. */
import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { passAtK } from "../../src/trainer/evaluate.js";
import { renderLinePlot } from "../../src/trainer/svg-plot.js";
import { RunDir } from "../../src/trainer/run-dir.js";

describe("passAtK", () => {
  it("matches spec §11.5 for n = 8, c = 2", () => {
    expect(passAtK(8, 2, 1)).toBeCloseTo(0.25, 6);
    expect(passAtK(8, 2, 2)).toBeCloseTo(0.464286, 6);
    expect(passAtK(8, 2, 4)).toBeCloseTo(0.785714, 6);
    expect(passAtK(8, 2, 8)).toBe(1);
  });
  it("is 0 with no correct sample and 1 when n − c < k", () => {
    expect(passAtK(4, 0, 2)).toBe(0);
    expect(passAtK(4, 3, 2)).toBe(1);
    expect(() => passAtK(2, 1, 3)).toThrow(/k <= n/);
  });
});

describe("renderLinePlot", () => {
  const svg = renderLinePlot(
    "a <b> & c",
    [
      {
        name: "reward",
        color: "#1f77b4",
        points: [
          [1, 0.2],
          [2, 0.5],
          [3, NaN],
          [4, 0.9],
        ],
      },
      {
        name: "pass@1",
        color: "#ff7f0e",
        points: [
          [0, 0.1],
          [4, 0.6],
        ],
      },
    ],
    { x: "step", y: "value" },
  );
  it("is one well-formed svg element with escaped text", () => {
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trim().endsWith("</svg>")).toBe(true);
    expect(svg).toContain("a &lt;b&gt; &amp; c");
  });
  it("draws one polyline per series, skipping non-finite points", () => {
    const lines = [...svg.matchAll(/<polyline[^>]*points="([^"]+)"/g)].map((m) => m[1]!.split(" ").length);
    expect(lines).toEqual([3, 2]);
  });
  it("maps the data range into the plot area (x 0..4 → left..right edge)", () => {
    const xs = [...svg.matchAll(/<circle cx="([\d.]+)"/g)].map((m) => Number(m[1]));
    expect(Math.min(...xs)).toBeCloseTo(56, 0);
    expect(Math.max(...xs)).toBeCloseTo(640 - 16, 0);
  });
});

describe("RunDir", () => {
  it("truncateAfter drops lines logged after the checkpoint step", () => {
    const run = new RunDir(mkdtempSync(join(tmpdir(), "rlvr-run-")));
    run.init({ a: 1 });
    for (let s = 1; s <= 5; s++) run.logMetrics({ step: s, "reward/mean": s / 10 });
    run.logEval({ step: 4, x: 1 });
    run.truncateAfter(3);
    expect(run.metrics().map((m) => m.step)).toEqual([1, 2, 3]);
    expect(run.evals()).toEqual([]);
    expect(JSON.parse(readFileSync(run.configPath, "utf8"))).toEqual({ a: 1 });
  });
});
