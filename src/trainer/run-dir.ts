/**
 * The run folder (DESIGN.md "Runs on disk"): `runs/<name>/` holds `config.json` (the resolved recipe),
 * `metrics.jsonl` (one line per step), `samples.jsonl` (groups with rewards and advantages), `eval.jsonl`,
 * `plot.svg` and `checkpoints/`. On resume the JSONL files are cut back to the checkpoint's step, so a run killed
 * after logging steps it never checkpointed logs them again, once, when it replays them.
 *
 * A fresh start never deletes an earlier run made with a different recipe unless the caller says so
 * (`overwrite`, the CLI's `--overwrite`): the folder is left as it is and a RunDirError says what to do. The same
 * recipe may start over (`--no-resume`, or a run killed before its first checkpoint), since that regenerates
 * what it deletes. `recover()` removes what a kill left behind (temporary files, checkpoint trash).
 */
import { existsSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { RlvrError, appendJsonl, makeDirs, readJsonl, writeFileAtomic } from "../util/index.js";
import { completeSteps, recoverCheckpoints } from "./checkpoints.js";

/** The run folder cannot be created or written, or holds an earlier run that must not be deleted silently. */
export class RunDirError extends RlvrError {}

/** Temporary files of `writeFileAtomic` (`.<name>.<pid>.<time>.tmp`) that a kill mid-write leaves. */
const TEMP_FILE = /^\..+\.\d+\.\d+\.tmp$/;

/** Paths and writers of one run folder. */
export class RunDir {
  /** The run folder. */
  readonly root: string;

  constructor(root: string) {
    this.root = root;
  }

  get configPath(): string {
    return join(this.root, "config.json");
  }
  get metricsPath(): string {
    return join(this.root, "metrics.jsonl");
  }
  get samplesPath(): string {
    return join(this.root, "samples.jsonl");
  }
  get evalPath(): string {
    return join(this.root, "eval.jsonl");
  }
  get plotPath(): string {
    return join(this.root, "plot.svg");
  }
  get checkpointsDir(): string {
    return join(this.root, "checkpoints");
  }

  /** Creates the folder and writes the resolved config; a folder that cannot be made is a RunDirError. */
  init(config: unknown): void {
    this.guard("create", () => {
      makeDirs(this.checkpointsDir);
      writeFileAtomic(this.configPath, JSON.stringify(config, null, 2) + "\n");
    });
  }

  /** Runs file-system work on the folder; a refusal (EACCES, ENOTDIR, ENAMETOOLONG, ...) becomes a RunDirError. */
  private guard<T>(verb: string, fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      if (err instanceof RlvrError) throw err;
      const e = err as NodeJS.ErrnoException;
      const hint = "choose another outDir or name (--out-dir, --name)";
      throw new RunDirError(`cannot ${verb} the run folder ${this.root}: ${e.message}; ${hint}`, { cause: err });
    }
  }

  /**
   * Prepares a fresh start. An earlier run in the folder is deleted only when `overwrite` is set or it was made
   * with the same recipe (ignoring train.steps); otherwise a RunDirError names what is there and nothing is touched.
   */
  startFresh(config: unknown, opts: { overwrite?: boolean } = {}): void {
    const found = this.guard("read", () => this.runFiles());
    if (found.length > 0 && !opts.overwrite && !this.sameRecipe(config)) {
      const steps = completeSteps(this.checkpointsDir);
      const what = `${found.join(", ")}${steps.length ? `; checkpoints up to step ${steps[steps.length - 1]}` : ""}`;
      throw new RunDirError(
        `run folder ${this.root} holds an earlier run made with a different recipe (${what}); ` +
          "nothing was deleted. " +
          "Pass --overwrite (train option overwrite) to delete it and start over, resume it with its own recipe " +
          `(${this.configPath}), or choose another name or outDir (--name, --out-dir)`,
      );
    }
    this.guard("create", () => this.reset());
    this.init(config);
  }

  /** Our files present in the folder (config, JSONL logs, checkpoints), for messages and the overwrite rule. */
  runFiles(): string[] {
    const names = ["config.json", "metrics.jsonl", "samples.jsonl", "eval.jsonl"];
    const files = names.filter((f) => existsSync(join(this.root, f)));
    if (existsSync(this.checkpointsDir) && readdirSync(this.checkpointsDir).length > 0) files.push("checkpoints/");
    return files;
  }

  /** True when the saved config.json is this recipe (train.steps may differ); false when absent or unreadable. */
  sameRecipe(config: unknown): boolean {
    let saved: unknown;
    try {
      saved = this.readConfig();
    } catch {
      return false;
    }
    const strip = (c: unknown) => {
      const o = (c ?? {}) as Record<string, unknown>;
      return JSON.stringify({ ...o, train: { ...(o.train as object), steps: 0 } });
    };
    return strip(saved) === strip(JSON.parse(JSON.stringify(config)));
  }

  /** Removes what a killed process left: temporary files of atomic writes and checkpoint leftovers. */
  recover(): string[] {
    if (!existsSync(this.root)) return [];
    return this.guard("use", () => {
      const removed: string[] = [];
      for (const dir of [this.root, join(this.checkpointsDir, "start")]) {
        if (!existsSync(dir)) continue;
        for (const n of readdirSync(dir).filter((f) => TEMP_FILE.test(f))) {
          rmSync(join(dir, n), { force: true });
          removed.push(n);
        }
      }
      return [...removed, ...recoverCheckpoints(this.checkpointsDir)];
    });
  }

  /** True when the folder already holds a run (a config.json). */
  exists(): boolean {
    return existsSync(this.configPath);
  }

  /** The saved config (raw JSON). */
  readConfig(): unknown {
    return JSON.parse(readFileSync(this.configPath, "utf8"));
  }

  /** Appends one step's metrics. */
  logMetrics(record: { step: number } & Record<string, number>): void {
    appendJsonl(this.metricsPath, record);
  }

  /** Appends sample groups of a step. */
  logSamples(record: { step: number } & Record<string, unknown>): void {
    appendJsonl(this.samplesPath, record);
  }

  /** Appends one evaluation. */
  logEval(record: { step: number } & Record<string, unknown>): void {
    appendJsonl(this.evalPath, record);
  }

  /** All metrics lines so far. */
  metrics(): Array<{ step: number } & Record<string, number>> {
    return readJsonl(this.metricsPath);
  }

  /** All evaluation lines so far. */
  evals(): Array<{ step: number } & Record<string, number>> {
    return readJsonl(this.evalPath);
  }

  /** Removes the run's files and checkpoints (a fresh start under an existing name). */
  reset(): void {
    for (const p of [this.metricsPath, this.samplesPath, this.evalPath, this.plotPath, this.configPath])
      rmSync(p, { force: true });
    rmSync(this.checkpointsDir, { recursive: true, force: true });
  }

  /** Drops every JSONL line logged after `step` (resume from a checkpoint at `step`). */
  truncateAfter(step: number): void {
    for (const path of [this.metricsPath, this.samplesPath, this.evalPath]) {
      if (!existsSync(path)) continue;
      const kept = readJsonl<{ step: number }>(path).filter((r) => r.step <= step);
      writeFileAtomic(path, kept.map((r) => JSON.stringify(r) + "\n").join(""));
    }
  }
}
