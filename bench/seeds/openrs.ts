/**
 * Seed system `openrs` (Open-RS, arXiv 2503.16219): GRPO on small-model maths with correctness, format and the
 * cosine length reward, no SFT of its own. Two arms per reported seed from one shared start
 * (bench/seeds/lib/openrs-settings.ts): `cosine` (the recipe, recipes/open-rs.yaml: `cosine-length` carries the
 * correctness, plain correctness stays at weight 0 for pass@1) and `grpo` (the same run with plain correctness,
 * also the baseline arm of drgrpo: one run serves both).
 *
 * Figures: the mean token length of correct and of wrong completions over the last OPENRS_WINDOW steps, cosine against
 * plain (`correct_len_cut` = plain − cosine, positive when the cosine reward shortens correct answers; `_min` over
 * seeds), and the card's caution: the peak step of held-out greedy pass@1 against the last step (`peak_step`,
 * `drop_after_peak`), whether keep-best kept the peak (`keepbest_is_peak`, share of seeds) and what the peak and
 * last checkpoints score on the unseen `final` half. No shuffled control: the claims measured here are about
 * lengths and the shape of the pass@1 curve, not "RL helps" (bench:learn measures that on this task).
 * Departure: arithmetic, not competition maths; a 0.8M char-level GPT with a short SFT start, not a 1.5B model.
 */
import { summarize } from "../harness/gates.js";
import type { SeedContext, SeedSystem } from "./types.js";
import {
  OPENRS_START,
  armSizes,
  ensureStart,
  parallelJobs,
  runArm,
  taskOf,
  type ArmResult,
} from "./lib/openrs-settings.js";
import { growth, logLengths, peakReport, separation } from "./lib/openrs-metrics.js";
import { runPool } from "../harness/child-job.js";
import { join } from "node:path";

/** Steps averaged for the end-of-run lengths (and the start-of-run ones). */
export const LEN_WINDOW = 15;
/**
 * openrs's arms take 40 steps (drgrpo's 60), lengths over the last 10: the budget left after its start had trained on
 * the shared machine; Open-RS's own peak came within 50-100 steps of a far larger batch.
 */
export const OPENRS_STEPS = 40;
const OPENRS_WINDOW = 10;
/**
 * RL settings of both arms: the grpo preset at lr 1e-4, where bench:learn's countdown runs moved fastest
 * (docs/training.md), with β 0 (no reference model: cheaper, and the same GRPO run as drgrpo's baseline arm); not
 * tuned further (docs/seed-systems/openrs.md says what the budget allowed).
 */
export const OPENRS_RL = { preset: "grpo" as const, beta: 0, lr: Number(process.env.BENCH_OPENRS_LR ?? 1e-4) };

const pts = (x: number) => (x * 100).toFixed(1);

async function run(ctx: SeedContext): Promise<void> {
  const start = await ensureStart(ctx.workDir, ctx.smoke, OPENRS_START);
  ctx.log(`start: ${join(start.dir, "model")}; held-out pass@1 ${JSON.stringify(start.pass)}`);
  const sizes = ctx.smoke ? armSizes(true) : { ...armSizes(false), steps: OPENRS_STEPS };
  const w = ctx.smoke ? 1 : OPENRS_WINDOW;
  const jobs = ctx.seeds.flatMap((seed) =>
    (["cosine", "grpo"] as const).map(
      (arm) => () =>
        runArm(
          {
            arm,
            seed,
            task: "arithmetic",
            start: join(start.dir, "model"),
            ...OPENRS_RL,
            ...(arm === "cosine" ? { cosineMaxLen: taskOf("arithmetic").maxTokens } : {}),
            ...sizes,
          },
          ctx.workDir,
        ),
    ),
  );
  const results = await runPool(jobs, parallelJobs());
  const get = (arm: string, seed: number) => results.find((r) => r.arm === arm && r.seed === seed)!;
  const rows = ctx.seeds.map((seed) => {
    const cos = get("cosine", seed),
      plain = get("grpo", seed);
    const len = (r: ArmResult, k: "correctLen" | "wrongLen") =>
      growth(
        r.steps_.map((s) => s[k]),
        w,
      );
    return {
      seed,
      cos,
      plain,
      cosCorrect: len(cos, "correctLen"),
      plainCorrect: len(plain, "correctLen"),
      cosWrong: len(cos, "wrongLen"),
      plainWrong: len(plain, "wrongLen"),
      peak: peakReport(cos.evals, cos.best),
      plainPeak: peakReport(plain.evals, plain.best),
    };
  });
  for (const r of rows) {
    const arms = [
      ["cosine", r.cos],
      ["plain", r.plain],
    ] as const;
    logLengths(
      ctx.log,
      `seed ${r.seed}: mean length of correct completions, every 10 steps (tokens)`,
      arms,
      "correctLen",
    );
    logLengths(ctx.log, `seed ${r.seed}: mean length of wrong completions`, arms, "wrongLen");
    for (const [name, arm, p] of [
      ["cosine", r.cos, r.peak],
      ["plain", r.plain, r.plainPeak],
    ] as const) {
      const curve = arm.evals.map((e) => `${e.step}:${pts(e.pass)}`).join(" ");
      ctx.log(
        `seed ${r.seed} ${name}: held-out greedy pass@1 ${curve}; peak step ${p.peakStep} (${pts(p.peakPass)}), last ${p.lastStep} (${pts(p.lastPass)}); keep-best step ${arm.best?.step ?? "none"}${p.keepBestIsPeak ? " = peak" : " != peak"}; final half: start ${pts(arm.final.start)}, best ${pts(arm.final.best)}, last ${pts(arm.final.last)}`,
      );
    }
  }
  const seeds = ctx.seeds.join(",");
  const cut = separation(
    rows.map((r) => r.plainCorrect.last),
    rows.map((r) => r.cosCorrect.last),
  );
  const cutS = summarize(cut.diffs);
  ctx.emit("correct_len_cut", cutS.mean, "tokens", { std: cutS.std, seeds });
  ctx.emit("correct_len_cut_min", cutS.min, "tokens");
  ctx.emit("correct_len_cosine", summarize(rows.map((r) => r.cosCorrect.last)).mean, "tokens");
  ctx.emit("correct_len_plain", summarize(rows.map((r) => r.plainCorrect.last)).mean, "tokens");
  ctx.emit("correct_len_start", summarize(rows.map((r) => r.cosCorrect.first)).mean, "tokens");
  const wrong = summarize(rows.map((r) => r.cosWrong.last - r.plainWrong.last));
  ctx.emit("wrong_len_delta", wrong.mean, "tokens", { std: wrong.std, note: "cosine − plain, last steps" });
  const peakS = summarize(rows.map((r) => r.peak.peakStep));
  ctx.emit("peak_step", peakS.mean, "step", {
    perSeed: rows.map((r) => r.peak.peakStep),
    lastStep: rows[0]!.peak.lastStep,
    std: peakS.std,
  });
  ctx.emit("plain_peak_step", summarize(rows.map((r) => r.plainPeak.peakStep)).mean, "step", {
    perSeed: rows.map((r) => r.plainPeak.peakStep),
  });
  const drop = summarize(rows.map((r) => r.peak.dropAfterPeak));
  ctx.emit("drop_after_peak", drop.mean, "pass@1", {
    std: drop.std,
    max: Math.max(...rows.map((r) => r.peak.dropAfterPeak)),
  });
  ctx.emit("keepbest_is_peak", rows.filter((r) => r.peak.keepBestIsPeak).length / rows.length, "share of seeds");
  const gain = summarize(rows.map((r) => r.cos.final.last - r.cos.final.start));
  ctx.emit("pass_gain_last", gain.mean, "pass@1", { std: gain.std, split: "final", decoding: "greedy" });
  ctx.emit("pass_gain_last_min", gain.min, "pass@1");
  const best = summarize(rows.map((r) => r.cos.final.best - r.cos.final.last));
  ctx.emit("best_minus_last_final", best.mean, "pass@1", { std: best.std, split: "final" });
  ctx.log(
    `correct answers: cosine ${summarize(rows.map((r) => r.cosCorrect.last)).mean.toFixed(1)} tokens vs plain ${summarize(rows.map((r) => r.plainCorrect.last)).mean.toFixed(1)} over the last ${w} steps (cut ${cutS.mean.toFixed(1)} ± ${cutS.std.toFixed(1)}, min ${cutS.min.toFixed(1)}; ${cut.aAbove ? "every seed shorter with cosine" : "seeds overlap"})`,
  );
}

const openrs: SeedSystem = {
  name: "openrs",
  claim:
    "the cosine length reward keeps correct answers short, and a small model's quality peaks early in RL then degrades (keep-best must pick the peak)",
  run,
};
export default openrs;
