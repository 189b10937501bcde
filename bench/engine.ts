/**
 * Engine benchmark (`npm run bench:engine`): rlvr's kernels and transformer against PyTorch eager on the same
 * machine, measured in turns (the PyTorch side is bench/peers/engine_peer.py, kept running as a child process from
 * .venv and asked for one repetition at a time; bench/harness/peer-process.ts).
 *
 * Metrics (one JSON line each, plus a readable line):
 * - machine.fp32_peak_gflops: independent FMA chains on every thread (native/peak.cc), the ceiling below;
 * - matmul.{256,512,1024}.gflops: one (n, n) @ (n, n) float32 product on the active backend vs torch.mm;
 * - train.gpt.tokens_per_s: a full step (forward, mean cross-entropy, backward, AdamW, zero-grad) of GPT
 *   {4 layers, d_model 256, 4 heads, seq 128, batch 8, vocab 512};
 * - train.llama20m.tokens_per_s: the same for a ~20M-parameter Llama shape (RoPE, RMSNorm, SwiGLU, GQA 8/4);
 * - train.{gpt,llama20m}.peak_frac: each side's training FLOP rate (src/models/flop-count.ts) over that peak;
 * - train.llama20m.rss_mb: the peak resident memory of a fresh process that builds the 20M model and runs
 *   RSS_STEPS training steps (rlvr: this script with --rss-child; PyTorch: engine_peer.py in its "rss" mode), each
 *   side's runtime included; its ratio is rlvr / PyTorch, so lower is better;
 * - sample.tokens_per_s: 16 sequences x 128 new tokens through the KV cache (multinomial draws from the softmax
 *   of the last logits) with the GPT config.
 * - vision.encode.images_per_s and vision.rl_step.images_per_s: the vision encoder, and a full RL step (sampling,
 *   then one update) of the vision-language policy of recipes/visual-rft.yaml (bench/engine-vision.ts).
 *
 * How it times (docs/benchmarks.md "Speed benches"): for each metric, rlvr and each peer run one repetition in turn,
 * A B A B ..., warm-up turns first (bench/harness/interleave.ts); each side's figure is the median over its
 * repetitions, and the readable line shows the spread of the per-turn ratio. A quick GEMM repetition is a burst of
 * products lasting at least MATMUL_BURST seconds. The 1-minute load average is read before and after, printed, and
 * compared with the thread count: above it, the run does not count (bench/harness/load.ts). Both sides use every core
 * (PyTorch with torch.set_num_threads(os.cpus().length)); --threads N sets both sides to N threads. Without
 * .venv/torch the rlvr figures print alone.
 *
 * Peers at their best: the GEMM has two peers, torch.mm (MKL here) and numpy.matmul (OpenBLAS), and its ratio is
 * quoted against the faster; the peer process runs without the OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE overrides some
 * machines set (they slow a current OpenBLAS); the PyTorch models use SDPA with enable_gqa and cached RoPE tables;
 * each peer's BLAS and ISA are printed.
 *
 * Usage: npm run bench:engine [-- --only matmul,train,rss,sample,vision --steps 5 --threads 2 --no-peer --backend js]
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import {
  Optimizer,
  adamw,
  backend,
  crossEntropy,
  noGrad,
  reshape,
  setBackend,
  backward,
  tidy,
} from "../src/engine/index.js";
import { parseTransformerConfig, type TransformerConfigInput } from "../src/models/config.js";
import { Transformer } from "../src/models/transformer.js";
import { fp32PeakGflops, nativeInfo, setNativeThreads } from "../src/engine/backends/native.js";
import { trainStepFlop } from "../src/models/flop-count.js";
import { Rng } from "../src/util/index.js";
import { ENCODE_BATCH, NEW_TOKENS, ROWS, makeEncode, makeRlStep, visionShape } from "./engine-vision.js";
import { interleave, pairedRatio, type ArmSamples } from "./harness/interleave.js";
import { loadSample, loadVerdict } from "./harness/load.js";
import { PeerProcess } from "./harness/peer-process.js";

const { values: args } = parseArgs({
  options: {
    only: { type: "string", default: "matmul,train,rss,sample,vision" },
    steps: { type: "string", default: "5" },
    "no-peer": { type: "boolean", default: false },
    backend: { type: "string", default: "native" },
    threads: { type: "string", default: String(cpus().length) },
    "rss-child": { type: "string" },
  },
});
const only = new Set(args.only.split(","));
const STEPS = Number(args.steps);
const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const PY = join(ROOT, ".venv", "bin", "python");
const THREADS = Number(args.threads);

const GPT: TransformerConfigInput = {
  arch: "gpt2",
  vocabSize: 512,
  dModel: 256,
  nLayers: 4,
  nHeads: 4,
  nKvHeads: 4,
  dFf: 1024,
  maxSeqLen: 128,
  normEps: 1e-5,
  tieEmbeddings: true,
};
const LLAMA20M: TransformerConfigInput = {
  arch: "llama",
  vocabSize: 8192,
  dModel: 512,
  nLayers: 6,
  nHeads: 8,
  nKvHeads: 4,
  dFf: 1408,
  maxSeqLen: 256,
  normEps: 1e-5,
  ropeTheta: 10000,
  tieEmbeddings: true,
};
const SAMPLE_CFG: TransformerConfigInput = { ...GPT, maxSeqLen: 256 };
const TRAIN = {
  gpt: { config: GPT, batch: 8, seq: 128, warmup: 2, steps: STEPS },
  llama20m: { config: LLAMA20M, batch: 4, seq: 128, warmup: 1, steps: Math.max(3, Math.ceil(STEPS / 2)) },
} as const;
const SAMPLE = { config: SAMPLE_CFG, batch: 16, promptLen: 16, newTokens: 128, reps: 3 };
const MATMUL = [256, 512, 1024];
const VISION_REPS = Math.max(3, STEPS);

/** Seconds a GEMM repetition lasts at least (a burst of products; it answers seconds per product). */
const MATMUL_BURST = 0.25;

/** A repetition that runs `fn` once and returns its seconds. */
const timed = (fn: () => void) => () => {
  const t = performance.now();
  fn();
  return (performance.now() - t) / 1000;
};

/** A repetition of a quick call: calls `fn` until `minTime` seconds have passed; returns seconds per call. */
const burst = (fn: () => void, minTime: number) => () => {
  const start = performance.now();
  let n = 0;
  while (n === 0 || performance.now() - start < minTime * 1000) {
    fn();
    n++;
  }
  return (performance.now() - start) / 1000 / n;
};

function makeMatmul(n: number): () => number {
  const rng = new Rng(n);
  const a = new Float32Array(n * n).map(() => rng.normal()),
    b = new Float32Array(n * n).map(() => rng.normal());
  const c = new Float32Array(n * n);
  const k = backend();
  const p = { batch: 1, m: n, n, k: n, transA: false, transB: false, strideA: 0, strideB: 0, accumulate: false };
  return burst(() => k.matmul(a, b, c, p), MATMUL_BURST);
}

function randomIds(rng: Rng, n: number, vocab: number): Int32Array {
  const ids = new Int32Array(n);
  for (let i = 0; i < n; i++) ids[i] = rng.int(vocab);
  return ids;
}

function makeTrain(t: (typeof TRAIN)[keyof typeof TRAIN]): { rep: () => number; params: number } {
  const cfg = parseTransformerConfig(t.config);
  const rng = new Rng(0);
  const model = new Transformer(cfg, rng.split("model"));
  const opt = new Optimizer(adamw({ lr: 1e-3, weightDecay: 0.01 }), model.namedParameters());
  const ids = randomIds(rng, t.batch * (t.seq + 1), cfg.vocabSize);
  const x = new Int32Array(t.batch * t.seq),
    y = new Int32Array(t.batch * t.seq);
  for (let b = 0; b < t.batch; b++) {
    x.set(ids.subarray(b * (t.seq + 1), b * (t.seq + 1) + t.seq), b * t.seq);
    y.set(ids.subarray(b * (t.seq + 1) + 1, (b + 1) * (t.seq + 1)), b * t.seq);
  }
  const step = () => {
    const logits = model.forward(x, t.batch, t.seq); // (B, T, V)
    const loss = crossEntropy(reshape(logits, [t.batch * t.seq, cfg.vocabSize]), y);
    backward(loss, { releaseIntermediates: true }); // as the trainers' steps do: the activations go back to the pool
    opt.step();
    opt.zeroGrad();
  };
  return { rep: timed(step), params: model.numParameters() };
}

/** Draws one token per row from softmax(logits[row]) (logits: rows x vocab), each exponential taken once. */
function drawTokens(logits: Float32Array, rows: number, vocab: number, rng: Rng, out: Int32Array): void {
  const e = new Float64Array(vocab);
  for (let r = 0; r < rows; r++) {
    const o = r * vocab;
    let mx = -Infinity;
    for (let j = 0; j < vocab; j++) mx = Math.max(mx, logits[o + j]!);
    let s = 0;
    for (let j = 0; j < vocab; j++) s += e[j] = Math.exp(logits[o + j]! - mx);
    let u = rng.random() * s,
      pick = vocab - 1;
    for (let j = 0; j < vocab; j++) {
      u -= e[j]!;
      if (u <= 0) {
        pick = j;
        break;
      }
    }
    out[r] = pick;
  }
}

function makeSample(): () => number {
  const cfg = parseTransformerConfig(SAMPLE.config);
  const rng = new Rng(1);
  const model = new Transformer(cfg, rng.split("model"));
  model.eval();
  const { batch, promptLen, newTokens } = SAMPLE;
  const prompt = randomIds(rng, batch * promptLen, cfg.vocabSize);
  const run = () =>
    noGrad(() => {
      const cache = model.newCache(batch, promptLen + newTokens);
      // Each forward inside tidy, as DecodeSession decodes: its intermediates go back to the pool, the logits stay.
      let logits = tidy(() => model.forward(prompt, batch, promptLen, { cache })); // (B, promptLen, V)
      const last = new Float32Array(batch * cfg.vocabSize);
      const tok = new Int32Array(batch);
      let seqLen = promptLen;
      for (let i = 0; i < newTokens; i++) {
        for (let b = 0; b < batch; b++)
          last.set(
            logits.data.subarray(((b + 1) * seqLen - 1) * cfg.vocabSize, (b + 1) * seqLen * cfg.vocabSize),
            b * cfg.vocabSize,
          );
        drawTokens(last, batch, cfg.vocabSize, rng, tok);
        logits = tidy(() => model.forward(tok, batch, 1, { cache })); // (B, 1, V)
        seqLen = 1;
      }
    });
  return timed(run);
}

/** A peer's repetition of one metric: what engine_peer.py builds (`kind`, `settings`), and whose figure it is. */
interface PeerArm {
  name: string;
  kind: string;
  settings: unknown;
}

/** One metric: rlvr's repetition, the peers', how much work a repetition does, and the turns. */
interface Metric {
  metric: string;
  unit: string;
  /** Work per repetition (FLOP / 1e9, tokens, images): the figure is work / median seconds. */
  work: number;
  rlvr: () => number;
  peers: PeerArm[];
  warmup: number;
  reps: number;
  note?: () => string;
  /** FLOP per repetition (src/models/flop-count.ts), for the fraction of the machine's fp32 peak. */
  flop?: number;
}

/** The metrics asked for with --only, each with its rlvr repetition built (models and inputs made here). */
function metrics(): Metric[] {
  const out: Metric[] = [];
  const torchName = "pytorch-eager";
  if (only.has("matmul"))
    for (const n of MATMUL)
      out.push({
        metric: `matmul.${n}.gflops`,
        unit: "GFLOP/s",
        work: (2 * n ** 3) / 1e9,
        rlvr: makeMatmul(n),
        peers: [
          { name: torchName, kind: "matmul", settings: { n, minTime: MATMUL_BURST } },
          { name: "numpy", kind: "numpy_matmul", settings: { n, minTime: MATMUL_BURST } },
        ],
        warmup: 1,
        reps: Math.max(5, STEPS),
      });
  if (only.has("train"))
    for (const [name, t] of Object.entries(TRAIN)) {
      const { rep, params } = makeTrain(t);
      const cfg = parseTransformerConfig(t.config);
      out.push({
        metric: `train.${name}.tokens_per_s`,
        unit: "tokens/s",
        work: t.batch * t.seq,
        rlvr: rep,
        peers: [{ name: torchName, kind: "train", settings: { ...t, config: parseTransformerConfig(t.config) } }],
        warmup: t.warmup,
        reps: t.steps,
        note: () => `${(params / 1e6).toFixed(2)}M params, batch ${t.batch} x seq ${t.seq}`,
        flop: trainStepFlop(cfg, t.batch, t.seq),
      });
    }
  if (only.has("sample"))
    out.push({
      metric: "sample.tokens_per_s",
      unit: "tokens/s",
      work: SAMPLE.batch * SAMPLE.newTokens,
      rlvr: makeSample(),
      peers: [
        { name: torchName, kind: "sample", settings: { ...SAMPLE, config: parseTransformerConfig(SAMPLE.config) } },
      ],
      warmup: 1,
      reps: SAMPLE.reps,
      note: () => `${SAMPLE.batch} seqs x ${SAMPLE.newTokens} new tokens, KV cache`,
    });
  if (only.has("vision")) {
    const shape = visionShape();
    out.push({
      metric: "vision.encode.images_per_s",
      unit: "images/s",
      work: ENCODE_BATCH,
      rlvr: timed(makeEncode()),
      peers: [{ name: torchName, kind: "vision_encode", settings: shape }],
      warmup: 1,
      reps: VISION_REPS,
      note: () => "visual-rft encoder, 40 px, 100 patches, batch 64, no grad",
    });
    const rl = makeRlStep();
    out.push({
      metric: "vision.rl_step.images_per_s",
      unit: "images/s",
      work: ROWS,
      rlvr: timed(rl.step),
      peers: [{ name: torchName, kind: "vision_rl_step", settings: shape }],
      warmup: 1,
      reps: VISION_REPS,
      note: () =>
        `${ROWS} rows x ${NEW_TOKENS} sampled tokens + one update; sampling ${(100 * rl.sampleShare()).toFixed(0)}% of rlvr's step`,
    });
  }
  return out;
}

/** Training steps (after one warm-up step) of the memory measurement. */
const RSS_STEPS = 3;
const MB = 1024 * 1024;

/**
 * `--rss-child NAME`: builds TRAIN[NAME], runs 1 + RSS_STEPS steps and prints {baseMb, peakMb}: the resident memory
 * after the imports, before the model exists, and the process's peak (getrusage's maxrss).
 */
function rssChild(name: string): void {
  const k = setBackend(args.backend === "js" ? "js" : "native");
  if (k.name === "native") setNativeThreads(THREADS);
  const baseMb = process.memoryUsage().rss / MB;
  const t = TRAIN[name as keyof typeof TRAIN];
  if (!t) throw new Error(`--rss-child: unknown shape ${name}`);
  const { rep } = makeTrain(t);
  for (let i = 0; i <= RSS_STEPS; i++) rep();
  console.log(JSON.stringify({ baseMb, peakMb: (process.resourceUsage().maxRSS * 1024) / MB }));
}

/** The peak RSS of a fresh process training TRAIN.llama20m, for rlvr and (with .venv) PyTorch, one after the other. */
function measureRss(): { rlvr: { baseMb: number; peakMb: number }; peer: { baseMb: number; peakMb: number } | null } {
  const run = (cmd: string, argv: string[], env: NodeJS.ProcessEnv = process.env) =>
    JSON.parse(execFileSync(cmd, argv, { cwd: ROOT, env, encoding: "utf8" }).trim().split("\n").pop()!);
  const self = fileURLToPath(import.meta.url);
  const backendArgs = ["--backend", args.backend, "--threads", String(THREADS)];
  const rlvr = run(process.execPath, ["--import", "tsx", self, "--rss-child", "llama20m", ...backendArgs]);
  if (args["no-peer"] || !existsSync(PY)) return { rlvr, peer: null };
  const settings = { ...TRAIN.llama20m, config: parseTransformerConfig(TRAIN.llama20m.config), steps: RSS_STEPS };
  const script = join(ROOT, "bench", "peers", "engine_peer.py");
  const peer = run(PY, [script, JSON.stringify({ threads: THREADS, rss: settings })], peerEnv());
  return { rlvr, peer };
}

/** The peer's environment: without the OpenBLAS overrides some machines set (they slow a current OpenBLAS). */
function peerEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.OPENBLAS_CORETYPE;
  delete env.OPENBLAS_L2_SIZE;
  return env;
}

/** The PyTorch peer, started and asked for its build; null (with the reason printed) when it cannot run. */
async function startPeer(): Promise<{ peer: PeerProcess; info: Record<string, unknown> } | null> {
  if (args["no-peer"]) return null;
  if (!existsSync(PY)) {
    console.log(`peer skipped: no Python environment at ${PY} (the PyTorch comparison needs .venv with torch)`);
    return null;
  }
  const script = join(ROOT, "bench", "peers", "engine_peer.py");
  const peer = PeerProcess.start(PY, [script, JSON.stringify({ threads: THREADS })], {
    env: peerEnv(),
    onLog: (l) => console.log(`  peer: ${l}`),
  });
  try {
    return { peer, info: await peer.call<Record<string, unknown>>({ op: "info" }) };
  } catch (err) {
    console.log(`peer skipped: PyTorch peer failed (${(err as Error).message.split("\n").slice(-1)[0]})`);
    await peer.close();
    return null;
  }
}

/** Runs one metric's turns: rlvr and each peer that builds, A B A B ...; a peer that fails is left out. */
async function measure(m: Metric, peer: PeerProcess | null) {
  const arms: Record<string, () => number | Promise<number>> = { rlvr: m.rlvr };
  for (const p of peer ? m.peers : []) {
    const key = `${m.metric}:${p.kind}`;
    try {
      await peer!.call({ op: "build", key, kind: p.kind, settings: p.settings });
      arms[p.name] = () => peer!.call<number>({ op: "time", key });
    } catch (err) {
      console.log(`  ${m.metric}: peer ${p.name} left out (${(err as Error).message})`);
    }
  }
  return interleave(arms, m.reps, m.warmup);
}

async function main(): Promise<void> {
  const k = setBackend(args.backend === "js" ? "js" : "native");
  if (k.name === "native") setNativeThreads(THREADS);
  const info = k.name === "native" ? nativeInfo() : null;
  console.log(
    `bench:engine backend=${k.name}${info ? ` (${info.simd} GEMM, ${info.threads} threads)` : ""} threads=${THREADS} cores=${cpus().length} cpu="${cpus()[0]?.model ?? "?"}"`,
  );
  const before = loadSample();
  // The ceiling for the training steps' FLOP rates: independent FMA chains on every thread (native/peak.cc).
  const peak = k.name === "native" ? fp32PeakGflops() : null;
  if (peak !== null) {
    console.log(
      JSON.stringify({
        bench: "engine",
        metric: "machine.fp32_peak_gflops",
        value: Number(peak.toPrecision(4)),
        unit: "GFLOP/s",
      }),
    );
    console.log(
      `  machine.fp32_peak_gflops     ${peak.toPrecision(4).padStart(9)} GFLOP/s   (FMA chains on ${THREADS} threads)`,
    );
  }
  const started = await startPeer();
  const peer = started?.peer ?? null;
  if (started) {
    const b = (key: string) => String(started.info[key]);
    console.log(
      `peers: torch ${b("torch")} (${b("threads")} threads, BLAS ${b("torch_blas")}, ISA ${b("torch_isa")}, oneDNN ${b("torch_mkldnn")}); numpy ${b("numpy")} (BLAS ${b("numpy_blas")}, OpenBLAS core ${b("numpy_openblas_coretype")})`,
    );
  }
  const peerLabel = (name: string) =>
    name === "numpy"
      ? `numpy ${started?.info["numpy"]} ${started?.info["numpy_blas"]}`
      : `pytorch-eager ${started?.info["torch"]} (${started?.info["threads"]} threads)`;
  for (const m of metrics()) {
    const res = await measure(m, peer);
    const figure = (a: ArmSamples) => m.work / a.median;
    const value = figure(res["rlvr"]!);
    // Every peer that measured this metric; the ratio is quoted against the best of them.
    const peers = Object.entries(res)
      .filter(([name]) => name !== "rlvr")
      .map(([name, a]) => ({ name, value: figure(a), samples: a.samples }));
    const best = peers.reduce<(typeof peers)[number] | null>((a, p) => (a === null || p.value > a.value ? p : a), null);
    const rec: Record<string, unknown> = {
      bench: "engine",
      metric: m.metric,
      value: Number(value.toPrecision(4)),
      unit: m.unit,
    };
    if (best)
      Object.assign(rec, {
        peer: peerLabel(best.name),
        peerValue: Number(best.value.toPrecision(4)),
        ratio: Number((value / best.value).toFixed(3)),
      });
    console.log(JSON.stringify(rec));
    const vs = peers
      .map((p) => {
        const turn = pairedRatio(p.samples, res["rlvr"]!.samples); // peer seconds / rlvr seconds = rlvr's speed-up
        return `   vs ${p.name} ${p.value.toPrecision(4)} → ${(value / p.value).toFixed(2)}x (per turn ${turn.min.toFixed(2)}–${turn.max.toFixed(2)})`;
      })
      .join("");
    const spreadNote = `rlvr ${res["rlvr"]!.n} reps, ${((100 * (res["rlvr"]!.max - res["rlvr"]!.min)) / res["rlvr"]!.median).toFixed(0)}% spread`;
    console.log(
      `  ${m.metric.padEnd(28)} ${value.toPrecision(4).padStart(9)} ${m.unit}${vs}   (${[m.note?.(), spreadNote].filter(Boolean).join("; ")})`,
    );
    if (m.flop !== undefined && peak !== null) {
      const frac = (a: ArmSamples) => m.flop! / a.median / 1e9 / peak;
      const fracMetric = m.metric.replace(/\.tokens_per_s$/, ".peak_frac");
      const fr: Record<string, unknown> = {
        bench: "engine",
        metric: fracMetric,
        value: Number(frac(res["rlvr"]!).toFixed(3)),
        unit: "of fp32 peak",
      };
      if (best)
        Object.assign(fr, {
          peer: peerLabel(best.name),
          peerValue: Number(frac(res[best.name]!).toFixed(3)),
          ratio: Number((value / best.value).toFixed(3)),
        });
      console.log(JSON.stringify(fr));
      console.log(
        `  ${fracMetric.padEnd(28)} ${frac(res["rlvr"]!).toFixed(3).padStart(9)} of peak   (${(m.flop / 1e9).toFixed(1)} GFLOP per step${best ? `; the peer ${frac(res[best.name]!).toFixed(3)}` : ""})`,
      );
    }
  }
  await peer?.close();
  if (!peer) console.log("  (PyTorch peer skipped: rlvr figures only)");
  if (only.has("rss")) {
    const { rlvr, peer: p } = measureRss();
    const rec: Record<string, unknown> = {
      bench: "engine",
      metric: "train.llama20m.rss_mb",
      value: Number(rlvr.peakMb.toFixed(1)),
      unit: "MB",
    };
    if (p)
      Object.assign(rec, {
        peer: peerLabel("torch"),
        peerValue: Number(p.peakMb.toFixed(1)),
        ratio: Number((rlvr.peakMb / p.peakMb).toFixed(3)),
      });
    console.log(JSON.stringify(rec));
    const side = (x: { baseMb: number; peakMb: number }) =>
      `${x.peakMb.toFixed(0)} MB (${x.baseMb.toFixed(0)} MB before the model)`;
    console.log(
      `  train.llama20m.rss_mb        rlvr ${side(rlvr)}${p ? `   vs pytorch-eager ${side(p)} → ${(rlvr.peakMb / p.peakMb).toFixed(2)}x` : ""}   (a fresh process, 1 + ${RSS_STEPS} steps; lower is better)`,
    );
  }
  const verdict = loadVerdict(before, loadSample(), THREADS);
  console.log(verdict.line);
}

if (args["rss-child"]) rssChild(args["rss-child"]);
else await main();
