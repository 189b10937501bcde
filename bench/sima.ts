/**
 * `npm run bench:sima` (issue 12, the SIMA 2 effect): does RL with the task verifier raise held-out success in the
 * room world (src/rewards/world/) over the SFT start, including on a task kind SFT never showed, and what does it
 * cost an unrelated skill? Per reported seed (BENCH_SEED_LIST, default 0,1,2), one SFT start (solver trajectories of
 * reach/fetch/open/place mixed with arithmetic; cached, keyed by settings and source), then the RL arm and its
 * shuffled-reward control side by side (one engine thread each). Evaluation is on the `final` half of held-out
 * layouts (BENCH_SPLIT=tune for tuning runs) at every decoding; the gain is RL's success at the start's best
 * decoding minus the start's there.
 *
 * Metrics (JSON lines, points): sima.success_gain (mean over seeds), sima.success_gain_min, sima.control_gain,
 * sima.unseen_kind_gain (greedy success on `answer`, the kind not in SFT), sima.arithmetic_change (greedy arithmetic
 * pass@1, RL minus start), and a per-kind table per seed. Gate: on every seed, RL gain ≥ 15 points and RL gain −
 * control gain ≥ 15 points.
 * BENCH_SIMA_SMOKE=1: one seed at a toy size (plumbing only; figures mean nothing); BENCH_SIMA_REUSE=1: see REUSE.
 */
import { join, resolve } from "node:path";
import { benchLine, comparativeGate, seedsFromEnv, sourceHash, splitFromEnv, summarize } from "./harness/index.js";
import { runPool } from "./harness/child-job.js";
import { runOrReuse } from "./harness/arms.js";
import { SFT_KINDS, sizes, startDirOf, type SimaJob, type SimaResult } from "./sima/settings.js";
import { heldOutSuccess, kindTable, seedFigures } from "./sima/metrics.js";

const ROOT = resolve(import.meta.dirname, "..");
const SMOKE = process.env.BENCH_SIMA_SMOKE === "1";
const TARGET = 0.15;
const UNSEEN_KIND = "answer";
const HELD_COMPOSITIONS = ["place:ball", "answer:colour"];
const pts = (x: number) => (100 * x).toFixed(1);

/**
 * BENCH_SIMA_REUSE=1: a job whose folder holds the result of the same job (kind, seed, start, split, sizes) is not
 * run again, and a killed RL arm resumes from its last 50-step checkpoint (bench/harness/arms.ts), so seeds can run
 * in separate sessions. Only valid while the source RL depends on is unchanged (a start's key covers only its own).
 */
const REUSE = process.env.BENCH_SIMA_REUSE === "1";

function runJob(job: SimaJob): Promise<SimaResult> {
  const keys = ["kind", "seed", "startDir", "split", "sizes"] as const;
  const reuse = { on: REUSE, flag: "BENCH_SIMA_REUSE", keys };
  return runOrReuse("bench/sima/job.ts", job, `sima ${job.kind} seed ${job.seed}`, reuse);
}

async function main(): Promise<void> {
  const split = splitFromEnv(process.env.BENCH_SPLIT);
  const s = sizes(SMOKE);
  const seeds = SMOKE ? [0] : seedsFromEnv(process.env.BENCH_SEED_LIST, [0, 1, 2]);
  const workDir = resolve(process.env.BENCH_SIMA_OUT ?? join(ROOT, "runs", "bench-sima"));
  const source = sourceHash(ROOT);
  console.log(
    `bench:sima seeds ${seeds.join(",")}, ${split} split: SFT ${s.sftSteps} steps on ${SFT_KINDS.join("/")} + ` +
      `arithmetic (${s.mix * 100}%), RL ${s.steps} steps of ${s.promptsPerStep}×${s.groupSize} at lr ${s.lr}`,
  );
  const rows = [];
  for (const seed of seeds) {
    const startDir = startDirOf(workDir, seed, SMOKE, source);
    const job = (kind: SimaJob["kind"]): SimaJob => ({
      kind,
      seed,
      dir: kind === "sft" ? startDir : join(workDir, `${kind}-${seed}`),
      startDir,
      split,
      sizes: s,
    });
    const start = await runJob(job("sft"));
    const [rl, control] = await runPool([() => runJob(job("rl")), () => runJob(job("control"))], 2);
    const f = seedFigures(start.eval, rl!.eval, control!.eval, UNSEEN_KIND);
    rows.push({ seed, f, start, rl: rl!, control: control! });
    console.log(
      `seed ${seed} (start's best decoding ${f.decoding}): success ${pts(start.eval.pass[f.decoding]!)} → ` +
        `${pts(rl!.eval.pass[f.decoding]!)} (RL ${f.rl >= 0 ? "+" : ""}${pts(f.rl)}, control ${pts(f.control!)}); ` +
        `held-out compositions ${pts(heldOutSuccess(start.eval.byComposition, HELD_COMPOSITIONS))} → ` +
        `${pts(heldOutSuccess(rl!.eval.byComposition, HELD_COMPOSITIONS))}; arithmetic ` +
        `${pts(start.eval.arithmetic)} → ${pts(rl!.eval.arithmetic)}; greedy commands/episode ` +
        `${rl!.eval.turnsMean.toFixed(1)}, invalid ${rl!.eval.errorsMean.toFixed(2)}`,
    );
    for (const line of kindTable(f.kinds, SFT_KINDS)) console.log(`  ${line}`);
  }
  const gain = summarize(rows.map((r) => r.f.rl));
  const verdict = comparativeGate(
    rows.map((r) => ({ seed: r.seed, rl: r.f.rl, control: r.f.control! })),
    TARGET,
    { minGain: TARGET },
  );
  const emit = (metric: string, value: number, extra: Record<string, unknown> = {}) =>
    console.log(
      JSON.stringify({ ...JSON.parse(benchLine("sima", `sima.${metric}`, 100 * value, "points")), ...extra }),
    );
  emit("success_gain", gain.mean, { std: 100 * gain.std, seeds, split });
  emit("success_gain_min", gain.min);
  emit("control_gain", summarize(rows.map((r) => r.f.control!)).mean);
  emit("unseen_kind_gain", summarize(rows.map((r) => r.f.unseenKind)).mean, { kind: UNSEEN_KIND });
  emit("arithmetic_change", summarize(rows.map((r) => r.f.arithmetic)).mean);
  console.log(
    `sima: RL ${pts(gain.mean)} ± ${pts(gain.std)} points over the start (min ${pts(gain.min)}), margins over the ` +
      `control ${verdict.margins.map(pts).join(", ")}: ${verdict.pass ? "PASS" : "FAIL"} (target ${pts(TARGET)} on every seed, for the gain and for the margin)`,
  );
}

await main();
