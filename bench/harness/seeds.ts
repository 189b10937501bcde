/** Bench settings from the environment: the seeds of a reported run, and whole-number counts. */

/** The seeds of a bench's reported run: `BENCH_SEED_LIST` (e.g. `3,4,5`), else the given default list. */
export function seedsFromEnv(value: string | undefined, fallback: readonly number[]): number[] {
  const seeds =
    value === undefined || value.trim() === "" ? [...fallback] : value.split(",").map((s) => Number(s.trim()));
  if (seeds.length === 0 || seeds.some((s) => !Number.isInteger(s) || s < 0)) {
    throw new Error(
      `BENCH_SEED_LIST: ${JSON.stringify(value)}; expected comma-separated non-negative integers such as 3,4,5`,
    );
  }
  if (new Set(seeds).size !== seeds.length) throw new Error(`BENCH_SEED_LIST: ${JSON.stringify(value)} repeats a seed`);
  return seeds;
}

/** A whole number ≥ 1 from the environment variable `name` (a step count, a group size), or `fallback` when unset. */
export function countFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name}: a whole number ≥ 1, not ${JSON.stringify(raw)}`);
  return n;
}
