/**
 * The contract of one seed system in `npm run bench:seeds` (bench/seeds.ts). Each system of the concept card lives
 * in its own module, `bench/seeds/<name>.ts`, whose default export is a `SeedSystem`; the runner finds the modules
 * by listing this folder (shared code goes under `bench/seeds/lib/`), so adding a system touches no other file.
 */

/** What the runner gives a system. */
export interface SeedContext {
  /** The reported seeds: `BENCH_SEED_LIST`, default 0,1,2. Settings are tuned on other seeds or a tune split. */
  seeds: number[];
  /** `BENCH_SEEDS_SMOKE=1`: the same jobs at a tiny size, to check the plumbing; the figures mean nothing. */
  smoke: boolean;
  /** The system's work folder, `runs/bench-seeds/<name>` (SFT starts are cached here, keyed by `sourceHash`). */
  workDir: string;
  /** Prints one JSON line `{bench: "seeds", metric: "seeds.<name>.<metric>", value, unit, ...extra}`. */
  emit(metric: string, value: number, unit: string, extra?: Record<string, unknown>): void;
  /** Prints one readable line, prefixed with the system's name. */
  log(line: string): void;
}

/** One seed system: its paper's claim and the run that measures our figure for it. */
export interface SeedSystem {
  /** Short name, used on the command line and in metric names (`openrs`, `drgrpo`, `exgrpo`, `sirl`, ...). */
  name: string;
  /** The paper's claim, one sentence, as the docs table quotes it. */
  claim: string;
  run(ctx: SeedContext): Promise<void>;
}
