/**
 * The runs a dashboard shows: the run folders (DESIGN.md "Runs on disk") directly under its folder, one level
 * deeper for grouping folders (`runs/bench-learn/<run>`), or the folder itself when it is a run. A run is a folder
 * with `config.json` or `metrics.jsonl`. Names are only ever looked up in this listing, so a request cannot reach a
 * path outside the folder.
 *
 * Samples are enriched for the sample browser: each completion gets `correct` (its task's correct term is 1, the
 * definition `evaluate.ts` uses; null when unscored), and each step gets the mean completion length of correct and
 * of wrong completions. The trainer does not log those two in metrics.jsonl, so they are computed from the sampled
 * groups in samples.jsonl (`log.sampleGroups` per step), not from every completion of the step.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { tasks } from "../../tasks/index.js";
import { fileStamp, JsonlTail, type TailRead } from "./jsonl-tail.js";

/** A request for a run that is not in the listing (404), or for a step it has no samples of. */
export class DashboardNotFound extends Error {}

/** One row of the run list. */
export interface RunSummary {
  name: string;
  /** The task name from config.json, or null. */
  task: string | null;
  /** Planned steps (`train.steps`), or null. */
  plannedSteps: number | null;
  /** The last step in metrics.jsonl, or null before the first. */
  lastStep: number | null;
  /** Newest modification time of the run's files (ms since the epoch). */
  updatedMs: number;
}

/** One completion of a sampled group, as samples.jsonl stores it, plus `correct`. */
export interface SampleCompletion {
  text: string;
  finish?: string;
  tokens?: number;
  reward: number | null;
  terms?: Record<string, number>;
  advantage?: number;
  correct: boolean | null;
  [key: string]: unknown;
}

/** Per-step lengths derived from samples.jsonl. */
export const LENGTH_CORRECT = "samples/length/correctMean";
export const LENGTH_WRONG = "samples/length/wrongMean";

interface SamplesCache {
  stamp: string | null;
  steps: Map<number, unknown[]>;
  derived: Record<string, number>[];
}

const RUN_FILES = ["config.json", "metrics.jsonl", "samples.jsonl", "eval.jsonl"];

/** The run folders under one folder, and readers for their files. */
export class RunStore {
  private samplesCache = new Map<string, SamplesCache>();

  constructor(readonly root: string) {}

  /** Every run, newest first. */
  list(): RunSummary[] {
    return [...this.paths()]
      .map(([name, path]) => this.summary(name, path))
      .sort((a, b) => b.updatedMs - a.updatedMs || a.name.localeCompare(b.name));
  }

  /** The folder of a listed run; an unknown name is a DashboardNotFound naming the folder searched. */
  path(name: string): string {
    const p = this.paths().get(name);
    if (p === undefined) throw new DashboardNotFound(`no run "${name}" in ${this.root}`);
    return p;
  }

  /** config.json as saved, or null when absent or unreadable (a run writes it first; it may be mid-write). */
  config(name: string): unknown {
    try {
      return JSON.parse(readFileSync(join(this.path(name), "config.json"), "utf8"));
    } catch (err) {
      if (err instanceof DashboardNotFound) throw err;
      return null;
    }
  }

  /** Every complete metrics line (a half-written last line is left out). */
  metrics(name: string): TailRead {
    return new JsonlTail(join(this.path(name), "metrics.jsonl")).read();
  }

  /** Every complete eval line. */
  evals(name: string): TailRead {
    return new JsonlTail(join(this.path(name), "eval.jsonl")).read();
  }

  /** Steps that have sampled groups, ascending. */
  sampleSteps(name: string): number[] {
    return [...this.samples(name).steps.keys()].sort((a, b) => a - b);
  }

  /** The sampled groups of one step, each completion marked correct / wrong / null. */
  samplesAt(name: string, step: number): unknown[] {
    const groups = this.samples(name).steps.get(step);
    if (!groups) throw new DashboardNotFound(`run "${name}" has no samples at step ${step}`);
    return groups;
  }

  /** Per-step mean length of correct and of wrong sampled completions (LENGTH_CORRECT, LENGTH_WRONG). */
  derived(name: string): Record<string, number>[] {
    return this.samples(name).derived;
  }

  /** The term that means "correct" for the run's task: the task's own `correctTerm`, else "correct". */
  correctTerm(name: string): string {
    const task = (this.config(name) as { task?: { name?: unknown; options?: unknown } } | null)?.task;
    if (typeof task?.name === "string" && tasks.has(task.name)) {
      try {
        return tasks.get(task.name, task.options ?? {}).correctTerm;
      } catch {
        // Options this version cannot parse: fall through to the common name.
      }
    }
    return "correct";
  }

  private samples(name: string): SamplesCache {
    const path = join(this.path(name), "samples.jsonl");
    const stamp = fileStamp(path);
    const hit = this.samplesCache.get(path);
    if (hit && hit.stamp === stamp) return hit;
    const term = this.correctTerm(name);
    const steps = new Map<number, unknown[]>();
    for (const rec of new JsonlTail(path).read().records) {
      if (typeof rec.step !== "number" || !Array.isArray(rec.groups)) continue;
      const groups = rec.groups.map((g) => markGroup(g, term));
      steps.set(rec.step, [...(steps.get(rec.step) ?? []), ...groups]);
    }
    const derived = [...steps].sort((a, b) => a[0] - b[0]).map(([step, groups]) => lengthsOf(step, groups));
    const entry = { stamp, steps, derived };
    this.samplesCache.set(path, entry);
    return entry;
  }

  private paths(): Map<string, string> {
    const out = new Map<string, string>();
    if (isRun(this.root)) out.set(basename(this.root), this.root);
    for (const name of subfolders(this.root)) {
      const p = join(this.root, name);
      if (isRun(p)) out.set(name, p);
      else for (const inner of subfolders(p)) if (isRun(join(p, inner))) out.set(`${name}/${inner}`, join(p, inner));
    }
    return out;
  }

  private summary(name: string, path: string): RunSummary {
    const config = this.config(name) as { task?: { name?: unknown }; train?: { steps?: unknown } } | null;
    const records = this.metrics(name).records;
    const last = records.at(-1)?.step;
    const times = RUN_FILES.map((f) => join(path, f))
      .filter((f) => existsSync(f))
      .map((f) => statSync(f).mtimeMs);
    return {
      name,
      task: typeof config?.task?.name === "string" ? config.task.name : null,
      plannedSteps: typeof config?.train?.steps === "number" ? config.train.steps : null,
      lastStep: typeof last === "number" ? last : null,
      updatedMs: Math.max(0, ...times),
    };
  }
}

function isRun(path: string): boolean {
  return existsSync(join(path, "config.json")) || existsSync(join(path, "metrics.jsonl"));
}

function subfolders(path: string): string[] {
  try {
    return readdirSync(path, { withFileTypes: true })
      .filter((d) => d.isDirectory() && !d.name.startsWith(".") && d.name !== "checkpoints")
      .map((d) => d.name);
  } catch {
    return [];
  }
}

/** A group with each completion's `correct`: the correct term is 1; null when the completion was not scored. */
function markGroup(group: unknown, term: string): unknown {
  const g = group as { completions?: unknown };
  if (!Array.isArray(g?.completions)) return group;
  const completions = g.completions.map((c: SampleCompletion) => ({
    ...c,
    correct: c.reward === null || c.reward === undefined ? null : (c.terms?.[term] ?? 0) === 1,
  }));
  return { ...g, completions };
}

function lengthsOf(step: number, groups: unknown[]): Record<string, number> {
  const all = groups.flatMap(
    (g) => ((g as { completions?: SampleCompletion[] }).completions ?? []) as SampleCompletion[],
  );
  const meanTokens = (cs: SampleCompletion[]) => cs.reduce((s, c) => s + (c.tokens ?? 0), 0) / cs.length;
  const out: Record<string, number> = { step };
  const correct = all.filter((c) => c.correct === true);
  const wrong = all.filter((c) => c.correct === false);
  if (correct.length) out[LENGTH_CORRECT] = meanTokens(correct);
  if (wrong.length) out[LENGTH_WRONG] = meanTokens(wrong);
  return out;
}
