/** `rlvr train <recipe>`: validates a JSON/YAML recipe and runs (or resumes) the RL loop, reporting progress. */
import type { Command } from "commander";
import { loadRecipe } from "../../trainer/recipe.js";
import { train } from "../../trainer/train.js";
import { RunDir } from "../../trainer/run-dir.js";
import { consoleReporter, jsonlReporter, svgReporter } from "../../trainer/reporters.js";
import { join } from "node:path";
import { parseSets } from "../overrides.js";
import { withErrors } from "../errors.js";
import { trainDashboard } from "./dashboard.js";

export { parseSets } from "../overrides.js";
export { withErrors } from "../errors.js";

/** Registers `train`. */
export function register(program: Command): void {
  program
    .command("train")
    .description("train a policy with RL from a recipe (JSON or YAML); resumes a killed run from its newest checkpoint")
    .argument("<recipe>", "recipe file (.json, .yaml, .yml)")
    .option("--set <field=value...>", "override recipe fields, e.g. --set train.steps=20 algorithm.kl.beta=0", [])
    .option("--name <name>", "run name (runs/<name>/)")
    .option("--out-dir <dir>", "parent folder of run folders")
    .option("--seed <n>", "run seed", (v) => Number(v))
    .option("--steps <n>", "RL steps", (v) => Number(v))
    .option(
      "--no-resume",
      "start over even if the run folder has checkpoints (deletes them; a run of another recipe " +
        "also needs --overwrite)",
    )
    .option("--overwrite", "let a fresh start delete an earlier run made with a different recipe in the run folder")
    .option("--no-progress", "no console progress bar")
    .option("--dashboard", "serve the live dashboard (docs/dashboard.md) while the run trains; prints its URL")
    .action(
      withErrors(
        async (
          recipe: string,
          o: {
            set: string[];
            name?: string;
            outDir?: string;
            seed?: number;
            steps?: number;
            resume: boolean;
            overwrite?: boolean;
            progress: boolean;
            dashboard?: boolean;
          },
        ) => {
          const overrides = parseSets(o.set);
          if (o.name) overrides.name = o.name;
          if (o.outDir) overrides.outDir = o.outDir;
          if (o.seed !== undefined) overrides.seed = o.seed;
          if (o.steps !== undefined) overrides.train = { ...(overrides.train as object), steps: o.steps };
          const config = loadRecipe(recipe, overrides);
          const run = new RunDir(join(config.outDir, config.name));
          const reporters = [jsonlReporter(run), svgReporter(run, `${config.name}: ${config.task.name}`)];
          if (o.progress && config.log.progress) reporters.unshift(consoleReporter());
          const dashboard = o.dashboard ? await trainDashboard(config.outDir, config.name) : undefined;
          const res = await train(config, { reporters, resume: o.resume, overwrite: o.overwrite === true }).finally(
            () => dashboard?.close(),
          );
          const key = `eval/${config.task.name}/pass@1`;
          const before = res.startEval?.[key];
          const after = res.finalEval?.[key];
          console.log(`run folder: ${res.runDir}`);
          if (before !== undefined) console.log(`held-out pass@1 before: ${before.toFixed(3)}`);
          if (after !== undefined) console.log(`held-out pass@1 after:  ${after.toFixed(3)}`);
          if (res.best)
            console.log(`best pass@1 ${res.best.score.toFixed(3)} at step ${res.best.step} (checkpoints/best)`);
        },
      ),
    );
}
