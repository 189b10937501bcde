/**
 * Trainer events as optional hooks (STYLE.md: like vitest's Reporter): the loop calls `onStart`, `onStep`,
 * `onEval`, `onCheckpoint` and `onEnd` on every reporter it was given. Console progress, the JSONL files and the
 * SVG plot are each just a reporter.
 */
import { writeFileAtomic } from "../util/index.js";
import type { RunDir } from "./run-dir.js";
import { renderLinePlot } from "./svg-plot.js";

/** Metrics of one step (spec §9 keys) keyed by name. */
export type StepMetrics = Record<string, number>;

/** One held-out evaluation: `eval/<task>/pass@k`, `eval/<task>/mean@n`, `eval/<task>/reward/<term>`, ... */
export type EvalMetrics = Record<string, number>;

/** Hooks a reporter may implement. */
export interface Reporter {
  onStart?(info: { runDir: string; startStep: number; totalSteps: number; resumed: boolean }): void;
  onStep?(step: number, metrics: StepMetrics): void;
  onEval?(step: number, metrics: EvalMetrics): void;
  onCheckpoint?(step: number, dir: string): void;
  onEnd?(info: { step: number; best: { score: number; step: number } | null }): void;
}

/** Calls `hook` on every reporter that has it. */
export function emit<K extends keyof Reporter>(
  reporters: readonly Reporter[],
  hook: K,
  ...args: Parameters<NonNullable<Reporter[K]>>
): void {
  for (const r of reporters) (r[hook] as ((...a: unknown[]) => void) | undefined)?.apply(r, args);
}

/** A progress line with ETA, live reward and KL: redrawn in place on a TTY, printed every 10% otherwise. */
export function consoleReporter(out: NodeJS.WriteStream = process.stderr): Reporter {
  let start = 0;
  let first = 0;
  let total = 0;
  let lastPass: number | null = null;
  let lastPrintedDecile = -1;
  return {
    onStart(info) {
      start = Date.now();
      first = info.startStep;
      total = info.totalSteps;
      out.write(
        `${info.resumed ? "resuming" : "training"} ${info.runDir} from step ${info.startStep} to ${info.totalSteps}\n`,
      );
    },
    onStep(step, m) {
      const done = step - first;
      const elapsed = (Date.now() - start) / 1000;
      const eta = done > 0 ? (elapsed / done) * (total - step) : NaN;
      const frac = step / total;
      const bar = "#".repeat(Math.round(frac * 20)).padEnd(20, ".");
      const kl = m["kl/ref"] !== undefined ? ` kl ${m["kl/ref"]!.toFixed(4)}` : "";
      const pass = lastPass !== null ? ` pass@1 ${lastPass.toFixed(3)}` : "";
      const line = `step ${step}/${total} [${bar}] ${(frac * 100).toFixed(0)}% ETA ${fmtTime(eta)} reward ${(m["reward/mean"] ?? NaN).toFixed(3)}${kl}${pass}`;
      if (out.isTTY) out.write(`\r${line}\x1b[K${step === total ? "\n" : ""}`);
      else {
        const decile = Math.floor(frac * 10);
        if (decile !== lastPrintedDecile || step === total) {
          lastPrintedDecile = decile;
          out.write(line + "\n");
        }
      }
    },
    onEval(step, m) {
      const key = Object.keys(m).find((k) => k.endsWith("/pass@1"));
      if (key) lastPass = m[key]!;
      const parts = Object.entries(m)
        .filter(([k]) => k.includes("pass@") || k.endsWith("/reward"))
        .map(([k, v]) => `${k.split("/").slice(-1)[0]} ${v.toFixed(3)}`);
      out.write(`${out.isTTY ? "\r\x1b[K" : ""}eval @ step ${step}: ${parts.join(", ")}\n`);
    },
    onCheckpoint(step, dir) {
      if (!out.isTTY) out.write(`checkpoint step ${step}: ${dir}\n`);
    },
  };
}

/** Writes metrics.jsonl and eval.jsonl lines. */
export function jsonlReporter(run: RunDir): Reporter {
  return {
    onStep: (step, m) => run.logMetrics({ step, ...m }),
    onEval: (step, m) => run.logEval({ step, ...m }),
  };
}

/** Rewrites plot.svg (reward mean and held-out pass@1 over steps) after every step and evaluation. */
export function svgReporter(run: RunDir, title: string): Reporter {
  const draw = () => {
    const metrics = run.metrics();
    const evals = run.evals();
    const passKey = evals.length ? Object.keys(evals[0]!).find((k) => k.endsWith("/pass@1")) : undefined;
    const svg = renderLinePlot(
      title,
      [
        {
          name: "train reward (mean)",
          color: "#1f77b4",
          points: metrics.map((m) => [m.step, m["reward/mean"] ?? NaN]),
        },
        {
          name: "held-out pass@1",
          color: "#ff7f0e",
          points: passKey ? evals.map((e) => [e.step, e[passKey] ?? NaN]) : [],
        },
      ],
      { x: "step", y: "value" },
    );
    writeFileAtomic(run.plotPath, svg);
  };
  return { onStep: draw, onEval: draw, onEnd: draw };
}

/** Seconds as `1m05s`. */
export function fmtTime(s: number): string {
  if (!Number.isFinite(s)) return "--";
  const m = Math.floor(s / 60);
  const sec = Math.round(s - m * 60);
  return m > 0 ? `${m}m${String(sec).padStart(2, "0")}s` : `${sec}s`;
}
