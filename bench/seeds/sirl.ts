/**
 * `npm run bench:seeds sirl`: SIRL on the optimisation task (knapsack family, question-only prompts). Per seed, from
 * one start (a char-level GPT taught compact knapsack programs by a short SFT; bench/seeds/lib/sirl-gold.ts), four
 * arms of recipes/sirl.yaml: REINFORCE++ with the partial KL on <model> and <code> (the recipe), the same with full
 * KL and with no KL (the paper's three-way comparison), and the partial-KL control with the verifier's outputs
 * permuted inside each group. Each arm's figure is the held-out solver-correct rate (program runs, HiGHS finds the
 * gold objective) at the start's best decoding (greedy or T 1), minus the start's there.
 *
 * Departures: one problem family and a taught compact program (not the paper's 7B model writing Python); β and
 * the clip are the preset's (the paper's), and at our step counts the KL term is small.
 */
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import {
  ENDPOINT_DECODINGS,
  SFT_START_SOURCES,
  gainOverBest,
  sourceHash,
  splitFromEnv,
  summarize,
} from "../harness/index.js";
import { runChildJob, runPool } from "../harness/child-job.js";
import { SIRL, SIRL_ARMS, type SirlJob, type SirlResult } from "./lib/sirl-settings.js";
import { threeWay } from "./lib/sirl-metrics.js";
import type { SeedContext, SeedSystem } from "./types.js";

const JOB = "bench/seeds/lib/sirl-job.ts";
const ROOT = join(import.meta.dirname, "..", "..");

function job(spec: SirlJob): Promise<SirlResult> {
  return runChildJob<SirlResult>(JOB, spec, join(spec.dir, `${spec.kind}.json`), `sirl ${spec.kind} seed ${spec.seed}`);
}

const pct = (x: number) => (100 * x).toFixed(1);
const fmt = (r: Record<string, number>) =>
  Object.entries(r)
    .map(([k, v]) => `${k} ${pct(v)}`)
    .join(" ");

const system: SeedSystem = {
  name: "sirl",
  claim:
    "REINFORCE++ with partial KL raises the solver-correct rate; partial KL beats full KL and no KL (51.7/48.3/47.3)",
  async run(ctx: SeedContext) {
    const split = splitFromEnv(process.env.BENCH_SPLIT);
    const settings = SIRL(ctx.smoke);
    const key = createHash("sha256")
      .update(JSON.stringify(settings))
      .update(sourceHash(ROOT, [...SFT_START_SOURCES, "bench/seeds/lib/sirl-gold.ts", "recipes/sirl.yaml"]))
      .digest("hex")
      .slice(0, 10);
    const parallel = Math.max(1, Number(process.env.BENCH_SEEDS_JOBS ?? 1));
    const perSeed = await runPool(
      ctx.seeds.map((seed) => async () => {
        const dir = join(ctx.workDir, `seed-${seed}-${key}${ctx.smoke ? "-smoke" : ""}`);
        mkdirSync(dir, { recursive: true });
        const base = { seed, dir, split, smoke: ctx.smoke };
        const start = await job({ ...base, kind: "sft" });
        ctx.log(
          `seed ${seed} start: solver-correct ${fmt(start.correct)}; runs ${fmt(start.runs)}; format ${fmt(start.format)}`,
        );
        const arms: Partial<Record<(typeof SIRL_ARMS)[number], SirlResult>> = {};
        for (const arm of SIRL_ARMS) {
          const r = await job({ ...base, kind: arm, start: join(dir, "model") });
          arms[arm] = r;
          ctx.log(
            `seed ${seed} ${arm}: solver-correct ${fmt(r.correct)}; runs ${fmt(r.runs)}; trained ${r.trainSeconds?.toFixed(0)} s`,
          );
        }
        return { seed, start, arms: arms as Record<(typeof SIRL_ARMS)[number], SirlResult> };
      }),
      parallel,
    );
    const rows = perSeed.map(({ seed, start, arms }) => {
      const gain = (r: SirlResult) => gainOverBest(start.correct, r.correct, ENDPOINT_DECODINGS);
      const g = gain(arms.partial);
      return {
        seed,
        decoding: g.decoding,
        start: start.correct[g.decoding]!,
        partial: g.atStartBest,
        full: gain(arms.full).atStartBest,
        none: gain(arms.none).atStartBest,
        control: gain(arms.control).atStartBest,
        final: threeWay(arms, g.decoding),
      };
    });
    const s = (f: (r: (typeof rows)[number]) => number) => summarize(rows.map(f));
    const gain = s((r) => r.partial);
    ctx.emit("start_correct", s((r) => r.start).mean, "share");
    ctx.emit("correct_gain", gain.mean, "points/100", { std: gain.std, seeds: ctx.seeds });
    ctx.emit("correct_gain_min", gain.min, "points/100");
    ctx.emit("control_gain", s((r) => r.control).mean, "points/100", { std: s((r) => r.control).std });
    for (const arm of ["partial", "full", "none"] as const) {
      const v = s((r) => r.final[arm]);
      ctx.emit(`kl_${arm}_correct`, v.mean, "share", {
        std: v.std,
        paper: { partial: 0.517, full: 0.483, none: 0.473 }[arm],
      });
    }
    for (const r of rows)
      ctx.log(
        `seed ${r.seed} (start's best decoding ${r.decoding}, start ${pct(r.start)}): gains partial ${pct(r.partial)}, full ${pct(r.full)}, none ${pct(r.none)}, control ${pct(r.control)}`,
      );
  },
};

export default system;
