/** `rlvr eval <run or checkpoint>`: held-out pass@k, mean correctness and mean reward per term of a saved model. */
import type { Command } from "commander";
import { withErrors } from "./train.js";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../../util/index.js";
import { loadModel } from "../../models/checkpoint.js";
import { getTask } from "../../tasks/index.js";
import { TrainConfigSchema } from "../../trainer/config.js";
import { latestCheckpoint } from "../../trainer/checkpoints.js";
import { evaluate } from "../../trainer/evaluate.js";

/** Resolves a run folder (best, else newest checkpoint) or a model folder to the folder to load. */
export function resolveModelDir(
  path: string,
  which?: string,
): { dir: string; config: ReturnType<typeof TrainConfigSchema.parse> | null } {
  if (existsSync(join(path, "config.json")) && existsSync(join(path, "checkpoints"))) {
    const config = readRunConfig(join(path, "config.json"));
    const ck = join(path, "checkpoints");
    const dir = which
      ? join(ck, which)
      : existsSync(join(ck, "best"))
        ? join(ck, "best")
        : (latestCheckpoint(ck) ?? join(ck, "start"));
    if (!existsSync(dir)) throw new ConfigError(`${path}: no checkpoint "${which ?? "best"}" in ${ck}`);
    return { dir, config };
  }
  if (!existsSync(path)) throw new ConfigError(`${path}: no such run or checkpoint folder`);
  return { dir: path, config: null };
}

/** A run folder's config.json, validated; a file that is not one is a ConfigError naming it. */
function readRunConfig(file: string): ReturnType<typeof TrainConfigSchema.parse> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new ConfigError(`${file}: not valid JSON (${(err as Error).message})`, { cause: err });
  }
  const r = TrainConfigSchema.safeParse(raw);
  if (!r.success) {
    const issues = r.error.issues.map((i) => `${i.path.join(".") || "(top level)"}: ${i.message}`);
    throw new ConfigError(`${file}: not a run config: ${issues.join("; ")}`);
  }
  return r.data;
}

/** Registers `eval`. */
export function register(program: Command): void {
  program
    .command("eval")
    .description("evaluate a run (its best or newest checkpoint) or a checkpoint folder on a task's held-out split")
    .argument("<path>", "run folder (runs/<name>) or checkpoint/model folder")
    .option("--checkpoint <name>", "in a run folder: best, start or step-N")
    .option("--task <name>", "task (default: the run's task)")
    .option("--examples <n>", "held-out questions", (v) => Number(v))
    .option("--temperature <t>", "0 = greedy pass@1", (v) => Number(v))
    .option("--k <list>", "pass@k values, e.g. 1,4,8", (v) => v.split(",").map(Number))
    .option("--max-new-tokens <n>", "completion budget", (v) => Number(v))
    .option("--seed <n>", "sampling seed", (v) => Number(v), 0)
    .option("--json", "print one JSON object instead of lines")
    .option("--allow-non-finite", "load a checkpoint even if it has NaN/Inf weights")
    .action(
      withErrors(
        async (
          path: string,
          o: {
            checkpoint?: string;
            task?: string;
            examples?: number;
            temperature?: number;
            k?: number[];
            maxNewTokens?: number;
            seed: number;
            json?: boolean;
            allowNonFinite?: boolean;
          },
        ) => {
          const { dir, config } = resolveModelDir(path, o.checkpoint);
          const taskName = o.task ?? config?.task.name;
          if (!taskName) throw new ConfigError("eval: --task is required for a checkpoint folder outside a run");
          const task = getTask(taskName, config && taskName === config.task.name ? config.task.options : {});
          const examples = task.generate("test", o.examples ?? config?.eval.examples ?? 100, config?.task.seed ?? 0);
          const { model, tokenizer } = loadModel(dir, { allowNonFinite: o.allowNonFinite === true });
          const res = await evaluate(model, tokenizer, task, examples, {
            temperature: o.temperature ?? config?.eval.temperature ?? 0,
            k: o.k ?? config?.eval.k ?? [1],
            maxNewTokens: o.maxNewTokens ?? config?.train.maxCompletionTokens ?? task.maxNewTokens ?? 64,
            seed: o.seed,
          });
          if (o.json) console.log(JSON.stringify({ checkpoint: dir, ...res.metrics }));
          else {
            console.log(`checkpoint: ${dir}`);
            for (const [k, v] of Object.entries(res.metrics)) console.log(`${k.padEnd(36)} ${v.toFixed(4)}`);
          }
        },
      ),
    );
}
