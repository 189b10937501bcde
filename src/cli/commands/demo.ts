/**
 * `rlvr demo` (also `npm run demo`): GRPO on CPU from a small committed SFT start checkpoint (a char-level
 * transformer trained by scripts/make-demo-checkpoint.ts), on held-out "addition" prompts. Prints held-out
 * pass@1 before and after and writes a run folder with metrics.jsonl, samples.jsonl, eval.jsonl and plot.svg.
 */
import type { Command } from "commander";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadRecipe } from "../../trainer/recipe.js";
import { train } from "../../trainer/train.js";
import { RunDir } from "../../trainer/run-dir.js";
import { consoleReporter, fmtTime, jsonlReporter, svgReporter, type Reporter } from "../../trainer/reporters.js";
import { parseSets, withErrors } from "./train.js";

/** The package root (the folder holding package.json), found from this file's location in src/ or dist/. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json"))) {
    const up = dirname(dir);
    if (up === dir) throw new Error("rlvr demo: cannot find the package root");
    dir = up;
  }
  return dir;
}

/** What the demo reached: held-out pass@1 before and after, and at every evaluation, with the seconds since it began. */
export interface DemoResult {
  runDir: string;
  before: number;
  after: number;
  evals: { step: number; seconds: number; pass: number }[];
  seconds: number;
}

/** The first evaluation at `points` (a fraction) or more above the start, or null. */
export function firstGain(r: DemoResult, points: number): { step: number; seconds: number; pass: number } | null {
  // A small tolerance: 0.225 + 0.1 is 0.32500000000000001 in floating point, and a pass@1 of 0.325 must count.
  return r.evals.find((e) => e.step > 0 && e.pass - r.before >= points - 1e-9) ?? null;
}

/** Runs the demo recipe (recipes/demo.yaml, with `sets` applied) into `outDir`/`name`; `quiet` drops the console. */
export async function runDemo(o: {
  outDir: string;
  name: string;
  sets?: Record<string, unknown>;
  overwrite?: boolean;
  quiet?: boolean;
}): Promise<DemoResult> {
  const recipe = join(packageRoot(), "recipes", "demo.yaml");
  const config = loadRecipe(recipe, { ...(o.sets ?? {}), outDir: o.outDir, name: o.name });
  const run = new RunDir(join(config.outDir, config.name));
  const key = `eval/${config.task.name}/pass@1`;
  const t0 = performance.now();
  const evals: DemoResult["evals"] = [];
  const clock: Reporter = {
    onEval: (step, m) => void evals.push({ step, seconds: (performance.now() - t0) / 1000, pass: m[key] ?? NaN }),
  };
  const res = await train(config, {
    resume: false,
    overwrite: o.overwrite === true,
    reporters: [
      ...(o.quiet ? [] : [consoleReporter()]),
      jsonlReporter(run),
      svgReporter(run, `rlvr demo: GRPO on ${config.task.name}`),
      clock,
    ],
  });
  return {
    runDir: res.runDir,
    before: res.startEval?.[key] ?? NaN,
    after: res.finalEval?.[key] ?? NaN,
    evals,
    seconds: (performance.now() - t0) / 1000,
  };
}

/** The gain the demo is sized to reach within 2 minutes on 2 cores (issue 21; docs/training.md, the demo). */
export const DEMO_TARGET = 0.1;

/** Registers `demo`. */
export function register(program: Command): void {
  program
    .command("demo")
    .description(
      "GRPO on a tiny char-level model from its SFT start, on CPU in a few minutes; prints pass@1 before and after",
    )
    .option("--out-dir <dir>", "parent folder of the run folder", "runs")
    .option("--name <name>", "run name", "demo")
    .option("--set <field=value...>", "override recipe fields", [])
    .option("--overwrite", "let the demo delete an earlier run made with a different recipe in its run folder")
    .action(
      withErrors(async (o: { outDir: string; name: string; set: string[]; overwrite?: boolean }) => {
        const r = await runDemo({ outDir: o.outDir, name: o.name, sets: parseSets(o.set), overwrite: o.overwrite });
        const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
        const hit = firstGain(r, DEMO_TARGET);
        console.log("");
        console.log(`held-out pass@1 before RL: ${pct(r.before)}`);
        console.log(
          `held-out pass@1 after RL:  ${pct(r.after)}  (${r.after >= r.before ? "+" : ""}${((r.after - r.before) * 100).toFixed(1)} points)`,
        );
        console.log(
          hit
            ? `+${DEMO_TARGET * 100} points first reached at step ${hit.step} (${pct(hit.pass)}), ${fmtTime(hit.seconds)} after the start`
            : `+${DEMO_TARGET * 100} points not reached at any evaluation`,
        );
        console.log(
          `time: ${fmtTime(r.seconds)}; run folder: ${r.runDir} (metrics.jsonl, eval.jsonl, samples.jsonl, plot.svg)`,
        );
      }),
    );
}
