/**
 * `npm run bench:learn`: does RL make the model better, and is it the reward that does it?
 *
 * On countdown and on arithmetic, over 3 seeds: an SFT start (a small char-level GPT trained briefly on the
 * task's gold completions), then GRPO from it with the task's verifiable rewards; and a control run identical
 * except that each step's rewards are shuffled across its completions. The target: held-out pass@1 after RL at
 * least the start + 10 points, and no gain for the control. pass@1 is sampled at the training temperature (mean
 * correctness of n samples per question); greedy pass@1 of the same models is reported alongside. Settings:
 * bench/learn-settings.ts. Jobs (SFT start → RL and control) run as separate processes, one thread each, as
 * many at once as there are cores; SFT starts are kept under the work folder and reused while their settings
 * are unchanged. Prints one JSON line per metric ({"bench","metric","value","unit"}) and a readable summary.
 *
 * Environment: BENCH_LEARN_TASKS (comma list), BENCH_LEARN_SEEDS (count, default 3) or BENCH_LEARN_SEED_LIST (e.g. 0,2),
 * BENCH_LEARN_JOBS (parallel jobs, default the core count), BENCH_LEARN_OUT (work folder, default runs/bench-learn),
 * BENCH_LEARN_LR / BENCH_LEARN_STEPS / BENCH_LEARN_BETA / BENCH_LEARN_SFT_STEPS / BENCH_LEARN_CREDIT (override the
 * settings of every task, for experiments).
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join, resolve } from "node:path";
import { MODEL, TASKS, type JobResult, type JobSpec } from "./learn-settings.js";

const ROOT = resolve(import.meta.dirname, "..");
const OUT = resolve(process.env.BENCH_LEARN_OUT ?? join(ROOT, "runs", "bench-learn"));
const TASK_NAMES = (process.env.BENCH_LEARN_TASKS ?? Object.keys(TASKS).join(",")).split(",");
const SEEDS = process.env.BENCH_LEARN_SEED_LIST
  ? process.env.BENCH_LEARN_SEED_LIST.split(",").map(Number)
  : Array.from({ length: Number(process.env.BENCH_LEARN_SEEDS ?? 3) }, (_, i) => i);
if (SEEDS.length === 0 || SEEDS.some((s) => !Number.isInteger(s) || s < 0)) {
  throw new Error(`bench:learn: no valid seeds (BENCH_LEARN_SEEDS is a count >= 1, BENCH_LEARN_SEED_LIST a list such as 0,2)`);
}
const PARALLEL = Math.max(1, Number(process.env.BENCH_LEARN_JOBS ?? availableParallelism()));
const TARGET_GAIN = 0.1;

function line(metric: string, value: number, unit: string): void {
  console.log(JSON.stringify({ bench: "learn", metric, value: +value.toFixed(4), unit }));
}

/** The folder of (task, seed), named by a hash of everything its SFT start depends on. */
function jobDir(task: string, seed: number): string {
  const s = TASKS[task]!;
  const key = createHash("sha256").update(JSON.stringify({ MODEL, options: s.options, sft: s.sft, train: s.trainExamples })).digest("hex").slice(0, 8);
  return join(OUT, `${task}-${seed}-${key}`);
}

/** Runs one job in a child process (one engine thread) and reads its result. */
function runJob(spec: JobSpec): Promise<JobResult> {
  const resultPath = join(spec.dir, `${spec.kind}.json`);
  rmSync(resultPath, { force: true });
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(ROOT, "bench", "learn-job.ts"), JSON.stringify(spec)], {
      cwd: ROOT, stdio: ["ignore", "inherit", "inherit"], env: { ...process.env, RLVR_THREADS: "1" },
    });
    child.on("error", rej);
    child.on("exit", (code, signal) => {
      if (code !== 0 || !existsSync(resultPath)) rej(new Error(`bench:learn job ${spec.kind} ${spec.task} seed ${spec.seed} failed (${signal ?? `exit ${code}`})`));
      else res(JSON.parse(readFileSync(resultPath, "utf8")) as JobResult);
    });
  });
}

/** Runs every (task, seed): its SFT job, then its RL and control jobs; at most PARALLEL processes at a time. */
async function runAll(): Promise<JobResult[]> {
  const results: JobResult[] = [];
  const queue: JobSpec[] = [];
  for (const task of TASK_NAMES) {
    if (!TASKS[task]) throw new Error(`bench:learn: unknown task "${task}"; known: ${Object.keys(TASKS).join(", ")}`);
    for (const seed of SEEDS) {
      const dir = jobDir(task, seed);
      mkdirSync(dir, { recursive: true });
      queue.push({ kind: "sft", task, seed, dir });
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
          console.error(`[${mins} min] ${r.task} seed ${r.seed} ${r.kind}: pass@1 ${r.sampled.toFixed(3)} (greedy ${r.greedy.toFixed(3)}) in ${r.seconds.toFixed(0)}s`);
          if (r.kind === "sft") {
            const start = join(r.dir, "model");
            // RL first: the queue is shared, so the remaining SFT starts wait behind it
            queue.unshift({ ...spec, kind: "rl", start }, { ...spec, kind: "control", start });
          }
          pump();
        }, fail);
      }
    };
    pump();
  });
  return results;
}

const stats = (xs: number[]) => {
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  return { mean: m, std: Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / Math.max(1, xs.length - 1)), min: Math.min(...xs) };
};
const pts = (x: number) => (x * 100).toFixed(1);
/** "; working shown 48% -> 90% (RL), 47% (control)" when the results carry it. */
const shownText = (sft: JobResult, rl: JobResult, control: JobResult) =>
  sft.shown === undefined || rl.shown === undefined || control.shown === undefined ? "" : `; working shown ${pts(sft.shown)}% -> ${pts(rl.shown)}% (RL), ${pts(control.shown)}% (control)`;

async function main(): Promise<void> {
  console.error(`bench:learn: ${TASK_NAMES.join(", ")} × ${SEEDS.length} seeds, ${PARALLEL} jobs at a time, work folder ${OUT}`);
  const results = await runAll();
  const summary: string[] = [];
  let pass = true;
  for (const task of TASK_NAMES) {
    const get = (kind: JobSpec["kind"], seed: number) => results.find((r) => r.task === task && r.kind === kind && r.seed === seed)!;
    const gains = SEEDS.map((s) => get("rl", s).sampled - get("sft", s).sampled);
    const controls = SEEDS.map((s) => get("control", s).sampled - get("sft", s).sampled);
    const greedyGains = SEEDS.map((s) => get("rl", s).greedy - get("sft", s).greedy);
    const greedyControls = SEEDS.map((s) => get("control", s).greedy - get("sft", s).greedy);
    const g = stats(gains);
    const c = stats(controls);
    line(`learn.${task}.pass1_start`, stats(SEEDS.map((s) => get("sft", s).sampled)).mean, "pass@1");
    line(`learn.${task}.pass1_after`, stats(SEEDS.map((s) => get("rl", s).sampled)).mean, "pass@1");
    line(`learn.${task}.pass1_gain`, g.mean, "points/100");
    line(`learn.${task}.pass1_gain_std`, g.std, "points/100");
    line(`learn.${task}.pass1_gain_min`, g.min, "points/100");
    line(`learn.${task}.control_gain`, c.mean, "points/100");
    line(`learn.${task}.control_gain_std`, c.std, "points/100");
    line(`learn.${task}.greedy_pass1_start`, stats(SEEDS.map((s) => get("sft", s).greedy)).mean, "pass@1");
    line(`learn.${task}.greedy_pass1_gain`, stats(greedyGains).mean, "points/100");
    line(`learn.${task}.greedy_control_gain`, stats(greedyControls).mean, "points/100");
    const shown = (kind: JobSpec["kind"]) => SEEDS.map((s) => get(kind, s).shown).filter((x): x is number => x !== undefined);
    if (shown("sft").length === SEEDS.length && shown("rl").length === SEEDS.length) {
      line(`learn.${task}.shown_work_start`, stats(shown("sft")).mean, "share");
      line(`learn.${task}.shown_work_after`, stats(shown("rl")).mean, "share");
    }
    const ok = g.min >= TARGET_GAIN && c.mean <= 0.02;
    pass &&= ok;
    for (const s of SEEDS) {
      summary.push(`  ${task} seed ${s}: pass@1 ${pts(get("sft", s).sampled)} -> ${pts(get("rl", s).sampled)} (RL), ${pts(get("control", s).sampled)} (control); greedy ${pts(get("sft", s).greedy)} -> ${pts(get("rl", s).greedy)} (RL), ${pts(get("control", s).greedy)} (control)${shownText(get("sft", s), get("rl", s), get("control", s))}`);
    }
    summary.push(`${task}: gain ${pts(g.mean)} ± ${pts(g.std)} points over ${SEEDS.length} seeds (min ${pts(g.min)}; target >= ${pts(TARGET_GAIN)} every seed), control ${pts(c.mean)} ± ${pts(c.std)}: ${ok ? "PASS" : "FAIL"}`);
  }
  for (const s of summary) console.log(s);
  console.log(`bench:learn ${pass ? "PASS" : "FAIL"}`);
}

await main();
