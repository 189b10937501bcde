/**
 * `rlvr rewards` lists every registered reward with its description and options; `rlvr reward <name> --example FILE
 * --completion FILE [--options JSON]` scores one completion and prints the score, terms and diagnostics, so users
 * can debug their own data. The example file is JSON: either `{ "gold": …, "prompt"?, "tokens"?, "turns"? }` or
 * the gold itself.
 */
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { rewards, type RewardInput } from "../../rewards/index.js";
import { describeOptions, rewardCatalog } from "../../serve/catalog.js";

/** The options of a reward as name, type, default and description (one implementation, in the catalog). */
export { describeOptions };

function readJson(path: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new Error(`${what}: cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${what}: ${path} is not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
}

/** Builds the reward input from an example file's contents and the completion text. */
export function inputFromExample(example: unknown, completion: string): RewardInput {
  const e = example as Record<string, unknown> | null;
  if (e && typeof e === "object" && !Array.isArray(e) && "gold" in e) {
    return {
      completion,
      gold: e.gold,
      ...(typeof e.prompt === "string" ? { prompt: e.prompt } : {}),
      ...(Array.isArray(e.tokens) ? { tokens: e.tokens as number[] } : {}),
      ...(Array.isArray(e.turns) ? { turns: e.turns as string[] } : {}),
    };
  }
  return { completion, gold: example };
}

class CliInputError extends Error {}

function fail(message: string): never {
  throw new CliInputError(message);
}

/** Runs an action; bad input prints `rlvr: <message>` and sets exit code 2 instead of a stack trace. */
function guarded<A extends unknown[]>(fn: (...args: A) => Promise<void> | void): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (err) {
      if (!(err instanceof CliInputError)) throw err;
      console.error(`rlvr: ${err.message}`);
      process.exitCode = 2;
    }
  };
}

/** Registers `rewards` and `reward`. */
export function register(program: Command): void {
  program
    .command("rewards")
    .description("list the registered rewards with their options")
    .option("--json", "print JSON instead of text")
    .action((o: { json?: boolean }) => {
      const list = rewardCatalog();
      if (o.json) return console.log(JSON.stringify(list, null, 2));
      for (const r of list) {
        console.log(`${r.name}${r.modelJudged ? " [MODEL-JUDGED]" : ""}: ${r.description}`);
        for (const opt of r.options) {
          const def = opt.default !== undefined ? ` (default ${JSON.stringify(opt.default)})` : "";
          console.log(`    ${opt.name} <${opt.type}>${def}${opt.description ? `  ${opt.description}` : ""}`);
        }
      }
    });
  program
    .command("reward")
    .description("score one completion with a reward and print the score and terms")
    .argument("<name>", "reward name (see `rlvr rewards`)")
    .requiredOption("--example <file>", 'JSON file: {"gold": …, "prompt"?, "tokens"?, "turns"?} or the gold itself')
    .requiredOption("--completion <file>", "text file holding the completion")
    .option("--options <json>", "reward options as JSON", "{}")
    .option("--json", "print the result as JSON")
    .action(
      guarded(async (name: string, o: { example: string; completion: string; options: string; json?: boolean }) => {
        if (!rewards.has(name))
          fail(
            `unknown reward "${name}"; known: ${rewards
              .list()
              .map((s) => s.name)
              .join(", ")}`,
          );
        let options: unknown;
        try {
          options = JSON.parse(o.options);
        } catch {
          fail(`--options is not valid JSON: ${o.options}`);
        }
        const parsed = rewards.get(name).options.safeParse(options ?? {});
        if (!parsed.success)
          fail(
            `--options for ${name}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")}`,
          );
        let example: unknown;
        let completion: string;
        try {
          example = readJson(o.example, "--example");
          completion = readFileSync(o.completion, "utf8");
        } catch (err) {
          fail(err instanceof Error ? err.message : String(err));
        }
        const result = await rewards.score(name, inputFromExample(example, completion), options);
        if (o.json) return console.log(JSON.stringify({ reward: name, ...result }, null, 2));
        console.log(`reward: ${name}`);
        console.log(`score:  ${result.score === null ? "null (not scorable)" : result.score}`);
        for (const [k, v] of Object.entries(result.terms)) console.log(`  ${k}: ${v}`);
        if (result.info) console.log(`info:   ${JSON.stringify(result.info)}`);
      }),
    );
}
