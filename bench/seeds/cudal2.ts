/**
 * `npm run bench:seeds cudal2`: CUDA-L2 (CPU edition). Per seed, from one start (a char-level GPT taught a mixture of
 * kernels: mostly the naive one, some faster, some broken; bench/seeds/lib/cudal2-kernels.ts), two arms of
 * recipes/cuda-l2.yaml: RL on the measured-speed reward, and the control with the verifier's outputs permuted inside
 * each group. Each arm's figure is the mean counted speed-up of its sampled kernels on held-out shapes (S when every
 * gate passes, 0 when one fails), at the start's best decoding (greedy or T 1); the gate-pass rate is reported beside
 * it. The RL arm's rewarded training kernels are rerun with fresh inputs (the audit: how many would be rejected).
 *
 * Departure from the paper: the policy chooses among kernels its start was taught; it writes no new ones.
 * Kernel speed is a timing measurement: the bench reports the machine's load average beside its figures.
 */
import { mkdirSync } from "node:fs";
import { loadavg } from "node:os";
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
import { CUDAL2, type Cudal2Job, type Cudal2Result } from "./lib/cudal2-settings.js";
import type { SeedContext, SeedSystem } from "./types.js";
import { createHash } from "node:crypto";

const JOB = "bench/seeds/lib/cudal2-job.ts";
const ROOT = join(import.meta.dirname, "..", "..");

function job(spec: Cudal2Job): Promise<Cudal2Result> {
  return runChildJob<Cudal2Result>(
    JOB,
    spec,
    join(spec.dir, `${spec.kind}.json`),
    `cudal2 ${spec.kind} seed ${spec.seed}`,
  );
}

const fmt = (r: Record<string, number>) =>
  Object.entries(r)
    .map(([k, v]) => `${k} ${v.toFixed(2)}`)
    .join(" ");

const system: SeedSystem = {
  name: "cudal2",
  claim: "RL on measured kernel speed raises the mean speed-up of generated kernels, every gate still passing",
  async run(ctx: SeedContext) {
    const split = splitFromEnv(process.env.BENCH_SPLIT);
    const settings = CUDAL2(ctx.smoke);
    const key = createHash("sha256")
      .update(JSON.stringify({ model: settings.model, shapes: settings.sftShapes, sft: settings.sft }))
      .update(sourceHash(ROOT, [...SFT_START_SOURCES, "bench/seeds/lib/cudal2-kernels.ts", "recipes/cuda-l2.yaml"]))
      .digest("hex")
      .slice(0, 10);
    const parallel = Math.max(1, Number(process.env.BENCH_SEEDS_JOBS ?? 1));
    ctx.log(
      `load average at start ${loadavg()
        .map((x) => x.toFixed(2))
        .join(" ")} (kernel timings are measured under it)`,
    );
    const perSeed = await runPool(
      ctx.seeds.map((seed) => async () => {
        const dir = join(ctx.workDir, `seed-${seed}-${key}${ctx.smoke ? "-smoke" : ""}`);
        mkdirSync(dir, { recursive: true });
        const base = { seed, dir, split, smoke: ctx.smoke };
        const start = await job({ ...base, kind: "sft" });
        ctx.log(`seed ${seed} start: speed-up ${fmt(start.speedup)}; gates ${fmt(start.correct)}`);
        const arm = { ...base, start: join(dir, "model") };
        const rl = await job({ ...arm, kind: "rl" });
        ctx.log(
          `seed ${seed} RL: speed-up ${fmt(rl.speedup)}; gates ${fmt(rl.correct)}; audit ${JSON.stringify(rl.audit)}`,
        );
        const control = await job({ ...arm, kind: "control" });
        ctx.log(`seed ${seed} control: speed-up ${fmt(control.speedup)}; gates ${fmt(control.correct)}`);
        return { seed, start, rl, control };
      }),
      parallel,
    );
    const rows = perSeed.map(({ seed, start, rl, control }) => {
      const g = gainOverBest(start.speedup, rl.speedup, ENDPOINT_DECODINGS);
      return {
        seed,
        decoding: g.decoding,
        gain: g.atStartBest,
        control: gainOverBest(start.speedup, control.speedup, ENDPOINT_DECODINGS).atStartBest,
        gates: rl.correct[g.decoding]!,
        startGates: start.correct[g.decoding]!,
        audit: rl.audit ?? { rerun: 0, rejected: 0 },
        mix: { start: start.mix[g.decoding], rl: rl.mix[g.decoding], control: control.mix[g.decoding] },
      };
    });
    const gain = summarize(rows.map((r) => r.gain));
    const control = summarize(rows.map((r) => r.control));
    const load = loadavg()[0]!;
    ctx.emit("speedup_gain", gain.mean, "speed-up", { std: gain.std, seeds: ctx.seeds, load1: load });
    ctx.emit("speedup_gain_min", gain.min, "speed-up");
    ctx.emit("control_gain", control.mean, "speed-up", { std: control.std });
    ctx.emit("rl_gate_pass", summarize(rows.map((r) => r.gates)).mean, "share");
    ctx.emit("start_gate_pass", summarize(rows.map((r) => r.startGates)).mean, "share");
    ctx.emit(
      "audit_rejected",
      rows.reduce((a, r) => a + r.audit.rejected, 0),
      "kernels",
      {
        rerun: rows.reduce((a, r) => a + r.audit.rerun, 0),
      },
    );
    for (const r of rows)
      ctx.log(
        `seed ${r.seed} (start's best decoding ${r.decoding}): RL ${r.gain >= 0 ? "+" : ""}${r.gain.toFixed(2)}, control ${r.control.toFixed(2)}, RL gates ${r.gates.toFixed(2)} (start ${r.startGates.toFixed(2)}); mix ${JSON.stringify(r.mix)}`,
      );
    ctx.log(
      `load average at end ${loadavg()
        .map((x) => x.toFixed(2))
        .join(" ")}`,
    );
  },
};

export default system;
