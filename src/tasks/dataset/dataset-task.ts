/**
 * The "dataset" task: the user's own rows (JSONL, verl Parquet, a folder of Parquet shards) with the reward the
 * recipe names, as a registered task, so `task: { name: dataset, options: { path, ... } }` (or the short form
 * `task: { type: dataset, path, ... }`) trains on it like on any built-in task (docs/data.md).
 *
 * Departures from a generator task: `generate(split, count, seed)` returns at most the rows the split has (a
 * seeded shuffle, then the first `count`), and ids are the data's own. Rows go to the held-out split by their split
 * column, their shard's name, a separate `testPath`, or else a hash of the prompt (`testPercent`). Golds that the
 * reward cannot parse are found at load (`badGolds`), never at step 400.
 */
import { existsSync, statSync } from "node:fs";
import { ConfigError } from "../../util/errors.js";
import { Rng } from "../../util/rng.js";
import { splitOf } from "../generate.js";
import type { TaskDefinition } from "../registry.js";
import { scoreWithTerms } from "../score.js";
import type { Example, Task } from "../types.js";
import { datasetOptions, type DatasetOptions } from "./options.js";
import { promptRenderer } from "./prompt.js";
import { readRows } from "./read.js";
import { mapRows, type DatasetRow } from "./rows.js";
import {
  goldCompletionFor,
  goldFor,
  goldParses,
  moduleRefs,
  termsOf,
  validateUserModule,
  type DatasetGold,
  type DatasetTerm,
} from "./terms.js";

/** A loaded dataset: rendered examples by split, the term sets and what the gold check found. */
export interface LoadedDataset {
  rows: DatasetRow[];
  examples: { train: Example<DatasetGold>[]; test: Example<DatasetGold>[] };
  /** Terms by data source ("" = the default spec). */
  termSets: Map<string, DatasetTerm[]>;
  /** Rows whose gold the correctness term could not parse (`where`: file and row). */
  badGolds: { where: string; gold: unknown }[];
  /** Rows whose golds were checked (sync rewards only). */
  checked: number;
  chatTemplate: string | null;
}

// The recipe loader and the trainer both build the task: the second build reuses the first load while the options
// and the files (size and modification time of the data, test data and reward modules) are the same.
const loaded = new Map<string, LoadedDataset>();
const CACHE_SIZE = 4;

function cacheKey(o: DatasetOptions): string {
  const specs = [o.reward, ...Object.values(o.rewardBySource ?? {})];
  const files = [o.path, o.testPath, ...specs.flatMap((sp) => moduleRefs(sp).map((m) => m.module))];
  const stamp = (p: string | undefined) => {
    if (p === undefined || !existsSync(p)) return "-";
    const st = statSync(p);
    return `${st.size}:${st.mtimeMs}`;
  };
  return JSON.stringify([o, files.map(stamp)]);
}

/** Reads, maps, renders and checks a dataset (synchronously; Parquet in a worker); cached, see above. */
export function loadDataset(o: DatasetOptions): LoadedDataset {
  const key = cacheKey(o);
  const hit = loaded.get(key);
  if (hit) return hit;
  const data = readDataset(o);
  if (loaded.size >= CACHE_SIZE) loaded.delete(loaded.keys().next().value!);
  loaded.set(key, data);
  return data;
}

function readDataset(o: DatasetOptions): LoadedDataset {
  const rows = mapRows(readRows(o.path, o.format), o);
  if (o.testPath) {
    for (const r of rows) r.split = "train";
    rows.push(...mapRows(readRows(o.testPath, o.format), o).map((r) => ({ ...r, split: "test" as const })));
  }
  const termSets = new Map<string, DatasetTerm[]>([["", termsOf(o.reward)]]);
  for (const [source, spec] of Object.entries(o.rewardBySource ?? {})) termSets.set(source, termsOf(spec));
  for (const [source, terms] of termSets)
    if (!terms.some((t) => t.name === o.correctTerm))
      throw new ConfigError(
        `dataset correctTerm: "${o.correctTerm}" is not a term of the ${source ? `"${source}" ` : ""}reward; ` +
          `terms: ${terms.map((t) => t.name).join(", ")}`,
      );
  const renderer = promptRenderer(o);
  const termsFor = (source?: string): DatasetTerm[] =>
    (source !== undefined ? termSets.get(source) : undefined) ?? termSets.get("")!;
  const goldOf = (r: DatasetRow): DatasetGold => ({
    answer: r.gold,
    ...(r.dataSource !== undefined ? { dataSource: r.dataSource } : {}),
    ...(r.extraInfo !== undefined ? { extraInfo: r.extraInfo } : {}),
  });

  // User modules: checked once, on the first row that uses them.
  const specs = [["", o.reward] as const, ...Object.entries(o.rewardBySource ?? {})];
  for (const [source, spec] of specs) {
    const first = rows.find((r) => source === "" || r.dataSource === source);
    if (!first) continue;
    for (const ref of moduleRefs(spec)) {
      if (!existsSync(ref.module)) throw new ConfigError(`reward module ${ref.module}: file not found`);
      validateUserModule(ref, goldOf(first), renderer.render(first.prompt));
    }
  }

  let pattern: RegExp | null = null;
  try {
    if (o.goldPattern !== undefined) pattern = new RegExp(o.goldPattern, "m");
  } catch (err) {
    throw new ConfigError(`dataset goldPattern: not a regular expression (${(err as Error).message})`);
  }
  // A gold the pattern does not match counts as one that does not parse.
  const badGolds: LoadedDataset["badGolds"] = [];
  let checked = 0;
  const examples: LoadedDataset["examples"] = { train: [], test: [] };
  const rowNumber = new Map<Example<DatasetGold>, number>();
  let n = 0;
  for (const r of rows) {
    const prompt = renderer.render(r.prompt);
    const gold = goldOf(r);
    const terms = termsFor(r.dataSource);
    const correct = terms.find((t) => t.name === o.correctTerm)!;
    const m = pattern && typeof r.gold === "string" ? pattern.exec(r.gold) : null;
    if (m) gold.answer = (m[1] ?? m[0]).trim();
    const parses = !pattern || m ? goldParses(correct, gold, prompt) : false;
    if (parses !== null) checked++;
    if (parses === false) {
      badGolds.push({ where: r.where, gold: r.gold });
      if (o.badGolds === "drop") continue;
    }
    const split = r.split ?? splitOf(prompt, o.testPercent);
    const goldCompletion = r.completion ?? goldCompletionFor(correct, gold);
    examples[split].push({ id: `dataset/${split}/${r.id}`, prompt, gold, goldCompletion });
    rowNumber.set(examples[split].at(-1)!, n++);
  }
  // Ids must be unique per split (the trainer keys examples by id). Concatenated verl sets repeat
  // extra_info.index per source, so a repeat makes every id of that split its row number instead.
  for (const split of ["train", "test"] as const) {
    const ids = examples[split].map((e) => e.id);
    if (new Set(ids).size < ids.length)
      for (const e of examples[split]) e.id = `dataset/${split}/row-${rowNumber.get(e)}`;
  }
  if (badGolds.length > 0 && o.badGolds === "error") {
    const list = badGolds.slice(0, 5).map((b) => `  ${b.where}: ${JSON.stringify(b.gold)?.slice(0, 60)}`);
    throw new ConfigError(
      `dataset ${o.path}: ${badGolds.length} of ${rows.length} golds cannot be parsed by reward ` +
        `"${termsFor().find((t) => t.name === o.correctTerm)?.reward ?? "?"}" (set badGolds: drop or keep to go on)\n${list.join("\n")}`,
    );
  }
  return { rows, examples, termSets, badGolds, checked, chatTemplate: renderer.template };
}

/** A seeded shuffle of `xs` (Fisher–Yates), first `count`. */
function pick<T>(xs: readonly T[], count: number, seed: number, split: string): T[] {
  const rng = new Rng(seed).split(`dataset/${split}`);
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out.slice(0, count);
}

/** Builds the "dataset" task: loads and checks the data now; each example is scored with its source's terms. */
export function createDatasetTask(options: Partial<DatasetOptions> & { path: string }): Task<DatasetGold> {
  const o = datasetOptions.parse(options);
  const data = loadDataset(o);
  const all = [...data.termSets.values()].flat();
  const termsOfRow = (source?: string): DatasetTerm[] =>
    (source !== undefined ? data.termSets.get(source) : undefined) ?? data.termSets.get("")!;
  return {
    name: "dataset",
    description: `${data.rows.length} rows from ${o.path} (${data.examples.train.length} train, ${data.examples.test.length} test)`,
    terms: all.filter((t, i) => all.findIndex((u) => u.name === t.name) === i),
    correctTerm: o.correctTerm,
    ...(o.stop ? { stop: o.stop } : {}),
    ...(o.maxNewTokens ? { maxNewTokens: o.maxNewTokens } : {}),
    generate: (split, count, seed) => pick(data.examples[split], count, seed, split),
    score(example, completion, tokens) {
      const input = { completion, gold: example.gold, prompt: example.prompt, ...(tokens ? { tokens } : {}) };
      const terms = termsOfRow(example.gold.dataSource);
      return scoreWithTerms(terms, input, { goldFor: (t) => goldFor(t as DatasetTerm, example.gold) });
    },
  };
}

/** Registry definition of "dataset". */
export const datasetTask: TaskDefinition<DatasetOptions> = {
  name: "dataset",
  description: "your own rows: JSONL, verl Parquet or a folder of Parquet shards, with a named or user reward",
  options: datasetOptions as never,
  create: (o) => createDatasetTask(o),
  localOnly: true, // its options name files to read and reward modules to import
};
