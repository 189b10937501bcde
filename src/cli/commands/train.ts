/** `rlvr train <recipe>`: validates a JSON/YAML recipe and runs (or resumes) the RL loop, reporting progress. */
import type { Command } from "commander";
import { parse as parseYaml } from "yaml";
import { loadRecipe } from "../../trainer/recipe.js";
import { train } from "../../trainer/train.js";
import { RunDir } from "../../trainer/run-dir.js";
import { consoleReporter, jsonlReporter, svgReporter } from "../../trainer/reporters.js";
import { join } from "node:path";
import { RlvrError } from "../../util/index.js";

/** Turns `--set a.b=1` pairs into a nested override object (values parsed as YAML scalars). */
export function parseSets(sets: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of sets) {
    const eq = s.indexOf("=");
    if (eq <= 0) throw new Error(`--set ${s}: expected field.path=value`);
    const path = s.slice(0, eq).split(".");
    let cur = out;
    for (const k of path.slice(0, -1)) cur = (cur[k] ??= {}) as Record<string, unknown>;
    cur[path[path.length - 1]!] = parseYaml(s.slice(eq + 1));
  }
  return out;
}

/**
 * Wraps a command action so that rlvr's own errors (bad recipe, missing checkpoint, ...) print as one clear message
 * and exit with status 1, without a stack trace; anything else is a bug and keeps its stack.
 */
export function withErrors<A extends unknown[]>(fn: (...args: A) => Promise<void> | void): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (err) {
      if (err instanceof RlvrError) {
        console.error(`rlvr: ${err.message}`);
        process.exitCode = 1;
        return;
      }
      throw err;
    }
  };
}

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
    .option("--no-resume", "start over even if the run folder has checkpoints")
    .option("--no-progress", "no console progress bar")
    .action(withErrors(async (recipe: string, o: { set: string[]; name?: string; outDir?: string; seed?: number; steps?: number; resume: boolean; progress: boolean }) => {
      const overrides = parseSets(o.set);
      if (o.name) overrides.name = o.name;
      if (o.outDir) overrides.outDir = o.outDir;
      if (o.seed !== undefined) overrides.seed = o.seed;
      if (o.steps !== undefined) overrides.train = { ...(overrides.train as object), steps: o.steps };
      const config = loadRecipe(recipe, overrides);
      const run = new RunDir(join(config.outDir, config.name));
      const reporters = [jsonlReporter(run), svgReporter(run, `${config.name}: ${config.task.name}`)];
      if (o.progress && config.log.progress) reporters.unshift(consoleReporter());
      const res = await train(config, { reporters, resume: o.resume });
      const key = `eval/${config.task.name}/pass@1`;
      const before = res.startEval?.[key];
      const after = res.finalEval?.[key];
      console.log(`run folder: ${res.runDir}`);
      if (before !== undefined) console.log(`held-out pass@1 before: ${before.toFixed(3)}`);
      if (after !== undefined) console.log(`held-out pass@1 after:  ${after.toFixed(3)}`);
      if (res.best) console.log(`best pass@1 ${res.best.score.toFixed(3)} at step ${res.best.step} (checkpoints/best)`);
    }));
}
