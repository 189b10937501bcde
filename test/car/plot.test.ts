/** The SVG plot and the `rlvr car-plot` command. */
import { describe, expect, it } from "vitest";
import { Command } from "commander";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { register } from "../../src/cli/commands/car-plot.js";
import { getTrack, plotTrajectories, runLap, DEFAULT_PARAMS } from "../../src/rewards/car/index.js";

async function runCli(args: string[]): Promise<{ out: string; err: string; code: number | undefined }> {
  const program = new Command("rlvr").exitOverride();
  register(program);
  const out: string[] = [];
  const err: string[] = [];
  const [log, error] = [console.log, console.error];
  console.log = (...a: unknown[]) => void out.push(a.join(" "));
  console.error = (...a: unknown[]) => void err.push(a.join(" "));
  process.exitCode = undefined;
  try {
    await program.parseAsync(["node", "rlvr", "car-plot", ...args]);
  } finally {
    [console.log, console.error] = [log, error];
  }
  const code = process.exitCode as number | undefined;
  process.exitCode = undefined;
  return { out: out.join("\n"), err: err.join("\n"), code };
}

describe("car plot", () => {
  it("plotTrajectories draws walls, centreline, racing line and each series", () => {
    const t = getTrack("circle");
    const run = runLap(t, { ...DEFAULT_PARAMS }, { settleTime: 0.5, samples: 50 });
    const svg = plotTrajectories(t, [{ label: "a <b>", color: "#123456", trajectory: run.trajectory }]);
    expect(svg.startsWith("<svg")).toBe(true);
    expect(svg.match(/<path /g)).toHaveLength(5);
    expect(svg).toContain('stroke="#123456"');
    expect(svg).toContain("a &lt;b&gt;");
    expect(svg).not.toMatch(/NaN/);
  });
  it("rlvr car-plot writes an SVG of default and tuned runs from a params file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "car-plot-"));
    writeFileSync(join(dir, "p.json"), JSON.stringify({ qn: 100, qalpha: 2.5, qddelta: 0.025, qv: 20 }));
    const r = await runCli([
      "--out",
      join(dir, "lap.svg"),
      "--track",
      "circle",
      "--case",
      "racingLine",
      "--params",
      join(dir, "p.json"),
    ]);
    expect(r.code).toBeUndefined();
    expect(r.out).toMatch(/default: RMSE [\d.]+/);
    expect(r.out).toMatch(/improvement 0\.\d+/);
    const svg = readFileSync(join(dir, "lap.svg"), "utf8");
    expect(svg).toContain("default parameters");
    expect(svg).toContain("tuned parameters");
  });
  it("rlvr car-plot reports a bad params file or case without a stack trace", async () => {
    const dir = mkdtempSync(join(tmpdir(), "car-plot-"));
    writeFileSync(join(dir, "bad.json"), JSON.stringify({ a_max: 1e9 }));
    const bad = await runCli(["--out", join(dir, "x.svg"), "--track", "circle", "--params", join(dir, "bad.json")]);
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/a_max=1000000000 outside \[0, 20\]/);
    const badCase = await runCli(["--out", join(dir, "x.svg"), "--case", "fly"]);
    expect(badCase.err).toMatch(/--case "fly"/);
  });
});
