/**
 * Seed system `drgrpo` (Dr. GRPO, arXiv 2503.20783 §3): GRPO's per-sequence length normalisation (1/|o| inside each
 * completion) and its division by the group's reward std bias the update; under GRPO wrong answers grow longer,
 * because a long wrong answer's tokens are each pushed down less than a short one's. Dr. GRPO (mean-only advantages,
 * a constant normaliser) removes both. Two arms per reported seed from the shared start
 * (bench/seeds/lib/openrs-settings.ts) on arithmetic with the working shown in half of the gold (so answers come
 * short, `\boxed{14}`, or long, `11-6=5,5+9=14 \boxed{14}`, and a wrong one can ramble up to the 40-token budget):
 * `grpo` (the grpo preset with β 0, so that only the two biases differ; the same run as openrs's plain arm,
 * run once when both systems run in one process) and `drGrpo` (the recipes/drGrpo.yaml preset).
 *
 * Figures: per arm, the mean length of wrong and of correct completions over the first and the last LEN_WINDOW
 * steps (growth = last − first) and held-out greedy pass@1 of the last step on the `final` half;
 * `wrong_len_growth_delta` = GRPO's growth − Dr. GRPO's (`_min` over seeds) and `separated` (1 when every seed's
 * GRPO growth is above every seed's Dr. GRPO growth: the difference is outside the seed spread).
 * No shuffled control: the claim is about the update's length bias, not "RL helps".
 */
import { join } from "node:path";
import { summarize } from "../harness/gates.js";
import { runPool } from "../harness/child-job.js";
import type { SeedContext, SeedSystem } from "./types.js";
import { DRGRPO_START, armSizes, ensureStart, parallelJobs, runArm, type ArmResult } from "./lib/openrs-settings.js";
import { growth, logLengths, separation } from "./lib/openrs-metrics.js";
// The same lr and β 0 as openrs's arms (Dr. GRPO has no KL), so the GRPO arm is openrs's plain arm.
import { LEN_WINDOW, OPENRS_RL } from "./openrs.js";

const pts = (x: number) => (x * 100).toFixed(1);

async function run(ctx: SeedContext): Promise<void> {
  const start = await ensureStart(ctx.workDir, ctx.smoke, DRGRPO_START);
  ctx.log(`start: ${join(start.dir, "model")}; held-out pass@1 ${JSON.stringify(start.pass)}`);
  const w = ctx.smoke ? 1 : LEN_WINDOW;
  const jobs = ctx.seeds.flatMap((seed) =>
    (["grpo", "drGrpo"] as const).map(
      (arm) => () =>
        runArm(
          {
            arm,
            seed,
            task: "countdown",
            start: join(start.dir, "model"),
            preset: arm,
            beta: 0,
            lr: OPENRS_RL.lr,
            ...armSizes(ctx.smoke),
          },
          ctx.workDir,
        ),
    ),
  );
  const results = await runPool(jobs, parallelJobs());
  const get = (arm: string, seed: number) => results.find((r) => r.arm === arm && r.seed === seed)!;
  const len = (r: ArmResult, k: "correctLen" | "wrongLen") =>
    growth(
      r.steps_.map((s) => s[k]),
      w,
    );
  const rows = ctx.seeds.map((seed) => {
    const g = get("grpo", seed),
      d = get("drGrpo", seed);
    return {
      seed,
      g,
      d,
      gW: len(g, "wrongLen"),
      dW: len(d, "wrongLen"),
      gC: len(g, "correctLen"),
      dC: len(d, "correctLen"),
    };
  });
  for (const r of rows) {
    const arms = [
      ["GRPO", r.g],
      ["Dr.GRPO", r.d],
    ] as const;
    logLengths(ctx.log, `seed ${r.seed}: mean length of wrong completions, every 10 steps (tokens)`, arms, "wrongLen");
    logLengths(ctx.log, `seed ${r.seed}: mean length of correct completions`, arms, "correctLen");
    ctx.log(
      `seed ${r.seed}: final-half greedy pass@1 start ${pts(r.g.final.start)}, GRPO ${pts(r.g.final.last)}, Dr. GRPO ${pts(r.d.final.last)}; training correctness last ${w} steps GRPO ${pts(tail(r.g, w))}, Dr. GRPO ${pts(tail(r.d, w))}`,
    );
  }
  const sep = separation(
    rows.map((r) => r.gW.growth),
    rows.map((r) => r.dW.growth),
  );
  const delta = summarize(sep.diffs);
  const gS = summarize(rows.map((r) => r.gW.growth)),
    dS = summarize(rows.map((r) => r.dW.growth));
  ctx.emit("wrong_len_growth_delta", delta.mean, "tokens", { std: delta.std, perSeed: sep.diffs });
  ctx.emit("wrong_len_growth_delta_min", delta.min, "tokens");
  ctx.emit("wrong_len_growth_grpo", gS.mean, "tokens", { std: gS.std });
  ctx.emit("wrong_len_growth_drgrpo", dS.mean, "tokens", { std: dS.std });
  ctx.emit("separated", sep.aAbove ? 1 : 0, "bool", {
    note: "every GRPO seed's wrong-length growth above every Dr. GRPO seed's",
  });
  const cg = summarize(rows.map((r) => r.gC.growth)),
    cd = summarize(rows.map((r) => r.dC.growth));
  ctx.emit("correct_len_growth_grpo", cg.mean, "tokens", { std: cg.std });
  ctx.emit("correct_len_growth_drgrpo", cd.mean, "tokens", { std: cd.std });
  const pg = summarize(rows.map((r) => r.g.final.last)),
    pd = summarize(rows.map((r) => r.d.final.last));
  ctx.emit("pass1_grpo", pg.mean, "pass@1", { std: pg.std, split: "final", decoding: "greedy" });
  ctx.emit("pass1_drgrpo", pd.mean, "pass@1", { std: pd.std, split: "final", decoding: "greedy" });
  ctx.emit("pass1_start", rows[0]!.g.final.start, "pass@1", { split: "final", decoding: "greedy" });
  ctx.log(
    `wrong-answer length growth over ${rows[0]!.g.steps_.length} steps: GRPO ${gS.mean.toFixed(1)} ± ${gS.std.toFixed(1)}, Dr. GRPO ${dS.mean.toFixed(1)} ± ${dS.std.toFixed(1)} tokens; delta ${delta.mean.toFixed(1)} ± ${delta.std.toFixed(1)} (min ${delta.min.toFixed(1)}): ${sep.aAbove ? "outside the seed spread" : "NOT outside the seed spread"}`,
  );
}

/** Mean training correctness over the last `w` steps. */
function tail(r: ArmResult, w: number): number {
  const xs = r.steps_.slice(-w).map((s) => s.correct);
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

const drgrpo: SeedSystem = {
  name: "drgrpo",
  claim:
    "GRPO's length normalisation and std scaling make wrong answers grow longer; Dr. GRPO removes the bias at the same accuracy",
  run,
};
export default drgrpo;
