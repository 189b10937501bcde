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
import { consoleReporter, fmtTime, jsonlReporter, svgReporter } from "../../trainer/reporters.js";
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
        const recipe = join(packageRoot(), "recipes", "demo.yaml");
        const config = loadRecipe(recipe, { ...parseSets(o.set), outDir: o.outDir, name: o.name });
        const run = new RunDir(join(config.outDir, config.name));
        const t0 = Date.now();
        const res = await train(config, {
          resume: false,
          overwrite: o.overwrite === true,
          reporters: [
            consoleReporter(),
            jsonlReporter(run),
            svgReporter(run, `rlvr demo: GRPO on ${config.task.name}`),
          ],
        });
        const key = `eval/${config.task.name}/pass@1`;
        const before = res.startEval?.[key] ?? NaN;
        const after = res.finalEval?.[key] ?? NaN;
        console.log("");
        console.log(`held-out pass@1 before RL: ${(before * 100).toFixed(1)}%`);
        console.log(
          `held-out pass@1 after RL:  ${(after * 100).toFixed(1)}%  (${after >= before ? "+" : ""}${((after - before) * 100).toFixed(1)} points)`,
        );
        console.log(
          `time: ${fmtTime((Date.now() - t0) / 1000)}; run folder: ${res.runDir} (metrics.jsonl, eval.jsonl, samples.jsonl, plot.svg)`,
        );
      }),
    );
}
