/**
 * Command flags that mirror a zod options object, shared by the service commands (`serve`, `serve-rewards`,
 * `reward-worker`): each flag's help is its schema field's description with the default the field parses to, and
 * the flag strings become option values (strings for text fields; numbers otherwise, an empty value becoming NaN so
 * that the schema's error names the flag).
 */
import type { Command } from "commander";
import type { z } from "zod";

/** `[option key, commander flag]` pairs, e.g. `["maxItems", "--max-items <n>"]`. */
export type FlagTable = readonly (readonly [key: string, flag: string])[];

/** Adds one commander option per flag; keys in `noDefault` (secrets, optional URLs) show no default. */
export function addSchemaFlags(
  cmd: Command,
  table: FlagTable,
  shape: Readonly<Record<string, z.ZodType>>,
  noDefault: ReadonlySet<string> = new Set(),
): void {
  for (const [key, flag] of table) {
    const field = shape[key];
    if (!field) throw new Error(`addSchemaFlags: the options schema has no field "${key}"`);
    const def = noDefault.has(key) ? undefined : (field.parse(undefined) as unknown);
    cmd.option(flag, `${field.description ?? key}${def !== undefined ? ` (default ${JSON.stringify(def)})` : ""}`);
  }
}

/** The flags that were given, as option values: strings for the `text` keys, numbers for the others. */
export function flagValues(
  flags: Readonly<Partial<Record<string, string>>>,
  table: FlagTable,
  text: ReadonlySet<string>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key] of table) {
    const v = flags[key];
    if (v === undefined) continue;
    out[key] = text.has(key) ? v : v.trim() === "" ? NaN : Number(v);
  }
  return out;
}
