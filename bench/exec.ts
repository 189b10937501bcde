/**
 * `npm run bench:exec`: throughput of the rewards that run things, with the reward pool at 2 workers (2 cores).
 * - solver: SIRL checks/s (gold completions of distinct generated problems: sandboxed program + HiGHS solve);
 * - kernel: kernel evaluations/s with the short `test` profile (evaluations hold the timing lock, so they run one
 *   at a time), seconds per evaluation with the spec's `train` profile (2 s + 5 s), and the speedups S that the
 *   naive and register-blocked kernels get under the default `meanOfRatios` (paired, interleaved);
 * - car: laps/s from bench/car.ts (`benchCarLaps`, the MPC car helper's metric).
 * Prints one JSON object per line plus a readable line each.
 */
import { availableParallelism, cpus } from "node:os";
import { closeSharedPool, configureSharedPool } from "../src/rewards/sandbox/pool.js";
import { scoreSirl } from "../src/rewards/solver/reward.js";
import { scoreKernel, type KernelGold, type KernelOptions } from "../src/rewards/kernel/reward.js";
import { BLOCKED_MATMUL, NAIVE_MATMUL } from "../src/rewards/kernel/baselines.js";
import { createOptimisationTask } from "../src/tasks/optimisation.js";
import { benchCarLaps } from "./car.js";

const WORKERS = 2;

function emit(bench: string, metric: string, value: number, unit: string, readable: string): void {
  console.log(JSON.stringify({ bench, metric, value: Number(value.toPrecision(4)), unit }));
  console.log(`# ${readable}`);
}

async function benchSolver(count: number): Promise<void> {
  const examples = createOptimisationTask().generate("train", count, 2026);
  await scoreSirl(examples[0]!.goldCompletion, examples[0]!.gold); // start the workers and load HiGHS
  const t0 = performance.now();
  const results = await Promise.all(examples.slice(1).map((e) => scoreSirl(e.goldCompletion, e.gold)));
  const s = (performance.now() - t0) / 1000;
  const full = results.filter((r) => r.score === 3.5).length;
  emit(
    "exec",
    "solver-checks-per-s",
    results.length / s,
    "checks/s",
    `SIRL: ${results.length} checks in ${s.toFixed(2)} s on ${WORKERS} workers (${full} full score)`,
  );
}

const fenced = (src: string) => "```js\n" + src + "\n```";

async function benchKernel(): Promise<void> {
  const gold: KernelGold = { m: 64, n: 64, k: 64, dtype: "float32", baseline: "naive" };
  const test: Partial<KernelOptions> = { profile: "test" };
  await scoreKernel(fenced(NAIVE_MATMUL), gold, { ...test, seed: 99 });
  const n = 12;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: n }, (_, i) =>
      scoreKernel(fenced(i % 2 ? BLOCKED_MATMUL : NAIVE_MATMUL), gold, { ...test, seed: i }),
    ),
  );
  const s = (performance.now() - t0) / 1000;
  emit(
    "exec",
    "kernel-evals-per-s",
    n / s,
    "evals/s",
    `kernel: ${n} evaluations (test profile, 64³) in ${s.toFixed(2)} s, one at a time under the timing lock`,
  );

  const big: KernelGold = { m: 128, n: 128, k: 128, dtype: "float32", baseline: "naive" };
  for (const [name, src] of [
    ["naive", NAIVE_MATMUL],
    ["blocked", BLOCKED_MATMUL],
  ] as const) {
    const t1 = performance.now();
    const r = await scoreKernel(fenced(src), big, { profile: "train", seed: 7 });
    const secs = (performance.now() - t1) / 1000;
    const sig = r.info?.significance as
      { lower: number; upper: number; band: number; control: number } | null | undefined;
    const rule = sig
      ? `bootstrap bound ${sig.lower.toFixed(2)}..${sig.upper.toFixed(2)}, band ${sig.band.toFixed(2)}, control ${sig.control.toFixed(3)}`
      : "no verdict";
    emit(
      "exec",
      `kernel-speedup-${name}`,
      r.terms.speedup ?? Number.NaN,
      "x",
      `kernel ${name} at 128³, train profile: S = ${r.terms.speedup?.toFixed(3)}, ${r.info?.verdict} (${rule}), score ${r.score?.toFixed(3)}, ${r.info?.iterations} paired iterations, every call verified, baseline median ${(r.info?.baselineMedianMs as number)?.toFixed(2)} ms`,
    );
    emit(
      "exec",
      `kernel-train-eval-seconds-${name}`,
      secs,
      "s",
      `one train-profile evaluation took ${secs.toFixed(1)} s`,
    );
  }
}

async function main(): Promise<void> {
  console.log(
    `# ${cpus()[0]?.model ?? "cpu"}, ${availableParallelism()} cores available, node ${process.version}; reward pool: ${WORKERS} workers`,
  );
  configureSharedPool({ size: WORKERS });
  await benchSolver(Number(process.env.BENCH_SOLVER_COUNT ?? 201));
  await benchKernel();
  await closeSharedPool();
  // --- car (MPC racing car helper's metric): laps/s from bench/car.ts ---
  for (const l of benchCarLaps({ quiet: true }))
    emit("exec", l.metric, l.value, l.unit, `${l.metric} = ${l.value} ${l.unit}`);
}

await main();
