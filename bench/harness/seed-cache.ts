/**
 * One seed's result of an effect bench, kept on disk so that a bench whose seeds take hours each can run them in
 * separate sessions and report them together. A stored result is reused only when it was made with the same
 * settings (compared as JSON) and the caller asked for reuse; it carries the source hash of the code that made it,
 * and `sourcesDiffer` tells the report when the reused seeds were made by different code, so the report can say so.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/**
 * A stored seed result: the settings it was made with, the source hash of the code, when, where (for example the
 * engine's thread count, which changes the rounding and so the exact figures), and the result.
 */
export interface SeedRecord<R> {
  settings: unknown;
  source: string;
  madeAt: string;
  machine?: unknown;
  result: R;
}

/**
 * The result of one seed: `file`'s stored one when `reuse` is set and its settings equal `settings`, else the result
 * of `run`, which is then stored in `file` (with `source`, the time and `machine`). `reused` says which.
 */
export async function seedResult<R>(
  file: string,
  settings: unknown,
  source: string,
  reuse: boolean,
  run: () => Promise<R>,
  machine?: unknown,
): Promise<SeedRecord<R> & { reused: boolean }> {
  if (reuse && existsSync(file)) {
    const old = JSON.parse(readFileSync(file, "utf8")) as SeedRecord<R>;
    if (JSON.stringify(old.settings) === JSON.stringify(settings)) return { ...old, reused: true };
  }
  const madeAt = new Date().toISOString();
  const record: SeedRecord<R> = {
    settings,
    source,
    madeAt,
    ...(machine === undefined ? {} : { machine }),
    result: await run(),
  };
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(record, null, 1));
  return { ...record, reused: false };
}

/** Whether the records were made by more than one version of the code (their source hashes differ). */
export function sourcesDiffer(records: readonly { source: string }[]): boolean {
  return new Set(records.map((r) => r.source)).size > 1;
}
