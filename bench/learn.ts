/**
 * `npm run bench:learn`: does RL make the model better than the cheap alternatives, and is it the reward that
 * does it? On countdown and on arithmetic, per seed, four arms from one SFT start (a small char-level GPT trained
 * briefly on the task's gold completions), all built on the shared harness in bench/harness/ (docs/benchmarks.md):
 *
 * - the start, evaluated at every decoding (greedy; sampled at T 0.3, 0.6, 1): its best decoding is the baseline;
 * - RL: GRPO from the start with the task's verifiable rewards;
 * - control: the same run with the verifier's outputs permuted inside each group;
 * - more SFT: continued SFT from the start for RL's training CPU time (one-thread jobs: its wall-clock time when
 *   nothing else runs, and not stretched when something does).
 *
 * Each arm's gain is its pass@1 minus the start's, both at the start's best decoding. The gate, per seed: RL's
 * gain minus the control's gain is at least 10 points on every seed. The control's own change and the SFT arm are
 * reported beside it, with which of RL and more SFT gained more. Figures come from the `final` half of the
 * held-out split on the seeds of BENCH_SEED_LIST (default 100,101,102); settings are tuned with BENCH_SPLIT=tune
 * on other seeds. SFT starts are cached under the work folder by a hash of their settings and of the source that
 * makes them (model, tokenizer, tasks, SFT trainer, engine). Jobs run as separate one-thread processes, as many at
 * once as there are cores. Prints one JSON line per metric ({"bench","metric","value","unit"}) and a summary.
 *
 * Environment: BENCH_LEARN_TASKS (comma list), BENCH_SEED_LIST (e.g. 100,101,102), BENCH_SEED_LIST_<TASK> (that
 * task's seeds, e.g. BENCH_SEED_LIST_COUNTDOWN=102 to complete one task's missing seed), BENCH_SPLIT (final | tune),
 * BENCH_LEARN_JOBS (parallel jobs, default the core count), BENCH_LEARN_OUT (work folder, default
 * runs/bench-learn), BENCH_LEARN_NO_SFT_ARM=1 (skip the more-SFT arm), BENCH_LEARN_LR / _STEPS / _BETA /
 * _SFT_STEPS / _CREDIT (override the settings of every task, for tuning), BENCH_LEARN_SMOKE=1 (tiny plumbing run),
 * BENCH_LEARN_REPORT_ONLY=1 (run nothing: summarise the result files already in the newest work folder of each task
 * and seed, e.g. of an interrupted run; seeds missing an arm are listed and left out).
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join, resolve } from "node:path";
import {
  benchLine,
  comparativeGate,
  gainOverBest,
  seedsFromEnv,
  sourceHash,
  splitFromEnv,
  summarize,
} from "./harness/index.js";
import { MODEL, REPORTED_SEEDS, TASKS, type JobResult, type JobSpec } from "./learn-settings.js";

const ROOT = resolve(import.meta.dirname, "..");
const OUT = resolve(process.env.BENCH_LEARN_OUT ?? join(ROOT, "runs", "bench-learn"));
const TASK_NAMES = (process.env.BENCH_LEARN_TASKS ?? Object.keys(TASKS).join(",")).split(",");
const SEEDS = seedsFromEnv(process.env.BENCH_SEED_LIST, REPORTED_SEEDS);
/** The seeds of one task: BENCH_SEED_LIST_<TASK> (e.g. BENCH_SEED_LIST_COUNTDOWN=102) narrows BENCH_SEED_LIST. */
const seedsOf = (task: string) => seedsFromEnv(process.env[`BENCH_SEED_LIST_${task.toUpperCase()}`], SEEDS);
const SPLIT = splitFromEnv(process.env.BENCH_SPLIT);
const SFT_ARM = process.env.BENCH_LEARN_NO_SFT_ARM !== "1";
const PARALLEL = Math.max(1, Number(process.env.BENCH_LEARN_JOBS ?? availableParallelism()));
/** RL's gain minus the control's, per seed, in pass@1 (10 points). */
const TARGET_MARGIN = 0.1;
const SOURCE = sourceHash(ROOT);

const line = (metric: string, value: number, unit: string) => console.log(benchLine("learn", metric, value, unit));

/** The folder of (task, seed), named by a hash of everything its SFT start depends on, source included. */
function jobDir(task: string, seed: number): string {
  const s = TASKS[task]!;
  const settings = JSON.stringify({ MODEL, options: s.options, sft: s.sft, train: s.trainExamples });
  const key = createHash("sha256").update(settings).update(SOURCE).digest("hex").slice(0, 10);
  return join(OUT, `${task}-${seed}-${key}`);
}

/** Runs one job in a child process (one engine thread) and reads its result. */
function runJob(spec: JobSpec): Promise<JobResult> {
  const resultPath = join(spec.dir, `${spec.kind}.json`);
  rmSync(resultPath, { force: true });
  return new Promise((res, rej) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(ROOT, "bench", "learn-job.ts"), JSON.stringify(spec)],
      {
        cwd: ROOT,
        stdio: ["ignore", "inherit", "inherit"],
        env: { ...process.env, RLVR_THREADS: "1" },
      },
    );
    child.on("error", rej);
    child.on("exit", (code, signal) => {
      if (code !== 0 || !existsSync(resultPath))
        rej(
          new Error(`bench:learn job ${spec.kind} ${spec.task} seed ${spec.seed} failed (${signal ?? `exit ${code}`})`),
        );
      else res(JSON.parse(readFileSync(resultPath, "utf8")) as JobResult);
    });
  });
}

/** Runs every (task, seed): SFT start, then RL and control, then (after RL) the more-SFT arm; PARALLEL at a time. */
async function runAll(): Promise<JobResult[]> {
  const results: JobResult[] = [];
  const queue: JobSpec[] = [];
  for (const task of TASK_NAMES) {
    if (!TASKS[task]) throw new Error(`bench:learn: unknown task "${task}"; known: ${Object.keys(TASKS).join(", ")}`);
    for (const seed of seedsOf(task)) {
      const dir = jobDir(task, seed);
      mkdirSync(dir, { recursive: true });
      queue.push({ kind: "sft", task, seed, dir, split: SPLIT });
    }
  }
  let running = 0;
  const t0 = Date.now();
  await new Promise<void>((done, fail) => {
    const pump = () => {
      if (queue.length === 0 && running === 0) return done();
      while (running < PARALLEL && queue.length > 0) {
        const spec = queue.shift()!;
        running++;
        runJob(spec).then((r) => {
          running--;
          results.push(r);
          const mins = ((Date.now() - t0) / 60000).toFixed(1);
          const pass = Object.entries(r.pass)
            .map(([k, v]) => `${k} ${v.toFixed(3)}`)
            .join(", ");
          console.error(
            `[${mins} min] ${r.task} seed ${r.seed} ${r.kind}: pass@1 ${pass}; trained ${r.trainSeconds.toFixed(0)}s`,
          );
          const start = join(r.dir, "model");
          // RL first: the queue is shared, so the remaining SFT starts wait behind it
          if (r.kind === "sft") queue.unshift({ ...spec, kind: "rl", start }, { ...spec, kind: "control", start });
          if (r.kind === "rl" && SFT_ARM)
            queue.unshift({ ...spec, kind: "sftMore", start, budgetCpuSeconds: r.trainCpuSeconds! });
          pump();
        }, fail);
      }
    };
    pump();
  });
  return results;
}

/** The result files already on disk: for each (task, seed), the newest work folder's `<kind>.json` files. */
function readResults(): JobResult[] {
  const out: JobResult[] = [];
  const folders = existsSync(OUT) ? readdirSync(OUT) : [];
  for (const task of TASK_NAMES) {
    for (const seed of seedsOf(task)) {
      const mine = folders
        .filter((f) => f.startsWith(`${task}-${seed}-`))
        .map((f) => join(OUT, f))
        .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
      if (mine.length === 0) continue;
      console.error(`bench:learn report: ${task} seed ${seed} from ${mine[0]}`);
      for (const kind of ["sft", "rl", "control", "sftMore"] as const) {
        const f = join(mine[0]!, `${kind}.json`);
        if (existsSync(f)) out.push(JSON.parse(readFileSync(f, "utf8")) as JobResult);
      }
    }
  }
  return out;
}

const pts = (x: number) => (x * 100).toFixed(1);
const passText = (r: JobResult) =>
  Object.entries(r.pass)
    .map(([k, v]) => `${k} ${pts(v)}`)
    .join(" ");

async function main(): Promise<void> {
  console.error(
    `bench:learn: ${TASK_NAMES.map((t) => `${t} × seeds ${seedsOf(t).join(",")}`).join("; ")} on the ${SPLIT} split, ${PARALLEL} jobs at a time, work folder ${OUT}`,
  );
  const results = process.env.BENCH_LEARN_REPORT_ONLY === "1" ? readResults() : await runAll();
  const summary: string[] = [];
  let pass = true;
  let partial = false;
  for (const task of TASK_NAMES) {
    const get = (kind: JobSpec["kind"], seed: number) =>
      results.find((r) => r.task === task && r.kind === kind && r.seed === seed);
    const complete = seedsOf(task).filter((seed) => get("sft", seed) && get("rl", seed) && get("control", seed));
    const missing = seedsOf(task).filter((seed) => !complete.includes(seed));
    partial ||= missing.length > 0;
    if (missing.length > 0) summary.push(`${task}: seeds ${missing.join(",")} lack an arm and are left out (PARTIAL)`);
    if (complete.length === 0) {
      pass = false;
      continue;
    }
    const seeds = complete.map((seed) => {
      const start = get("sft", seed)!,
        rl = get("rl", seed)!,
        control = get("control", seed)!,
        more = get("sftMore", seed);
      const g = gainOverBest(start.pass, rl.pass);
      return {
        seed,
        decoding: g.decoding,
        start: start.pass[g.decoding]!,
        rlBestVsBest: g.bestVsBest,
        rl: g.atStartBest,
        control: gainOverBest(start.pass, control.pass).atStartBest,
        ...(more ? { sftMore: gainOverBest(start.pass, more.pass).atStartBest } : {}),
        rows: { start, rl, control, more },
      };
    });
    const verdict = comparativeGate(seeds, TARGET_MARGIN);
    pass &&= verdict.pass;
    const g = summarize(seeds.map((s) => s.rl)),
      c = summarize(seeds.map((s) => s.control)),
      m = summarize(verdict.margins);
    line(`learn.${task}.start_best_pass1`, summarize(seeds.map((s) => s.start)).mean, "pass@1");
    line(`learn.${task}.rl_gain`, g.mean, "points/100");
    line(`learn.${task}.rl_gain_std`, g.std, "points/100");
    line(`learn.${task}.rl_gain_best_vs_best`, summarize(seeds.map((s) => s.rlBestVsBest)).mean, "points/100");
    line(`learn.${task}.control_gain`, c.mean, "points/100");
    line(`learn.${task}.margin_min`, m.min, "points/100");
    if (seeds.every((s) => s.sftMore !== undefined))
      line(`learn.${task}.sft_more_gain`, summarize(seeds.map((s) => s.sftMore!)).mean, "points/100");
    for (const s of seeds) {
      const r = s.rows;
      summary.push(
        `  ${task} seed ${s.seed} (start's best decoding ${s.decoding}): start ${passText(r.start)} | RL ${passText(r.rl)} | control ${passText(r.control)}${r.more ? ` | more SFT ${passText(r.more)} (${r.more.sftSteps} steps in ${r.more.trainCpuSeconds?.toFixed(0) ?? "?"} CPU-s, RL ${r.rl.trainCpuSeconds?.toFixed(0) ?? "?"})` : ""}`,
      );
    }
    const sftText =
      verdict.winnerVsSft === null
        ? ""
        : `; more SFT ${pts(summarize(seeds.map((s) => s.sftMore!)).mean)} (${verdict.winnerVsSft === "rl" ? "RL gains more" : verdict.winnerVsSft === "sft" ? "more SFT gains more" : "tie"})`;
    summary.push(
      `${task}: RL ${pts(g.mean)} ± ${pts(g.std)} points over the start's best decoding, control ${pts(c.mean)} ± ${pts(c.std)}${sftText}; RL − control min ${pts(m.min)} (target >= ${pts(TARGET_MARGIN)} every seed): ${verdict.pass ? "PASS" : `FAIL (seeds ${verdict.failedSeeds.join(",")})`}`,
    );
  }
  for (const s of summary) console.log(s);
  const verdict = pass ? "PASS" : "FAIL";
  console.log(`bench:learn ${partial ? `PARTIAL (${verdict} on the seeds that have every arm)` : verdict}`);
}

await main();
