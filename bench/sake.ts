/**
 * `npm run bench:sake` (issue 12, the SAKE effect): does RL with the kg-answer reward raise held-out exact match over
 * the SFT start, on questions about drugs never asked about in training, and what does SAKE's filtering turn add?
 * Per reported seed (BENCH_SEED_LIST, default 0,1,2): two SFT starts on gold trajectories (SAKE's three turns, and
 * the ablation without the filtering turn; cached, keyed by settings and source), then the RL arm, its shuffled-reward
 * control and the ablation's RL arm (two at a time, one engine thread each). Evaluation is on the `final` half of
 * the held-out questions (BENCH_SPLIT=tune for tuning runs) at every decoding; a gain is the arm's EM at the start's
 * best decoding minus the start's there.
 *
 * Metrics (JSON lines): sake.em_gain (mean over seeds, points), sake.em_gain_min, sake.control_gain,
 * sake.no_filter_delta (the ablation's RL EM minus SAKE's RL EM, each at its own start's best decoding, points),
 * sake.tokens_per_question (greedy completion tokens of the RL arm, tool output included). Gate: on every seed, RL
 * gain ≥ 10 points and RL gain − control gain ≥ 10 points. BENCH_SAKE_SMOKE=1: one seed at a toy size (plumbing only);
 * BENCH_SAKE_REUSE=1: reuse the results of jobs already run with the same settings (see REUSE).
 */
import { join, resolve } from "node:path";
import {
  benchLine,
  bestDecoding,
  comparativeGate,
  gainOverBest,
  seedsFromEnv,
  sourceHash,
  splitFromEnv,
  summarize,
} from "./harness/index.js";
import { runPool } from "./harness/child-job.js";
import { runOrReuse } from "./harness/arms.js";
import { sizes, startDirOf, type SakeJob, type SakeResult } from "./sake/settings.js";

const ROOT = resolve(import.meta.dirname, "..");
const SMOKE = process.env.BENCH_SAKE_SMOKE === "1";
/**
 * BENCH_SAKE_REUSE=1: a job whose folder holds the result of the same job (kind, seed, start, split, sizes) is not
 * run again, so seeds can be run in separate sessions and reported together. Only valid while the source RL depends
 * on is unchanged (a start's key covers only the SFT start's source).
 */
const REUSE = process.env.BENCH_SAKE_REUSE === "1";
const TARGET = 0.1;
const pts = (x: number) => (100 * x).toFixed(1);

/** Runs a job, or under REUSE returns the result of the same job (kind, seed, start, split and sizes). */
function runJob(job: SakeJob): Promise<SakeResult> {
  const label = `sake ${job.kind}${job.filterTurn ? "" : " (no filter)"} seed ${job.seed}`;
  const keys = ["kind", "filterTurn", "seed", "startDir", "split", "sizes"] as const;
  return runOrReuse("bench/sake/job.ts", job, label, { on: REUSE, flag: "BENCH_SAKE_REUSE", keys });
}

async function main(): Promise<void> {
  const split = splitFromEnv(process.env.BENCH_SPLIT);
  const s = sizes(SMOKE);
  const seeds = SMOKE ? [0] : seedsFromEnv(process.env.BENCH_SEED_LIST, [0, 1, 2]);
  const workDir = resolve(process.env.BENCH_SAKE_OUT ?? join(ROOT, "runs", "bench-sake"));
  const source = sourceHash(ROOT);
  console.log(
    `bench:sake seeds ${seeds.join(",")}, ${split} split: SFT ${s.sftSteps} steps, RL ${s.steps} steps of ` +
      `${s.promptsPerStep}×${s.groupSize} at lr ${s.lr}`,
  );
  const rows = [];
  for (const seed of seeds) {
    const job = (kind: SakeJob["kind"], filterTurn: boolean): SakeJob => {
      const startDir = startDirOf(workDir, seed, filterTurn, SMOKE, source);
      const dir = kind === "sft" ? startDir : join(workDir, `${kind}-${filterTurn ? "filter" : "nofilter"}-${seed}`);
      return { kind, filterTurn, seed, dir, startDir, split, sizes: s };
    };
    const [start, startNf] = await runPool([() => runJob(job("sft", true)), () => runJob(job("sft", false))], 2);
    const [rl, control, rlNf] = await runPool(
      [() => runJob(job("rl", true)), () => runJob(job("control", true)), () => runJob(job("rl", false))],
      2,
    );
    const g = gainOverBest(start!.eval.pass, rl!.eval.pass);
    const c = gainOverBest(start!.eval.pass, control!.eval.pass).atStartBest;
    const withFilter = rl!.eval.pass[g.decoding]!;
    const withoutFilter = rlNf!.eval.pass[bestDecoding(startNf!.eval.pass).label]!;
    rows.push({
      seed,
      rl: g.atStartBest,
      control: c,
      noFilter: withoutFilter - withFilter,
      tokens: rl!.eval.tokensPerQuestion,
    });
    console.log(
      `seed ${seed} (${start!.eval.questions} held-out questions; start's best decoding ${g.decoding}): EM ` +
        `${pts(start!.eval.pass[g.decoding]!)} → ${pts(withFilter)} (RL ${pts(g.atStartBest)}, control ${pts(c)}); ` +
        `without the filtering turn ${pts(bestDecoding(startNf!.eval.pass).value)} → ${pts(withoutFilter)}; ` +
        `format ${pts(start!.eval.formatRate)} → ${pts(rl!.eval.formatRate)}; ${rl!.eval.tokensPerQuestion.toFixed(0)} ` +
        `tokens/question (start ${start!.eval.tokensPerQuestion.toFixed(0)})`,
    );
  }
  const gain = summarize(rows.map((r) => r.rl));
  const verdict = comparativeGate(rows, TARGET, { minGain: TARGET });
  const emit = (metric: string, value: number, unit: string, extra: Record<string, unknown> = {}) =>
    console.log(JSON.stringify({ ...JSON.parse(benchLine("sake", `sake.${metric}`, value, unit)), ...extra }));
  emit("em_gain", 100 * gain.mean, "points", { std: 100 * gain.std, seeds, split });
  emit("em_gain_min", 100 * gain.min, "points");
  emit("control_gain", 100 * summarize(rows.map((r) => r.control)).mean, "points");
  emit("no_filter_delta", 100 * summarize(rows.map((r) => r.noFilter)).mean, "points");
  emit("tokens_per_question", summarize(rows.map((r) => r.tokens)).mean, "tokens");
  console.log(
    `sake: RL ${pts(gain.mean)} ± ${pts(gain.std)} points of EM over the start (min ${pts(gain.min)}), margins over ` +
      `the control ${verdict.margins.map(pts).join(", ")}: ${verdict.pass ? "PASS" : "FAIL"} (target ${pts(TARGET)} ` +
      "on every seed, for the gain and for the margin)",
  );
}

await main();
