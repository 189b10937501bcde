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
