/**
 * `npm run bench:seeds [name...]`: every seed system of the concept card trained long enough to show (or fail to
 * show) its paper's effect, one module per system under `bench/seeds/` (see `bench/seeds/types.ts`). With names,
 * only those systems run; without, all of them, one after another (the whole set takes hours on 2 cores).
 *
 * Environment: BENCH_SEED_LIST (reported seeds, default 0,1,2), BENCH_SEEDS_SMOKE=1 (tiny plumbing run),
 * BENCH_SEEDS_OUT (work folder, default runs/bench-seeds), BENCH_JOB_REUSE=1 (jobs that finished with the same spec
 * and code are not rerun, so a stopped run goes on where it stopped: bench/harness/child-job.ts). Output: JSON lines `seeds.<system>.<figure>` plus
 * readable lines; docs/seed-systems.md holds the table of measured figures and the commands behind them.
 */
import { mkdirSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { seedsFromEnv } from "./harness/index.js";
import type { SeedContext, SeedSystem } from "./seeds/types.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const SYSTEMS_DIR = join(HERE, "seeds");
const OUT = resolve(process.env.BENCH_SEEDS_OUT ?? join(HERE, "..", "runs", "bench-seeds"));

/** Every system module in `bench/seeds/` (all `.ts` files there except `types.ts`), in name order. */
export async function loadSystems(dir: string = SYSTEMS_DIR): Promise<SeedSystem[]> {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".ts") && f !== "types.ts" && !f.endsWith(".test.ts"))
    .sort();
  const systems: SeedSystem[] = [];
  for (const f of files) {
    const mod = (await import(pathToFileURL(join(dir, f)).href)) as { default?: SeedSystem };
    const s = mod.default;
    if (!s || typeof s.name !== "string" || typeof s.run !== "function")
      throw new Error(`bench/seeds/${f}: the default export is not a SeedSystem {name, claim, run}`);
    systems.push(s);
  }
  return systems;
}

/** The systems named on the command line (all when none); an unknown name fails with the list of known ones. */
export function selectSystems(all: SeedSystem[], names: string[]): SeedSystem[] {
  if (names.length === 0) return all;
  const known = new Map(all.map((s) => [s.name, s]));
  return names.map((n) => {
    const s = known.get(n);
    if (!s) throw new Error(`bench:seeds: unknown system ${JSON.stringify(n)}; known: ${[...known.keys()].join(", ")}`);
    return s;
  });
}

function contextFor(system: SeedSystem, seeds: number[], smoke: boolean): SeedContext {
  const workDir = join(OUT, system.name);
  mkdirSync(workDir, { recursive: true });
  return {
    seeds,
    smoke,
    workDir,
    emit(metric, value, unit, extra = {}) {
      const v = Number.isFinite(value) ? Number(value.toPrecision(5)) : value;
      console.log(
        JSON.stringify({ bench: "seeds", metric: `seeds.${system.name}.${metric}`, value: v, unit, ...extra }),
      );
    },
    log(line) {
      console.log(`[${system.name}] ${line}`);
    },
  };
}

async function main(): Promise<void> {
  const seeds = seedsFromEnv(process.env.BENCH_SEED_LIST, [0, 1, 2]);
  const smoke = process.env.BENCH_SEEDS_SMOKE === "1";
  const systems = selectSystems(await loadSystems(), process.argv.slice(2));
  console.log(
    `bench:seeds: ${systems.map((s) => s.name).join(", ")} on seeds ${seeds.join(",")}${smoke ? " (smoke)" : ""}`,
  );
  for (const s of systems) {
    console.log(`\n== ${s.name}: ${s.claim}`);
    const t0 = Date.now();
    await s.run(contextFor(s, seeds, smoke));
    console.log(`[${s.name}] done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
