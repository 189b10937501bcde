/**
 * `npm run bench:demo` (issue 21): how long `rlvr demo` takes to gain 10 points of held-out pass@1 on this machine.
 * Runs the demo recipe (recipes/demo.yaml) exactly as `npm run demo` does, into a temporary folder, and reads the
 * wall clock at each of its evaluations (200 held-out sums, greedy, every 25 steps). Prints:
 * - `demo.seconds_to_10_points`: seconds from the start (model load and the start's evaluation included) to the end
 *   of the first evaluation at 10 or more points above the start (target ≤ 120 s on 2 cores); absent when no
 *   evaluation gets there;
 * - `demo.gain`: the last evaluation's gain (points), and `demo.seconds`: the whole run;
 * then every evaluation (step, seconds, pass@1) and the load check (bench/harness/load.ts): a figure measured beside
 * another process does not count. The run is seeded, so the pass@1 curve is the same on every run on the same engine
 * build; only the seconds depend on the machine.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEMO_TARGET, firstGain, runDemo } from "../src/cli/commands/demo.js";
import { nativeInfo } from "../src/engine/backends/native.js";
import { benchLine } from "./harness/index.js";
import { loadSample, loadVerdict } from "./harness/load.js";

/** The issue's budget for the gain (seconds). */
const BUDGET_S = 120;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-bench-demo-"));
  const before = loadSample();
  try {
    const r = await runDemo({ outDir: dir, name: "demo", quiet: true });
    const hit = firstGain(r, DEMO_TARGET);
    if (hit) console.log(benchLine("demo", "demo.seconds_to_10_points", hit.seconds, "s"));
    console.log(benchLine("demo", "demo.gain", 100 * (r.after - r.before), "points"));
    console.log(benchLine("demo", "demo.seconds", r.seconds, "s"));
    const pct = (x: number) => (100 * x).toFixed(1);
    console.log(
      `demo: pass@1 ${pct(r.before)}% -> ${pct(r.after)}% in ${r.seconds.toFixed(1)} s; ` +
        (hit
          ? `+${100 * DEMO_TARGET} points first at step ${hit.step}, ${hit.seconds.toFixed(1)} s (target ≤ ${BUDGET_S} s: ${hit.seconds <= BUDGET_S ? "met" : "missed"})`
          : `+${100 * DEMO_TARGET} points never reached`),
    );
    console.log(
      `  evaluations: ${r.evals.map((e) => `step ${e.step} ${pct(e.pass)}% at ${e.seconds.toFixed(1)} s`).join("; ")}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const threads = nativeInfo()?.threads ?? 1;
  console.log(loadVerdict(before, loadSample(), threads).line);
}

await main();
