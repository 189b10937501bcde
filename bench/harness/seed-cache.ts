/**
 * One seed's result of an effect bench, kept on disk so that a bench whose seeds take hours each can run them in
 * separate sessions and report them together. A stored result is reused only when it was made with the same
 * settings (compared as JSON) and the caller asked for reuse; it carries the source hash of the code that made it,
 * and `sourcesDiffer` tells the report when the reused seeds were made by different code, so the report can say so.
 *
 * Records live in the bench's work folder (runs/, not in git). A record may also be kept in the repository
 * (bench/results/<bench>/): then a fresh clone can report seeds measured in earlier sessions, each with its date,
 * source hash and machine, instead of spending hours to remeasure them. New results are only written to the work
 * folder; keeping one is a deliberate copy and commit.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/**
 * A stored seed result: the settings it was made with, the source hash of the code, when, where (for example the
 * engine's SIMD and thread count, which change the rounding and so the exact figures), and the result.
 */
export interface SeedRecord<R> {
  settings: unknown;
  source: string;
  /** When the run that made the result began (ISO time). */
  madeAt: string;
  /** When it finished (ISO time); absent in records written before 2026-12-07 15:00. */
  finishedAt?: string;
  machine?: unknown;
  result: R;
}

/** Where a seed's record is written and looked up, what it depends on, and whether to reuse one. */
export interface SeedCacheOptions {
  /** The work folder's record: read first, and where a new result is written. */
  file: string;
  /** Further records to reuse, in order (records kept in the repository). Never written. */
  kept?: readonly string[];
  /** What the result depends on; a record is reused only when its settings are equal (as JSON). */
  settings: unknown;
  /** The source hash of the code now (recorded with a new result). */
  source: string;
  /** Whether to reuse a stored record at all. */
  reuse: boolean;
  /** Where a new result is made (recorded, not compared). */
  machine?: unknown;
}

/**
 * The result of one seed: the first stored record among `file` and `kept` with equal settings when `reuse` is set,
 * else the result of `run`, which is then stored in `file` (with `source`, the time and `machine`). `reused` says
 * which, and `from` names the record's file.
 */
export async function seedResult<R>(
  opts: SeedCacheOptions,
  run: () => Promise<R>,
): Promise<SeedRecord<R> & { reused: boolean; from: string }> {
  const stored = storedResult<R>(opts);
  if (stored) return stored;
  const { settings, source, machine } = opts;
  const madeAt = new Date().toISOString();
  const result = await run();
  const record: SeedRecord<R> = {
    settings,
    source,
    madeAt,
    finishedAt: new Date().toISOString(),
    ...(machine === undefined ? {} : { machine }),
    result,
  };
  mkdirSync(dirname(opts.file), { recursive: true });
  writeFileSync(opts.file, JSON.stringify(record, null, 1));
  return { ...record, reused: false, from: opts.file };
}

/**
 * The first stored record among `file` and `kept` whose settings equal `settings` (as JSON), or null; always null
 * unless `reuse` is set. Nothing is run or written.
 */
export function storedResult<R>(
  opts: Pick<SeedCacheOptions, "file" | "kept" | "settings" | "reuse">,
): (SeedRecord<R> & { reused: true; from: string }) | null {
  const wanted = JSON.stringify(opts.settings);
  for (const f of opts.reuse ? [opts.file, ...(opts.kept ?? [])] : []) {
    if (!existsSync(f)) continue;
    const old = JSON.parse(readFileSync(f, "utf8")) as SeedRecord<R>;
    if (JSON.stringify(old.settings) === wanted) return { ...old, reused: true, from: f };
  }
  return null;
}

/** Every record stored in `files` (those that exist), in order, each with its file. */
export function storedRecords<R>(files: readonly string[]): (SeedRecord<R> & { from: string })[] {
  return files
    .filter((f) => existsSync(f))
    .map((f) => ({ ...(JSON.parse(readFileSync(f, "utf8")) as SeedRecord<R>), from: f }));
}

/** Whether the records were made by more than one version of the code (their source hashes differ). */
export function sourcesDiffer(records: readonly { source: string }[]): boolean {
  return new Set(records.map((r) => r.source)).size > 1;
}
