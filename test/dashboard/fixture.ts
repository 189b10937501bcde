/**
 * Run folders for the dashboard tests, written with the trainer's own RunDir writers so the files have the real
 * layout. Values are simple functions of the step so tests can check them by hand: reward/mean = step / 10,
 * grad/norm = 1 / step. Each step's sampled group has three completions: one correct (4 + step tokens), one wrong
 * (10 tokens, truncated, a two-turn episode: a model turn, an inserted tool result, an environment error) and one
 * unscored (reward null, 7 tokens).
 */
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { RunDir } from "../../src/trainer/run-dir.js";

/** A recipe-like config (the dashboard shows and diffs it; it does not validate it). */
export function fixtureConfig(lr = 0.001): Record<string, unknown> {
  return {
    name: "fixture",
    seed: 0,
    task: { name: "addition", options: {} },
    train: { steps: 10, groupSize: 3, lr },
    algorithm: { kl: { beta: 0.04 } },
  };
}

/** One metrics line of `step`. */
export function metricsAt(step: number): { step: number } & Record<string, number> {
  return {
    step,
    "reward/mean": step / 10,
    "reward/correct/mean": step / 20,
    "reward/format/mean": 1,
    "groups/zeroStdFrac": 0.5,
    "length/mean": 7,
    "kl/ref": step / 100,
    "policy/approxKl": 0,
    "entropy/mean": 1 - step / 20,
    "clip/lowFrac": 0,
    "clip/highFrac": step / 50,
    "grad/norm": 1 / step,
    "time/generate": 0.1,
    "time/reward": 0.01,
    "time/update": 0.2,
    "time/step": 0.31,
  };
}

/** The sampled group of `step` (see the file comment). */
export function samplesAt(step: number): { step: number; groups: unknown[] } {
  const completion = (text: string, reward: number | null, correct: number, tokens: number, finish: string) => ({
    text,
    finish,
    tokens,
    reward,
    terms: reward === null ? {} : { correct, format: 1 },
    advantage: reward === null ? 0 : correct ? 0.7 : -0.7,
  });
  return {
    step,
    groups: [
      {
        group: `${step}/0`,
        example: `addition/train/${step}`,
        prompt: `${step}+1=`,
        completions: [
          completion(`\\boxed{${step + 1}}`, 1, 1, 4 + step, "stop"),
          {
            ...completion("call(1)\\boxed{99", 0.2, 0, 10, "length"),
            segments: [
              { kind: "model", text: "call(1)" },
              { kind: "inserted", text: "tool says 2" },
              { kind: "model", text: "\\boxed{99" },
            ],
            turns: 2,
            envErrors: ["unknown tool"],
          },
          completion("<b>not html</b>", null, 0, 7, "stop"),
        ],
      },
    ],
  };
}

/** Writes a run with steps 1..`steps` (and evals at step 0 and every `evalEvery` steps); returns its RunDir. */
export function writeRun(root: string, name: string, steps: number, opts: { lr?: number; evalEvery?: number } = {}) {
  const run = new RunDir(join(root, name));
  run.init(fixtureConfig(opts.lr));
  run.logEval({ step: 0, "eval/addition/pass@1": 0.2 });
  for (let s = 1; s <= steps; s++) logStep(run, s, opts.evalEvery ?? 2);
  return run;
}

/** Appends one step (metrics, samples, and an eval line when `step` is a multiple of `evalEvery`). */
export function logStep(run: RunDir, step: number, evalEvery = 2): void {
  run.logSamples(samplesAt(step));
  if (step % evalEvery === 0) run.logEval({ step, "eval/addition/pass@1": 0.2 + step / 100 });
  run.logMetrics(metricsAt(step));
}

/** Appends the first `bytes` characters of step's metrics line, with no newline (a writer caught mid-line). */
export function halfLine(run: RunDir, step: number, bytes = 20): string {
  const line = JSON.stringify(metricsAt(step)) + "\n";
  appendFileSync(run.metricsPath, line.slice(0, bytes));
  return line.slice(bytes);
}
