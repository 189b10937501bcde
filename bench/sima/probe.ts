/**
 * A tuning probe of bench:sima on one seed (the `tune` half unless PROBE_SPLIT=final): the bench's SFT start (cached
 * like the bench's, by settings and source; PROBE_D / PROBE_LAYERS make a wider or deeper policy in its own folder),
 * evaluated at every decoding, then one RL arm with a checkpoint every PROBE_EVERY steps, each evaluated the same way
 * (per kind, arithmetic, invalid commands). It resumes a killed run. docs/multi-turn.md ("What is left") has what the
 * probes so far measured.
 *
 * Knobs: PROBE_SEED (0), PROBE_STEPS (100), PROBE_EVERY (25), PROBE_SHAPED (the shaped progress weight, 0),
 * PROBE_TEMP (RL sampling temperature, 1), PROBE_ADV (the advantage type, zScore; e.g. meanOnly), PROBE_ONLY_START=1
 * (stop after the start's evaluation), PROBE_D and PROBE_LAYERS, and the bench's BENCH_SIMA_LR and
 * BENCH_SIMA_SFT_STEPS. Results: runs/bench-sima/probe-rl-*\/probe.json and the start's eval-<split>.json.
 * Run: PROBE_STEPS=150 PROBE_EVERY=50 PROBE_SHAPED=0.3 BENCH_SIMA_LR=1e-4 RLVR_THREADS=1 npx tsx bench/sima/probe.ts
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { train } from "../../src/trainer/train.js";
import { jsonlReporter } from "../../src/trainer/reporters.js";
import { RunDir } from "../../src/trainer/run-dir.js";
import { sourceHash, splitFromEnv } from "../harness/index.js";
import { armRecipe } from "../harness/arms.js";
import { evaluateModel, makeStart } from "./job.js";
import { MAX_TOKENS, MODEL, SIMA, sizes, startDirOf, type SimaJob } from "./settings.js";

const ROOT = resolve(import.meta.dirname, "../..");
const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const seed = env("PROBE_SEED", 0);
const steps = env("PROBE_STEPS", 100);
const every = env("PROBE_EVERY", 25);
const shaped = env("PROBE_SHAPED", 0);
const temp = env("PROBE_TEMP", 1);
const adv = process.env.PROBE_ADV ?? "zScore";
const split = process.env.PROBE_SPLIT ? splitFromEnv(process.env.PROBE_SPLIT) : "tune";
const shape = process.env.PROBE_D ? { dModel: env("PROBE_D", 128), nLayers: env("PROBE_LAYERS", 4) } : null;
const s = { ...sizes(false), steps };

const workDir = join(ROOT, "runs", "bench-sima");
const shapeTag = shape ? `-d${shape.dModel}x${shape.nLayers}` : "";
const startDir = startDirOf(workDir, seed, false, sourceHash(ROOT)) + shapeTag;
const tag = [
  shaped ? `-sh${shaped}` : "",
  temp !== 1 ? `-t${temp}` : "",
  adv !== "zScore" ? `-${adv}` : "",
  s.sftSteps !== 1500 ? `-sft${s.sftSteps}` : "",
  shapeTag,
  split === "final" ? "-final" : "",
].join("");
const dir = join(workDir, `probe-rl-${seed}-lr${s.lr}-s${steps}${tag}`);
const job: SimaJob = { kind: "rl", seed, dir, startDir, split, sizes: s };
mkdirSync(startDir, { recursive: true });

const t0 = performance.now();
const modelDir = await makeStart(job, shape ? { ...MODEL, ...shape } : MODEL);
console.log(`start ${startDir} ready after ${((performance.now() - t0) / 1000).toFixed(0)} s`);
const out: Record<string, unknown> = { seed, steps, split, lr: s.lr, shaped, temp, adv, startDir };
const startEval = join(startDir, `eval-${split}.json`);
if (!existsSync(startEval)) writeFileSync(startEval, JSON.stringify(await evaluateModel(modelDir, job)));
out.start = JSON.parse(readFileSync(startEval, "utf8"));
console.log(JSON.stringify({ start: out.start }));
if (process.env.PROBE_ONLY_START === "1") process.exit(0);

const task = { ...SIMA, options: { ...SIMA.options, shapedWeight: shaped } };
const base = armRecipe({ ...job, kind: "rl", task, sizes: s, maxTokens: MAX_TOKENS });
const config = {
  ...base,
  sampler: { ...base.sampler, temperature: temp },
  checkpoint: { ...base.checkpoint, every, keepLast: Math.ceil(steps / every) + 1 },
  algorithm: adv === "zScore" ? base.algorithm : { ...base.algorithm, advantage: { type: adv } },
} as typeof base;
await train(config, { resume: true, reporters: [jsonlReporter(new RunDir(join(dir, "rl")))], warn: () => {} });
for (let k = every; k <= steps; k += every) {
  const ck = join(dir, "rl", "checkpoints", `step-${k}`);
  if (!existsSync(ck)) continue;
  out[`step${k}`] = await evaluateModel(ck, job);
  console.log(JSON.stringify({ step: k, ...(out[`step${k}`] as object) }));
}
writeFileSync(join(dir, "probe.json"), JSON.stringify(out, null, 1));
