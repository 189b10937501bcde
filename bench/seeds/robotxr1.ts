/**
 * RobotxR1 (Boyle et al. 2025, "RobotxR1: Enabling Embodied Robotic Intelligence on Large Language Models through
 * Closed-Loop Reinforcement Learning"): SFT then GRPO, both on LoRA adapters, for an LLM that tunes a racing car's
 * MPC from an instruction; success is judged by driving on a track and with paraphrases not trained on.
 *
 * Per reported seed, from one shared base (bench/seeds/lib/robotxr1-settings.ts says why there is one): the recipe
 * (LoRA SFT merged into the start, then LoRA GRPO) and its shuffled-reward control, each in a child process. Figures:
 * `success_gain` (RL's success minus the start's, at the start's best decoding) with `_min`, `control_gain`, and
 * `q8_drop` / `f16_drop` (success lost when the trained weights go through the GGUF export's Q8_0 / F16). The export
 * has no type under 8 bits, so none is measured. The split audit (held-out paraphrases, unseen track) runs first.
 */
import { createHash } from "node:crypto";
import { join, resolve } from "node:path";
import { runChildJob, runPool } from "../harness/child-job.js";
import { sourceHash, summarize } from "../harness/index.js";
import { auditSplits, seedFigures } from "./lib/robotxr1-metrics.js";
import type { RobotJobResult, RobotJobSpec } from "./lib/robotxr1-job.js";
import { FULL, LORA, MODEL, SMOKE, TASK_OPTIONS } from "./lib/robotxr1-settings.js";
import type { SeedContext, SeedSystem } from "./types.js";

const JOB = "bench/seeds/lib/robotxr1-job.ts";
const ROOT = resolve(import.meta.dirname, "..", "..");

async function run(ctx: SeedContext): Promise<void> {
  const s = ctx.smoke ? SMOKE : FULL;
  const audit = auditSplits(TASK_OPTIONS, s.trainExamples, s.evalExamples);
  ctx.log(
    `split audit: train on ${audit.trainTracks} (${audit.trainInstructions} instructions), test on ${audit.testTracks} ` +
      `(${audit.testInstructions} instructions, ${audit.heldOutPerBehaviour} paraphrases per behaviour), shared ${audit.shared}`,
  );
  if (audit.shared > 0 || audit.trainTracks.some((t) => audit.testTracks.includes(t)))
    throw new Error("robotxr1: the test split shares instructions or a track with the train split");
  ctx.emit("shared_prompts", audit.shared, "prompts");

  // The shared base, cached by its settings and the source that makes it.
  const settings = JSON.stringify({ model: MODEL, base: s.base, task: TASK_OPTIONS, n: s.trainExamples });
  const key = createHash("sha256").update(settings).update(sourceHash(ROOT)).digest("hex").slice(0, 12);
  const baseDir = join(ctx.workDir, `base-${key}`);
  const job = (spec: RobotJobSpec) =>
    runChildJob<RobotJobResult>(JOB, spec, join(spec.dir, `${spec.kind}.json`), `robotxr1 ${spec.kind} ${spec.seed}`);
  const b = await job({ kind: "base", seed: s.base.seed, smoke: ctx.smoke, dir: baseDir });
  ctx.log(`base ${baseDir} ready (${b.seconds.toFixed(0)} s)`);

  const jobs = ctx.seeds.flatMap((seed) =>
    (["rl", "control"] as const).map(
      (kind) => () => job({ kind, seed, smoke: ctx.smoke, dir: join(ctx.workDir, `seed-${seed}`), base: baseDir }),
    ),
  );
  const results = await runPool(jobs, ctx.smoke ? jobs.length : 2); // smoke jobs are tiny: start them all
  const figures = ctx.seeds.map((seed, i) => {
    const f = seedFigures(results[2 * i]!, results[2 * i + 1]!);
    ctx.log(
      `seed ${seed}: start ${pct(f.startSuccess)} at ${f.decoding} → RL ${pct(f.rlSuccess)} (gain ${pts(f.successGain)}, ` +
        `best vs best ${pts(f.bestVsBest)}), control gain ${pts(f.controlGain)}, Q8_0 drop ${pts(f.q8Drop)}, ` +
        `F16 drop ${pts(f.f16Drop)}; train success by step ${results[2 * i]!.trainSuccess!.map((x) => x.toFixed(2)).join(" ")}`,
    );
    return f;
  });
  const emitGain = (name: string, xs: number[], extra: Record<string, unknown> = {}) => {
    const m = summarize(xs.map((x) => 100 * x));
    ctx.emit(name, m.mean, "points", { std: m.std, seeds: ctx.seeds, ...extra });
    ctx.emit(`${name}_min`, m.min, "points");
  };
  emitGain(
    "success_gain",
    figures.map((f) => f.successGain),
    { target: 10 },
  );
  emitGain(
    "control_gain",
    figures.map((f) => f.controlGain),
  );
  emitGain(
    "q8_drop",
    figures.map((f) => f.q8Drop),
  );
  emitGain(
    "f16_drop",
    figures.map((f) => f.f16Drop),
  );
  const start = summarize(figures.map((f) => 100 * f.startSuccess));
  ctx.emit("start_success", start.mean, "%", { std: start.std });
  const margins = figures.map((f) => f.successGain - f.controlGain);
  ctx.log(
    `LoRA r ${LORA.rank} on ${LORA.targets.join(", ")}; margin over control per seed ${margins.map(pts).join(", ")}; ` +
      `target ≥ 10 points over the start on every seed: ${figures.every((f) => f.successGain >= 0.1) ? "PASS" : "FAIL"}`,
  );
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const pts = (x: number) => `${x >= 0 ? "+" : ""}${(100 * x).toFixed(1)}`;

/** The RobotxR1 seed system. */
const robotxr1: SeedSystem = {
  name: "robotxr1",
  claim:
    "SFT then GRPO on LoRA adapters raises the success rate of instructed MPC tuning on an unseen track with unseen " +
    "paraphrases over the SFT model; quantising the policy costs some of it",
  run,
};
export default robotxr1;
