/**
 * `rlvr data inspect FILE` and `rlvr data export TASK` (docs/data.md).
 *
 * inspect: reads a dataset as the "dataset" task would (same readers, field mapping and prompt rendering), and prints
 * the row count, the columns, five examples as the model will see them, and how many golds the chosen reward can
 * parse, listing the first that cannot, so a bad gold is found before training.
 * export: writes a built-in task's examples in verl's format (Parquet or JSONL), which the dataset reader reads back.
 */
import { resolve } from "node:path";
import type { Command } from "commander";
import { withErrors } from "../errors.js";
import { ConfigError } from "../../util/errors.js";
import { getTask } from "../../tasks/index.js";
import {
  datasetOptions,
  loadDataset,
  readRows,
  verlRow,
  writeVerlJsonl,
  writeVerlParquet,
  type VerlRow,
} from "../../tasks/dataset/index.js";

/** Options of `data inspect`. */
export interface InspectOptions {
  reward?: string;
  prompt?: string;
  gold?: string;
  split?: string;
  model?: string;
  goldPattern?: string;
  show?: number;
}

/** `--reward`: a registry name, or a module `./file.ts#export` (export default: `default`). */
export function rewardArg(arg: string): string | { module: string; export: string } {
  const m = /^(.+\.(?:[mc]?[jt]s))(?:#(.+))?$/.exec(arg);
  return m ? { module: resolve(m[1]!), export: m[2] ?? "default" } : arg;
}

/** The report of `rlvr data inspect` as text. */
export function inspectDataset(path: string, o: InspectOptions = {}): string {
  const fields = {
    ...(o.prompt ? { prompt: o.prompt } : {}),
    ...(o.gold ? { gold: o.gold } : {}),
    ...(o.split ? { split: o.split } : {}),
  };
  const options = datasetOptions.parse({
    path,
    fields,
    badGolds: "keep",
    ...(o.reward ? { reward: rewardArg(o.reward) } : {}),
    ...(o.model ? { modelPath: o.model } : {}),
    ...(o.goldPattern ? { goldPattern: o.goldPattern } : {}),
  });
  const first = readRows(path, options.format)[0]!;
  const data = loadDataset(options);
  const { train, test } = data.examples;
  const reward = data.termSets
    .get("")!
    .map((t) => t.reward)
    .join(" + ");
  const lines = [
    `${path}: ${data.rows.length} rows (${train.length} train, ${test.length} test)`,
    `fields: ${Object.entries(first.row)
      .map(([k, v]) => `${k} (${Array.isArray(v) ? "list" : v === null ? "null" : typeof v})`)
      .join(", ")}`,
    `chat template: ${data.chatTemplate ? "yes (the model's)" : "none (prompts as they are)"}`,
  ];
  for (const e of [...train, ...test].slice(0, o.show ?? 5)) {
    lines.push(`--- ${e.id}`, e.prompt, `gold: ${JSON.stringify(e.gold.answer)}`);
  }
  lines.push("---");
  const ok = data.checked - data.badGolds.length;
  if (data.checked === 0) lines.push(`golds: not checked (reward ${reward} answers asynchronously)`);
  else lines.push(`golds the reward ${reward} can parse: ${ok} of ${data.checked}`);
  for (const b of data.badGolds.slice(0, 10)) lines.push(`  cannot parse ${JSON.stringify(b.gold)} at ${b.where}`);
  return lines.join("\n");
}

/** Options of `data export`. */
export interface ExportOptions {
  format: "parquet" | "jsonl";
  out: string;
  split: "train" | "test" | "both";
  count: number;
  seed: number;
  options?: string;
}

/** Writes a registered task's examples in verl's format; returns the number of rows. */
export function exportTask(name: string, o: ExportOptions): number {
  let taskOptions: unknown = {};
  if (o.options) {
    try {
      taskOptions = JSON.parse(o.options);
    } catch (err) {
      throw new ConfigError(`--options: not valid JSON (${(err as Error).message})`);
    }
  }
  const task = getTask(name, taskOptions);
  const splits = o.split === "both" ? (["train", "test"] as const) : [o.split];
  const rows: VerlRow[] = [];
  for (const split of splits)
    task.generate(split, o.count, o.seed).forEach((e, i) => rows.push(verlRow(task.name, split, i, e)));
  if (o.format === "parquet") writeVerlParquet(o.out, rows);
  else writeVerlJsonl(o.out, rows);
  return rows.length;
}

/** Registers `data`. */
export function register(program: Command): void {
  const data = program.command("data").description("inspect your own dataset, or export a built-in task as verl data");
  data
    .command("inspect")
    .description("rows, fields, five prompts as the model sees them, and how many golds the reward can parse")
    .argument("<file>", "a .jsonl or .parquet file, or a folder of .parquet shards")
    .option("--reward <name>", "the reward: a registry name (default math-answer) or ./my-reward.ts#export")
    .option("--prompt <field>", "prompt column (dotted path)")
    .option("--gold <field>", "gold column (dotted path)")
    .option("--split <field>", "split column (dotted path)")
    .option("--model <dir>", "model folder whose chat template renders the prompts")
    .option("--gold-pattern <regex>", "the gold is this regex's first group (GSM8K: '#### (.+)$')")
    .option("--show <n>", "examples to print", (v) => Number(v), 5)
    .action(withErrors((file: string, o: InspectOptions) => console.log(inspectDataset(file, o))));
  data
    .command("export")
    .description("write a built-in task's examples in verl's format (data_source, prompt, reward_model, ...)")
    .argument("<task>", "task name (see `rlvr tasks`)")
    .requiredOption("--out <path>", "output file")
    .option("--format <format>", "parquet or jsonl", "parquet")
    .option("--split <split>", "train, test or both", "both")
    .option("--count <n>", "examples per split", (v) => Number(v), 1000)
    .option("--seed <n>", "generator seed", (v) => Number(v), 0)
    .option("--options <json>", "the task's options as JSON")
    .action(
      withErrors((task: string, o: ExportOptions) => {
        if (o.format !== "parquet" && o.format !== "jsonl")
          throw new ConfigError(`--format: ${JSON.stringify(o.format)} is not allowed; allowed: parquet | jsonl`);
        if (!["train", "test", "both"].includes(o.split))
          throw new ConfigError(`--split: ${JSON.stringify(o.split)} is not allowed; allowed: train | test | both`);
        console.log(`wrote ${exportTask(task, o)} rows to ${o.out}`);
      }),
    );
}
