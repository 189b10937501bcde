/**
 * Reading the user's rows: JSONL (one JSON object a line), a Parquet file, or a folder of Parquet shards (the
 * layout Hugging Face `datasets` writes: `data/train-00000-of-00002.parquet`, or `train/0000.parquet`).
 *
 * Parquet is read with hyparquet in a worker (sync-worker.ts) so that a task can be built synchronously. Values come
 * back as plain JSON-like data: INT64 becomes a number (or a string past 2^53), bytes become text. Every error names
 * the file and, for JSONL, the line.
 */
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { extname, join, relative } from "node:path";
import { ConfigError } from "../../util/errors.js";
import { callSync, packageUrl } from "./sync-worker.js";

/** One raw row with where it came from (`file:line` or `file#row`) and the split its shard's name implies. */
export interface RawRow {
  row: Record<string, unknown>;
  where: string;
  shardSplit?: "train" | "test";
}

/** Reads `path` (file or folder) as `format` (auto: by extension). Throws a ConfigError naming the file. */
export function readRows(path: string, format: "auto" | "jsonl" | "parquet" = "auto"): RawRow[] {
  if (!existsSync(path)) throw new ConfigError(`dataset ${path}: file not found`);
  if (statSync(path).isDirectory()) return readShardFolder(path);
  const ext = extname(path).toLowerCase();
  const kind =
    format !== "auto"
      ? format
      : ext === ".parquet"
        ? "parquet"
        : ext === ".jsonl" || ext === ".ndjson"
          ? "jsonl"
          : null;
  if (!kind)
    throw new ConfigError(
      `dataset ${path}: cannot tell the format from "${ext}"; use .jsonl or .parquet, or set format`,
    );
  return kind === "jsonl" ? readJsonl(path) : readParquetFiles([path]).map((r) => ({ row: r.row, where: r.where }));
}

/** Parses a JSONL file; a line that is not a JSON object is an error naming the line. Blank lines are skipped. */
export function readJsonl(path: string): RawRow[] {
  const lines = readFileSync(path, "utf8").split("\n");
  const rows: RawRow[] = [];
  lines.forEach((text, i) => {
    if (text.trim() === "") return;
    let row: unknown;
    try {
      row = JSON.parse(text);
    } catch (err) {
      throw new ConfigError(
        `dataset ${path}:${i + 1}: not valid JSON (${(err as Error).message}): ${text.slice(0, 80)}`,
      );
    }
    if (typeof row !== "object" || row === null || Array.isArray(row))
      throw new ConfigError(`dataset ${path}:${i + 1}: expected a JSON object per line, got ${text.slice(0, 80)}`);
    rows.push({ row: row as Record<string, unknown>, where: `${path}:${i + 1}` });
  });
  if (rows.length === 0) throw new ConfigError(`dataset ${path}: no rows`);
  return rows;
}

/** The split a shard's path names (train, or test/validation/eval), if any. */
export function splitOfShard(relPath: string): "train" | "test" | undefined {
  const m = /(?:^|[\\/_.-])(train|test|validation|valid|eval|dev)(?=[\\/_.-]|$)/i.exec(relPath);
  if (!m) return undefined;
  return m[1]!.toLowerCase() === "train" ? "train" : "test";
}

/** Every .parquet file under `dir` (sorted), each row tagged with its shard's split. */
export function readShardFolder(dir: string): RawRow[] {
  const files: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith(".parquet")) files.push(p);
    }
  };
  walk(dir);
  if (files.length === 0) throw new ConfigError(`dataset ${dir}: the folder holds no .parquet files`);
  return readParquetFiles(files).map((r) => {
    const s = splitOfShard(relative(dir, r.file));
    return { row: r.row, where: r.where, ...(s ? { shardSplit: s } : {}) };
  });
}

// Runs in the worker: reads each file with hyparquet into row objects.
const READ_PARQUET = `
const { parquetReadObjects } = await import(data.hyparquet);
const fs = await import("node:fs");
const out = [];
for (const file of data.files) {
  const b = fs.readFileSync(file);
  try {
    out.push({ file, rows: await parquetReadObjects({ file: b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) }) });
  } catch (err) {
    throw new Error(file + ": not a readable Parquet file (" + (err && err.message ? err.message : err) + ")");
  }
}
return out;
`;

/** Reads Parquet files into rows (`file#i`, 0-based row index). */
export function readParquetFiles(files: string[]): (RawRow & { file: string })[] {
  let parts: { file: string; rows: Record<string, unknown>[] }[];
  try {
    parts = callSync(READ_PARQUET, { files, hyparquet: packageUrl("hyparquet", "src/node.js") });
  } catch (err) {
    throw new ConfigError(`dataset ${(err as Error).message}`);
  }
  return parts.flatMap(({ file, rows }) =>
    rows.map((row, i) => ({ row: plain(row) as Record<string, unknown>, where: `${file}#${i}`, file })),
  );
}

/** Turns Parquet values into JSON-like data: bigint → number (string past 2^53), bytes → UTF-8 text, Date → ISO. */
export function plain(v: unknown): unknown {
  if (typeof v === "bigint") return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (v instanceof Uint8Array) return new TextDecoder().decode(v);
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}
