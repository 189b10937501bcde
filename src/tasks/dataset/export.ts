/**
 * Writing a built-in task's examples in verl's data format, so verl and TRL users can train on them: one row per
 * example with `data_source` (the task name), `prompt` (chat messages: one user turn), `ability`,
 * `reward_model: { style: "rule", ground_truth }` and `extra_info: { split, index, id, gold }`, as Parquet
 * (hyparquet-writer, nested columns as verl's pandas-written files have them) or JSONL.
 *
 * `ground_truth` is the answer text for answer tasks (`{ answer }` golds) and the gold as JSON otherwise; the full
 * gold is kept as JSON in `extra_info.gold`. The dataset reader reads both formats back (test/data/export.test.ts).
 */
import { writeFileSync } from "node:fs";
import { parquetWriteBuffer } from "hyparquet-writer";
import type { Example } from "../types.js";

/** One verl row. */
export interface VerlRow {
  data_source: string;
  prompt: { role: string; content: string }[];
  ability: string;
  reward_model: { style: string; ground_truth: string };
  extra_info: { split: string; index: number; id: string; gold: string };
}

/** The verl row of one example. */
export function verlRow(task: string, split: string, index: number, e: Example, ability = "math"): VerlRow {
  const g = e.gold as { answer?: unknown } | null;
  const answer = g && typeof g === "object" && typeof g.answer === "string" ? g.answer : null;
  const groundTruth = answer ?? (typeof e.gold === "string" ? e.gold : JSON.stringify(e.gold));
  return {
    data_source: task,
    prompt: [{ role: "user", content: e.prompt }],
    ability,
    reward_model: { style: "rule", ground_truth: groundTruth },
    extra_info: { split, index, id: e.id, gold: JSON.stringify(e.gold) },
  };
}

const str = (name: string) => ({
  name,
  type: "BYTE_ARRAY" as const,
  converted_type: "UTF8" as const,
  repetition_type: "OPTIONAL" as const,
});

// verl's schema as pandas/pyarrow writes it: prompt is list<struct<content, role>>, the others structs.
const SCHEMA = [
  { name: "root", num_children: 5 },
  str("data_source"),
  { name: "prompt", repetition_type: "OPTIONAL", converted_type: "LIST", num_children: 1 },
  { name: "list", repetition_type: "REPEATED", num_children: 1 },
  { name: "element", repetition_type: "OPTIONAL", num_children: 2 },
  str("content"),
  str("role"),
  str("ability"),
  { name: "reward_model", repetition_type: "OPTIONAL", num_children: 2 },
  str("ground_truth"),
  str("style"),
  { name: "extra_info", repetition_type: "OPTIONAL", num_children: 4 },
  str("gold"),
  str("id"),
  { name: "index", type: "INT64", repetition_type: "OPTIONAL" },
  str("split"),
];

/** Writes verl rows as a Parquet file. */
export function writeVerlParquet(path: string, rows: readonly VerlRow[]): void {
  const col = <K extends keyof VerlRow>(name: K, f: (r: VerlRow) => unknown = (r) => r[name]) => ({
    name,
    data: rows.map(f),
  });
  const buf = parquetWriteBuffer({
    columnData: [
      col("data_source"),
      col("prompt"),
      col("ability"),
      col("reward_model"),
      col("extra_info", (r) => ({ ...r.extra_info, index: BigInt(r.extra_info.index) })),
    ] as never,
    schema: SCHEMA as never,
  });
  writeFileSync(path, new Uint8Array(buf));
}

/** Writes verl rows as JSONL. */
export function writeVerlJsonl(path: string, rows: readonly VerlRow[]): void {
  writeFileSync(path, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
}
