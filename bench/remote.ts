/**
 * `npm run bench:remote` (issue 18): from one SFT warm start, the same seeded GRPO run with the built-in sampler and with sampling over HTTP on
 * `rlvr serve` in a child process (the remote sampler, `sampler: {type: openai}`, weights pushed after every step),
 * then, as a third arm, the remote run with generation one step ahead (`offPolicy.maxStaleness: 1`, PPO clip).
 *
 * Prints JSON lines (docs/benchmarks.md):
 * - remote.step_time_ratio: mean seconds per step, remote / built-in (steps 2..N; step 1 warms up);
 * - remote.reward_curve_maxdiff: max over steps of |reward/mean remote − built-in| (0 when every sample agrees);
 * - remote.loss_maxdiff and remote.logp_diff_max: the documented mismatch (lp_old recomputed by the trainer vs the
 *   server's log-probs, float32 KV-cache decode vs a full forward);
 * - remote.weight_sync_s and remote.old_logprobs_s: mean seconds per step of the push and of the recompute;
 * - remote.async_step_time_ratio: the one-step-ahead arm's mean seconds per step / built-in.
 * Speed figures need a quiet machine: the trainer and the server share its cores.
 *
 * Environment: BENCH_REMOTE_STEPS (default 12), BENCH_REMOTE_OUT (work folder, default runs/bench-remote),
 * BENCH_REMOTE_SMOKE=1 (a tiny plumbing run: the figures mean nothing), BENCH_REMOTE_NO_ASYNC=1 (skip the third arm).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { saveModel } from "../src/models/checkpoint.js";
import { buildModel } from "../src/trainer/model-setup.js";
import { sft } from "../src/trainer/sft.js";
import { getTask } from "../src/tasks/index.js";
import { Rng } from "../src/util/index.js";
import { resolveConfig } from "../src/trainer/recipe.js";
import { train } from "../src/trainer/train.js";
import { RunDir } from "../src/trainer/run-dir.js";
import { jsonlReporter } from "../src/trainer/reporters.js";
import { benchLine } from "./harness/index.js";

const ROOT = resolve(import.meta.dirname, "..");
const SMOKE = process.env.BENCH_REMOTE_SMOKE === "1";
const OUT = resolve(process.env.BENCH_REMOTE_OUT ?? join(ROOT, "runs", SMOKE ? "bench-remote-smoke" : "bench-remote"));
const STEPS = Number(process.env.BENCH_REMOTE_STEPS ?? (SMOKE ? 3 : 12));
const ASYNC = process.env.BENCH_REMOTE_NO_ASYNC !== "1";
const SEED = 3;

/**
 * The model and batch: a 4-layer d 256 char GPT, SFT-warm-started on 2-digit addition (so rewards have spread and the
 * weights move), then 8 prompts × 8 completions of up to 24 tokens per step. Sized for 2-4 minutes on a quiet
 * 2-core machine (an estimate from the engine figures; BENCH_REMOTE_STEPS scales it).
 */
const MODEL = SMOKE
  ? { type: "new" as const, dModel: 32, nLayers: 1, nHeads: 2, maxSeqLen: 32 }
  : { type: "new" as const, dModel: 256, nLayers: 4, nHeads: 4, maxSeqLen: 48 };
const TRAIN = SMOKE
  ? { promptsPerStep: 2, groupSize: 4, maxCompletionTokens: 8 }
  : { promptsPerStep: 8, groupSize: 8, maxCompletionTokens: 24 };
const SFT = { steps: SMOKE ? 20 : 100, batchSize: 32, lr: 1e-3 };
const TASK = { name: "addition", options: { maxDigits: 2 }, trainExamples: 2000, testExamples: 16 };

type Metrics = Record<string, number>[];

/** One arm: a fresh run of the start checkpoint with this sampler and algorithm section; its per-step metrics. */
async function arm(name: string, start: string, sampler: object, algorithm: object = {}): Promise<Metrics> {
  const config = resolveConfig({
    name,
    outDir: OUT,
    seed: SEED,
    model: { type: "checkpoint", path: start },
    task: TASK,
    sampler,
    algorithm: { kl: { beta: 0 }, ...algorithm },
    train: { steps: STEPS, lr: 1e-3, ...TRAIN },
    eval: { every: 0, examples: 16, atStart: false },
    checkpoint: { every: 0, keepBest: false },
    log: { progress: false, sampleGroups: 0 },
  });
  const dir = new RunDir(join(config.outDir, config.name));
  await train(config, { reporters: [jsonlReporter(dir)], resume: false, overwrite: true, warn: () => {} });
  return dir.metrics();
}

/** `rlvr serve <start>` in a child process on a free port; resolves with its OpenAI base URL. */
function serve(start: string): Promise<{ child: ChildProcess; baseUrl: string }> {
  const code = "import('./src/cli/index.ts').then((m) => m.main(['node', 'rlvr', ...process.argv.slice(1)]))";
  const args = ["serve", start, "--port", "0", "--model-name", "policy", "--batch-window-ms", "1"];
  const child = spawn(process.execPath, ["--import", "tsx", "-e", code, ...args], { cwd: ROOT, stdio: "pipe" });
  let out = "";
  return new Promise((ok, fail) => {
    child.stdout!.on("data", (d: Buffer) => {
      out += String(d);
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) ok({ child, baseUrl: `${m[1]}/v1` });
    });
    child.stderr!.on("data", (d: Buffer) => (out += String(d)));
    child.once("exit", (c) => fail(new Error(`rlvr serve exited ${c}: ${out.slice(-2000)}`)));
  });
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const col = (ms: Metrics, k: string) => ms.map((m) => m[k] ?? NaN);
const stepTime = (ms: Metrics) => mean(col(ms, "time/step").slice(1));
const maxDiff = (a: number[], b: number[]) => Math.max(...a.map((x, i) => Math.abs(x - b[i]!)));
/** A bench line at full precision, for figures far below benchLine's 4 decimals (mismatches of 1e-7). */
const exactLine = (metric: string, value: number, unit: string) =>
  JSON.stringify({ bench: "remote", metric, value: Number(value.toPrecision(4)), unit });

async function main(): Promise<void> {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const start = join(OUT, "start");
  const { model, tokenizer } = buildModel({ ...MODEL, arch: "gpt2", tokenizer: "char" }, SEED);
  const gold = getTask(TASK.name, TASK.options).generate("train", TASK.trainExamples, 0);
  const pairs = gold.map((e) => ({ prompt: e.prompt, completion: e.goldCompletion }));
  await sft(model, tokenizer, pairs, { ...SFT, rng: new Rng(SEED).split("sft") });
  saveModel(start, model, tokenizer);

  const builtin = await arm("builtin", start, { type: "builtin" });
  const server = await serve(start);
  try {
    const openai = { type: "openai", baseUrl: server.baseUrl, model: "policy" };
    const remote = await arm("remote", start, openai);
    const bench = "remote";
    console.log(benchLine(bench, "remote.step_time_ratio", stepTime(remote) / stepTime(builtin), "ratio"));
    const rewards = maxDiff(col(remote, "reward/mean"), col(builtin, "reward/mean"));
    console.log(benchLine(bench, "remote.reward_curve_maxdiff", rewards, "reward"));
    const losses = maxDiff(col(remote, "loss/total"), col(builtin, "loss/total"));
    console.log(exactLine("remote.loss_maxdiff", losses, "loss"));
    console.log(exactLine("remote.logp_diff_max", Math.max(...col(remote, "mismatch/logpDiffMax")), "nats"));
    console.log(benchLine(bench, "remote.weight_sync_s", mean(col(remote, "time/weightSync")), "s/step"));
    console.log(benchLine(bench, "remote.old_logprobs_s", mean(col(remote, "time/oldLogprobs")), "s/step"));
    console.log(benchLine(bench, "remote.builtin_step_s", stepTime(builtin), "s/step"));
    console.log(benchLine(bench, "remote.remote_step_s", stepTime(remote), "s/step"));
    if (ASYNC) {
      const ahead = await arm("remote-async", start, openai, {
        policy: { clip: { type: "ppo" } },
        offPolicy: { maxStaleness: 1 },
      });
      console.log(benchLine(bench, "remote.async_step_time_ratio", stepTime(ahead) / stepTime(builtin), "ratio"));
      const stale = Math.max(...col(ahead, "mismatch/logpDiffMax"));
      console.log(exactLine("remote.async_staleness_logp_diff_max", stale, "nats"));
    }
    const curves = { builtin: col(builtin, "reward/mean"), remote: col(remote, "reward/mean") };
    console.log(JSON.stringify({ bench, steps: STEPS, smoke: SMOKE, curves }));
  } finally {
    server.child.kill("SIGTERM");
  }
}

await main();
