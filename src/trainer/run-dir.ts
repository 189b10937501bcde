/**
 * The run folder (DESIGN.md "Runs on disk"): `runs/<name>/` holds `config.json` (the resolved recipe),
 * `metrics.jsonl` (one line per step), `samples.jsonl` (groups with rewards and advantages), `eval.jsonl`,
 * `plot.svg` and `checkpoints/`. On resume the JSONL files are cut back to the checkpoint's step, so a run killed
 * after logging steps it never checkpointed logs them again, once, when it replays them.
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { appendJsonl, readJsonl, writeFileAtomic } from "../util/index.js";

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

  /** Creates the folder and writes the resolved config. */
  init(config: unknown): void {
    mkdirSync(this.checkpointsDir, { recursive: true });
    writeFileAtomic(this.configPath, JSON.stringify(config, null, 2) + "\n");
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
    for (const p of [this.metricsPath, this.samplesPath, this.evalPath, this.plotPath, this.configPath]) rmSync(p, { force: true });
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
