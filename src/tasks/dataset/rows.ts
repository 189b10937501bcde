/**
 * Field mapping: raw rows (read.ts) → dataset rows with a prompt, a gold, a split and a data source.
 *
 * A field named in the options must be a column of the data (the error lists the columns there are); an unnamed
 * field takes the first usual name present in the first row (options.ts `DEFAULT_FIELDS`). A row without a value
 * in a mapped column, or with a prompt that is neither text nor chat messages, is an error naming the row.
 */
import { ConfigError } from "../../util/errors.js";
import { DEFAULT_FIELDS, type DatasetOptions } from "./options.js";
import type { RawRow } from "./read.js";

/** A chat message, as verl's `prompt` column holds them. */
export interface ChatMessage {
  role: string;
  content: string;
}

/** One row after mapping. */
export interface DatasetRow {
  id: string;
  /** Text, or chat messages (rendered by prompt.ts). */
  prompt: string | ChatMessage[];
  /** The ground truth as stored (a string for verl data). */
  gold: unknown;
  split?: "train" | "test";
  dataSource?: string;
  extraInfo?: unknown;
  /** A full-credit completion when the data has one (SFT warm start). */
  completion?: string;
  /** `file:line` or `file#row`, for errors. */
  where: string;
}

/** The value at a dotted path (`reward_model.ground_truth`), or undefined. */
export function at(row: unknown, path: string): unknown {
  let cur = row;
  for (const k of path.split(".")) {
    if (typeof cur !== "object" || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

/** Dotted paths of a row's columns and of one level inside struct columns (for error messages). */
function columnsOf(row: Record<string, unknown>): string[] {
  return Object.entries(row).flatMap(([k, v]) =>
    v && typeof v === "object" && !Array.isArray(v) ? [k, ...Object.keys(v).map((s) => `${k}.${s}`)] : [k],
  );
}

type Field = keyof typeof DEFAULT_FIELDS;

/** The column used for `field`: the named one (must exist) or the first usual name present; null if none. */
export function resolveField(field: Field, options: DatasetOptions, first: RawRow): string | null {
  const named = options.fields[field];
  if (named !== undefined) {
    if (at(first.row, named) === undefined)
      throw new ConfigError(
        `dataset ${first.where}: missing column "${named}" (fields.${field}); columns: ${columnsOf(first.row).join(", ")}`,
      );
    return named;
  }
  return DEFAULT_FIELDS[field].find((c) => at(first.row, c) !== undefined) ?? null;
}

/** A prompt value as text or messages; anything else is an error naming the row and column. */
function promptOf(v: unknown, where: string, column: string): string | ChatMessage[] {
  if (typeof v === "string") return v;
  const ok =
    Array.isArray(v) &&
    v.length > 0 &&
    v.every((m) => m && typeof m === "object" && typeof m.role === "string" && typeof m.content === "string");
  if (ok) return (v as ChatMessage[]).map((m) => ({ role: m.role, content: m.content }));
  throw new ConfigError(
    `dataset ${where}: column "${column}" must be a string or a list of {role, content} messages, got ${JSON.stringify(v)?.slice(0, 80)}`,
  );
}

/** "train" or "test" from a split value (validation/eval/dev count as test); else an error naming the row. */
function splitValue(v: unknown, where: string, column: string): "train" | "test" {
  const s = String(v).toLowerCase();
  if (s === "train") return "train";
  if (["test", "validation", "valid", "eval", "dev"].includes(s)) return "test";
  throw new ConfigError(`dataset ${where}: column "${column}" is ${JSON.stringify(v)}; expected train or test`);
}

/** Maps raw rows to dataset rows with the options' field mapping. */
export function mapRows(raw: RawRow[], options: DatasetOptions): DatasetRow[] {
  const first = raw[0]!;
  const promptCol = resolveField("prompt", options, first);
  const goldCol = resolveField("gold", options, first);
  const names = (f: Field): string => DEFAULT_FIELDS[f].join(", ");
  if (!promptCol)
    throw new ConfigError(
      `dataset ${first.where}: no prompt column (tried ${names("prompt")}); columns: ${columnsOf(first.row).join(", ")}; set fields.prompt`,
    );
  if (!goldCol)
    throw new ConfigError(
      `dataset ${first.where}: no gold column (tried ${names("gold")}); columns: ${columnsOf(first.row).join(", ")}; set fields.gold`,
    );
  const splitCol = resolveField("split", options, first);
  const sourceCol = resolveField("dataSource", options, first);
  const idCol = resolveField("id", options, first);
  const completionCol = resolveField("completion", options, first);
  return raw.map((r, i) => {
    const need = (col: string): unknown => {
      const v = at(r.row, col);
      if (v === undefined || v === null) throw new ConfigError(`dataset ${r.where}: no value in column "${col}"`);
      return v;
    };
    const split = splitCol ? splitValue(need(splitCol), r.where, splitCol) : r.shardSplit;
    const extraInfo = at(r.row, "extra_info");
    const completion = completionCol ? need(completionCol) : undefined;
    return {
      id: idCol && at(r.row, idCol) !== undefined ? String(at(r.row, idCol)) : String(i),
      prompt: promptOf(need(promptCol), r.where, promptCol),
      gold: need(goldCol),
      ...(split ? { split } : {}),
      ...(sourceCol ? { dataSource: String(need(sourceCol)) } : {}),
      ...(extraInfo !== undefined ? { extraInfo } : {}),
      ...(completion !== undefined ? { completion: String(completion) } : {}),
      where: r.where,
    };
  });
}
