/**
 * `npm run bench:trl`: the same tiny Llama-shaped model (test/fixtures/parity/llama, one safetensors file) trained on
 * the same task twice, once with TRL's GRPOTrainer (bench/peers/trl_grpo.py, CPU) and once with rlvr, with identical
 * G, prompts per step, learning rate, β, max new tokens, loss mode (seq-mean-token-mean, TRL "grpo") and steps.
 * Prints `trl.steps_per_s_ratio` (rlvr / TRL; target ≥ 3) and both reward curves, and the TRL option names it set
 * beside the rlvr settings they map to (`fromTrlGrpo`). Skips with a message when the local Python environment with
 * trl is absent (`.venv/bin/python`, or the interpreter named by BENCH_TRL_PYTHON).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { tmpdir } from "node:os";
import { fromTrlGrpo, type TrlGrpoOptions } from "../src/algorithms/trl-options.js";
import { getTask } from "../src/tasks/index.js";
import { resolveConfig } from "../src/trainer/recipe.js";
import { train } from "../src/trainer/train.js";
import { RunDir } from "../src/trainer/run-dir.js";
import { jsonlReporter } from "../src/trainer/reporters.js";

const ROOT = resolve(import.meta.dirname, "..");
const PY = process.env.BENCH_TRL_PYTHON ?? join(ROOT, ".venv", "bin", "python");
const MODEL = join(ROOT, "test", "fixtures", "parity", "llama");
const S = { G: 4, promptsPerStep: 4, lr: 1e-3, beta: 0.04, maxNewTokens: 16, steps: Number(process.env.BENCH_TRL_STEPS ?? 20), seed: 0 };

/**
 * The GRPOConfig fields the TRL side sets, by TRL's names. `use_bias_correction_kl` is off because rlvr's grpo preset
 * uses the plain KL term (TRL 1.13's default multiplies it by the ratio; docs/algorithms.md, "TRL and verl option
 * mapping"); at num_iterations 1 the clip ε never binds.
 */
const TRL_OPTIONS: Required<Pick<TrlGrpoOptions, "loss_type" | "scale_rewards" | "importance_sampling_level" | "beta" |
  "use_bias_correction_kl" | "epsilon" | "num_iterations" | "max_completion_length">> = {
  loss_type: "grpo",
  scale_rewards: "group",
  importance_sampling_level: "token",
  beta: S.beta,
  use_bias_correction_kl: false,
  epsilon: 0.2,
  num_iterations: 1,
  max_completion_length: S.maxNewTokens,
};

/** One line per TRL option: its value and the rlvr setting it maps to. */
function printOptions(): void {
  const m = fromTrlGrpo(TRL_OPTIONS);
  const rlvr: Record<keyof typeof TRL_OPTIONS, string> = {
    loss_type: `algorithm.loss.aggregation=${m.loss.aggregation}`,
    scale_rewards: `algorithm.advantage.type=${m.advantage.type} (σ per ${m.advantage.stdScope ?? "-"})`,
    importance_sampling_level: `algorithm.policy.ratio=${m.loss.ratio}`,
    beta: `algorithm.kl.beta=${m.loss.beta} (estimator ${m.loss.estimator})`,
    use_bias_correction_kl: `algorithm.kl.importanceWeight=${m.loss.klImportanceWeight}`,
    epsilon: "algorithm.policy.clip none (ratio 1 at innerIterations 1)",
    num_iterations: `train.innerIterations=${m.innerIterations}`,
    max_completion_length: `train.maxCompletionTokens=${S.maxNewTokens}`,
  };
  for (const [k, v] of Object.entries(TRL_OPTIONS)) {
    console.log(`  TRL ${k}=${JSON.stringify(v)}  ->  rlvr ${rlvr[k as keyof typeof rlvr]}`);
  }
  const count = Object.keys(TRL_OPTIONS).length;
  console.log(JSON.stringify({ bench: "trl", metric: "trl.options", value: count, unit: "options",
    trl: TRL_OPTIONS, rlvr }));
}

function line(metric: string, value: number, unit: string, extra: Record<string, unknown> = {}): void {
  console.log(JSON.stringify({ bench: "trl", metric, value, unit, ...extra }));
}

async function main(): Promise<void> {
  const probe = existsSync(PY) ? spawnSync(PY, ["-c", "import trl, torch, transformers"], { encoding: "utf8" }) : null;
  if (!probe || probe.status !== 0) {
    console.log(`bench:trl skipped: no Python environment with trl at ${PY} (create .venv with torch, transformers, trl to run it)`);
    console.log(JSON.stringify({ bench: "trl", metric: "trl.skipped", value: 1, unit: "bool" }));
    return;
  }
  const task = getTask("addition", { minDigits: 1, maxDigits: 1 });
  const prompts = task.generate("train", 512, 0);
  const work = mkdtempSync(join(tmpdir(), "rlvr-bench-trl-"));

  // ---- TRL
  const settings = {
    model_dir: MODEL, out_dir: join(work, "trl"), seed: S.seed, steps: S.steps, lr: S.lr, beta: S.beta, G: S.G,
    prompts_per_step: S.promptsPerStep, max_new_tokens: S.maxNewTokens, loss_type: "grpo", threads: 2,
    trl_options: TRL_OPTIONS,
    prompts: prompts.map((e) => ({ prompt: e.prompt, answer: (e.gold as { answer: string }).answer })),
  };
  writeFileSync(join(work, "settings.json"), JSON.stringify(settings));
  const py = spawnSync(PY, [join(ROOT, "bench", "peers", "trl_grpo.py"), join(work, "settings.json")], { encoding: "utf8", maxBuffer: 1 << 26 });
  if (py.status !== 0) throw new Error(`TRL run failed:\n${py.stderr.slice(-4000)}`);
  const trlLines = py.stdout.split("\n").flatMap((l) => {
    try {
      const j = JSON.parse(l) as Record<string, number>;
      return typeof j === "object" && j !== null && ("steps_per_s" in j || "reward" in j) ? [j] : [];
    } catch {
      return []; // TRL's own log lines
    }
  });
  const trlCurve = trlLines.filter((l) => l.step !== undefined).map((l) => l.reward!);
  // Steady state: from the end of step 1 to the end of the last step (TRL's first step includes its warm-up).
  const trlSteps = trlLines.filter((l) => l.step !== undefined);
  const trlRate = trlSteps.length >= 2
    ? (trlSteps.length - 1) / (trlSteps[trlSteps.length - 1]!.time! - trlSteps[0]!.time!)
    : trlLines.find((l) => l.steps_per_s !== undefined)!.steps_per_s!;

  // ---- rlvr, same settings (grpo preset = TRL loss_type "grpo": z-score, seq-mean-token-mean, k3 KL)
  const config = resolveConfig({
    name: "trl-parity", outDir: work, seed: S.seed, preset: "grpo",
    model: { type: "checkpoint", path: MODEL },
    task: { name: "addition", options: { minDigits: 1, maxDigits: 1 }, trainExamples: 512, testExamples: 16 },
    algorithm: { kl: { beta: S.beta } },
    train: { steps: S.steps, promptsPerStep: S.promptsPerStep, groupSize: S.G, maxCompletionTokens: S.maxNewTokens, lr: S.lr, microBatchSize: S.G * S.promptsPerStep, maxGradNorm: 1 },
    eval: { every: 0, atStart: false, examples: 16 },
    checkpoint: { every: 0, keepBest: false },
    log: { sampleGroups: 0, progress: false },
  });
  const run = new RunDir(join(work, "trl-parity"));
  await train(config, { reporters: [jsonlReporter(run)], resume: false });
  const metrics = run.metrics();
  const ours = metrics.map((m) => m["reward/mean"]!);
  const steady = metrics.slice(1); // the same steady-state window: steps 2..N, evaluation time excluded
  const ourSeconds = steady.reduce((s, m) => s + m["time/step"]! - (m["time/eval"] ?? 0), 0);
  const ourRate = steady.length / ourSeconds;

  const ratio = ourRate / trlRate;
  line("trl.rlvr_steps_per_s", ourRate, "steps/s");
  line("trl.trl_steps_per_s", trlRate, "steps/s");
  console.log(JSON.stringify({ bench: "trl", metric: "trl.steps_per_s_ratio", value: ratio, unit: "x", peer: "trl GRPOTrainer (CPU)", peerValue: trlRate, ratio }));
  line("trl.reward_curve.rlvr", ours.reduce((a, b) => a + b, 0) / ours.length, "mean reward", { curve: ours.map((x) => +x.toFixed(4)) });
  line("trl.reward_curve.trl", trlCurve.reduce((a, b) => a + b, 0) / Math.max(1, trlCurve.length), "mean reward", { curve: trlCurve.map((x) => +x.toFixed(4)) });
  console.log(`rlvr ${ourRate.toFixed(2)} steps/s vs TRL ${trlRate.toFixed(2)} steps/s: ${ratio.toFixed(2)}x (target >= 3x); ` +
    `settings G=${S.G} Q=${S.promptsPerStep} lr=${S.lr} beta=${S.beta} maxNew=${S.maxNewTokens} steps=${S.steps}, loss grpo`);
  printOptions();
  console.log(`reward rlvr: ${ours.map((x) => x.toFixed(2)).join(" ")}`);
  console.log(`reward TRL:  ${trlCurve.map((x) => x.toFixed(2)).join(" ")}`);
  rmSync(work, { recursive: true, force: true });
}

await main();
