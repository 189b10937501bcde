/**
 * What bench:conductor's records (bench/harness/seed-cache.ts) depend on, and the checkpoints it keeps between runs.
 *
 * - The workers enter every record's settings by the SHA-256 of their weights, not by their folder: the pool's
 *   folder is keyed by the source hash of the engine and models (bench/conductor/pool.ts), so any edit there moves
 *   it, and records that named the folder stopped matching even when the rebuilt workers were the same bytes.
 * - A made checkpoint (the planner's SFT start, an RL arm's last step) is itself recorded, as `made-<run>.json` in
 *   the work folder: the settings it was trained with and its weights' hash. With BENCH_CONDUCTOR_REUSE=1 a
 *   checkpoint whose record has equal settings and whose weights still hash the same is used as it is, so the
 *   held-out figures of another split (`tune`, `final`) cost an evaluation, not an hour of training. The held-out
 *   split never enters a made checkpoint's settings: training reads only the task's train questions.
 * - A longer RL run continues a shorter one (`shorterRun`, `continueRun`): RL runs use a constant learning rate and
 *   draw every random stream from (seed, step), so the first N steps of an M-step run are the N-step run, and its
 *   last checkpoint (weights, optimizer, trainer state) is where the longer run resumes. Under reuse, a made RL
 *   checkpoint whose settings equal the longer run's but for fewer steps has its run folder copied and resumed.
 */
import { createHash } from "node:crypto";
import { cpSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import type { ConductorInput } from "../../src/tasks/conductor.js";
import { completeSteps } from "../../src/trainer/checkpoints.js";
import { seedResult, storedRecords, storedResult } from "../harness/index.js";

/** The SHA-256 of a checkpoint's weights file. */
export function weightsHash(dir: string): string {
  return createHash("sha256")
    .update(readFileSync(join(dir, "model.safetensors")))
    .digest("hex");
}

/** A worker as records see it: a checkpoint source names its weights' hash instead of its folder. */
function recordedWorker(w: NonNullable<ConductorInput["workers"]>[number]): unknown {
  if (w.source.type !== "checkpoint") return w;
  const { path, ...rest } = w.source;
  return { ...w, source: { ...rest, weights: weightsHash(path) } };
}

/** The task options as records hold them (workers by weights, see the file comment). */
export function recordedOptions(options: ConductorInput): unknown {
  return options.workers ? { ...options, workers: options.workers.map(recordedWorker) } : options;
}

/**
 * Options with every worker's folder and weights left out: what a record must match when only reporting (the pool
 * not made here, so its weights cannot be hashed; see bench/conductor.ts).
 */
export function unweighedOptions(options: unknown): unknown {
  const o = options as { workers?: { source: Record<string, unknown> }[] };
  if (!o.workers) return options;
  return {
    ...o,
    workers: o.workers.map((w) => {
      const { path: _path, weights: _weights, ...rest } = w.source;
      return { ...w, source: rest };
    }),
  };
}

/** Where a made checkpoint's record lives, the work folder it is relative to, and whether reuse is allowed. */
export interface MadeOptions {
  /** The work folder (records hold checkpoint folders relative to it). */
  out: string;
  /** The run's name: the record is `<out>/made-<name>.json`. */
  name: string;
  /** What the checkpoint was trained with; reused only when equal (as JSON). */
  settings: unknown;
  /** The source hash of the code now (recorded with a new checkpoint). */
  source: string;
  reuse: boolean;
  machine?: unknown;
}

interface Made {
  /** The checkpoint folder, relative to the work folder. */
  dir: string;
  weights: string;
}

/**
 * The checkpoint of a training run: a recorded one with equal settings whose weights still hash as recorded (only
 * when `reuse` is set), else the folder `make` trains, then recorded. Returns the folder and whether it was reused.
 */
export async function madeCheckpoint(
  opts: MadeOptions,
  make: () => Promise<string>,
): Promise<{ dir: string; reused: boolean }> {
  const file = join(opts.out, `made-${opts.name}.json`);
  const stored = storedResult<Made>({ file, settings: opts.settings, reuse: opts.reuse });
  if (stored) {
    const dir = resolve(opts.out, stored.result.dir);
    if (existsSync(join(dir, "model.safetensors")) && weightsHash(dir) === stored.result.weights) {
      console.error(`${opts.name}: reusing the checkpoint ${dir} (made ${stored.madeAt})`);
      return { dir, reused: true };
    }
    console.error(`${opts.name}: the recorded checkpoint ${dir} is gone or changed; training it again`);
  }
  let made = "";
  await seedResult<Made>({ ...opts, file, reuse: false }, async () => {
    made = resolve(await make());
    return { dir: relative(opts.out, made), weights: weightsHash(made) };
  });
  return { dir: made, reused: false };
}

/** A shorter RL run that a longer one can continue: its run folder and the step of its last checkpoint. */
export interface ShorterRun {
  runDir: string;
  steps: number;
  /** Its made record. */
  from: string;
}

/**
 * The longest made RL run in `out` whose settings equal `settings` but for fewer `rlSteps`, and whose last
 * checkpoint (`<run>/checkpoints/step-<rlSteps>`) still hashes as recorded; null when there is none. Only
 * settings of the run's own kind (arm, seed, start, lr, group, ...) count, so a control never continues an RL run.
 */
export function shorterRun(out: string, settings: { rlSteps: number }): ShorterRun | null {
  if (!existsSync(out)) return null;
  const files = readdirSync(out)
    .filter((f) => /^made-.*\.json$/.test(f))
    .map((f) => join(out, f));
  let best: ShorterRun | null = null;
  for (const rec of storedRecords<Made>(files)) {
    const old = rec.settings as { rlSteps?: unknown };
    if (typeof old.rlSteps !== "number" || old.rlSteps >= settings.rlSteps) continue;
    if (JSON.stringify({ ...settings, rlSteps: old.rlSteps }) !== JSON.stringify(old)) continue;
    const dir = resolve(out, rec.result.dir);
    if (!dir.endsWith(join("checkpoints", `step-${old.rlSteps}`))) continue;
    if (!existsSync(join(dir, "model.safetensors")) || weightsHash(dir) !== rec.result.weights) continue;
    if (!best || old.rlSteps > best.steps) best = { runDir: dirname(dirname(dir)), steps: old.rlSteps, from: rec.from };
  }
  return best;
}

/**
 * Makes `runDir` a copy of the shorter run's folder (its logs and checkpoints) with `config` as its recipe, so that
 * training `config` with resume continues from the shorter run's last step. The recipes differ only in the steps
 * and in folders whose contents the made record has already matched by hash (the pool, the start).
 */
export function continueRun(from: ShorterRun, runDir: string, config: unknown): void {
  rmSync(runDir, { recursive: true, force: true });
  cpSync(from.runDir, runDir, { recursive: true });
  writeFileSync(join(runDir, "config.json"), JSON.stringify(config, null, 2) + "\n");
}

/**
 * Readies an RL arm's run folder for training with resume (under reuse). The folder left by a killed run of this
 * recipe, from the same start (its `checkpoints/start` hashing as `settings.start`), resumes from its newest
 * checkpoint, unless a shorter made run got further (`shorterRun`), which is then continued. A folder from another
 * start is deleted. Returns what will happen, for the log.
 */
export function prepareRun(
  out: string,
  runDir: string,
  settings: { rlSteps: number; start: string },
  config: unknown,
): string {
  const startWeights = join(runDir, "checkpoints", "start", "model.safetensors");
  const sameStart = existsSync(startWeights) && weightsHash(dirname(startWeights)) === settings.start;
  if (!sameStart) rmSync(runDir, { recursive: true, force: true });
  const left = sameStart ? completeSteps(join(runDir, "checkpoints")) : [];
  const leftStep = left.length ? left[left.length - 1]! : 0;
  const prior = shorterRun(out, settings);
  if (prior && prior.steps > leftStep) {
    continueRun(prior, runDir, config);
    return `continuing the ${prior.steps}-step run ${prior.runDir} (${prior.from}) to ${settings.rlSteps} steps`;
  }
  return leftStep > 0 ? `resuming ${runDir} from its step ${leftStep}` : `training ${runDir} from the start`;
}
