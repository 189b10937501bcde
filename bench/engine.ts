/**
 * Engine benchmark (`npm run bench:engine`): rlvr's kernels and transformer against PyTorch eager on the same
 * machine, in the same process tree (the PyTorch side is bench/peers/engine_peer.py, run as a child process from
 * .venv after rlvr's measurements, never at the same time).
 *
 * Metrics (one JSON line each, plus a readable line):
 * - matmul.{256,512,1024}.gflops: one (n, n) @ (n, n) float32 product on the active backend vs torch.mm;
 * - train.gpt.tokens_per_s: a full step (forward, mean cross-entropy, backward, AdamW, zero-grad) of GPT
 *   {4 layers, d_model 256, 4 heads, seq 128, batch 8, vocab 512};
 * - train.llama20m.tokens_per_s: the same for a ~20M-parameter Llama shape (RoPE, RMSNorm, SwiGLU, GQA 8/4);
 * - sample.tokens_per_s: 16 sequences x 128 new tokens through the KV cache (multinomial draws from the softmax
 *   of the last logits) with the GPT config.
 * - vision.encode.images_per_s and vision.rl_step.images_per_s: the vision encoder, and a full RL step (sampling,
 *   then one update) of the vision-language policy of recipes/visual-rft.yaml (bench/engine-vision.ts).
 * Each figure is the median over timed repetitions after a warm-up; both sides use every core (PyTorch with
 * torch.set_num_threads(os.cpus().length)); --threads N sets both sides to N threads. Without .venv/torch the
 * rlvr figures print alone.
 *
 * Peers at their best: the GEMM has two peers, torch.mm (MKL here) and numpy.matmul (OpenBLAS), and its ratio is
 * quoted against the faster; the peer process runs without the OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE overrides some
 * machines set (they slow a current OpenBLAS); the PyTorch models use SDPA with enable_gqa and cached RoPE tables;
 * each peer's BLAS and ISA are printed.
 *
 * Usage: npm run bench:engine [-- --only matmul,train,sample,vision --steps 5 --threads 2 --no-peer --backend js]
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Optimizer, adamw, backend, crossEntropy, noGrad, reshape, setBackend, backward } from "../src/engine/index.js";
import { parseTransformerConfig, type TransformerConfigInput } from "../src/models/config.js";
import { Transformer } from "../src/models/transformer.js";
import { nativeInfo, setNativeThreads } from "../src/engine/backends/native.js";
import { Rng } from "../src/util/index.js";
import { NEW_TOKENS, ROWS, benchEncode, benchRlStep, visionShape } from "./engine-vision.js";

const { values: args } = parseArgs({
  options: {
    only: { type: "string", default: "matmul,train,sample,vision" },
    steps: { type: "string", default: "5" },
    "no-peer": { type: "boolean", default: false },
    backend: { type: "string", default: "native" },
    threads: { type: "string", default: String(cpus().length) },
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

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Median seconds per call of fn after `warmup` calls, over at least `reps` calls and `minTime` seconds. */
function medianTime(fn: () => void, warmup: number, reps: number, minTime = 0): number {
  for (let i = 0; i < warmup; i++) fn();
  const times: number[] = [];
  const start = performance.now();
  while (times.length < reps || performance.now() - start < minTime * 1000) {
    const t = performance.now();
    fn();
    times.push((performance.now() - t) / 1000);
  }
  return median(times);
}

function benchMatmul(n: number): number {
  const rng = new Rng(n);
  const a = new Float32Array(n * n).map(() => rng.normal()),
    b = new Float32Array(n * n).map(() => rng.normal());
  const c = new Float32Array(n * n);
  const k = backend();
  const p = { batch: 1, m: n, n, k: n, transA: false, transB: false, strideA: 0, strideB: 0, accumulate: false };
  return (2 * n ** 3) / medianTime(() => k.matmul(a, b, c, p), 3, 10, 1) / 1e9;
}

function randomIds(rng: Rng, n: number, vocab: number): Int32Array {
  const ids = new Int32Array(n);
  for (let i = 0; i < n; i++) ids[i] = rng.int(vocab);
  return ids;
}

function benchTrain(t: (typeof TRAIN)[keyof typeof TRAIN]): { tokensPerS: number; params: number } {
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
    backward(loss);
    opt.step();
    opt.zeroGrad();
  };
  const sec = medianTime(step, t.warmup, t.steps);
  return { tokensPerS: (t.batch * t.seq) / sec, params: model.numParameters() };
}

/** Draws one token per row from softmax(logits[row]) (logits: rows x vocab). */
function drawTokens(logits: Float32Array, rows: number, vocab: number, rng: Rng, out: Int32Array): void {
  for (let r = 0; r < rows; r++) {
    const o = r * vocab;
    let mx = -Infinity;
    for (let j = 0; j < vocab; j++) mx = Math.max(mx, logits[o + j]!);
    let s = 0;
    for (let j = 0; j < vocab; j++) s += Math.exp(logits[o + j]! - mx);
    let u = rng.random() * s,
      pick = vocab - 1;
    for (let j = 0; j < vocab; j++) {
      u -= Math.exp(logits[o + j]! - mx);
      if (u <= 0) {
        pick = j;
        break;
      }
    }
    out[r] = pick;
  }
}

function benchSample(): number {
  const cfg = parseTransformerConfig(SAMPLE.config);
  const rng = new Rng(1);
  const model = new Transformer(cfg, rng.split("model"));
  model.eval();
  const { batch, promptLen, newTokens } = SAMPLE;
  const prompt = randomIds(rng, batch * promptLen, cfg.vocabSize);
  const run = () =>
    noGrad(() => {
      const cache = model.newCache(batch, promptLen + newTokens);
      let logits = model.forward(prompt, batch, promptLen, { cache }); // (B, promptLen, V)
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
        logits = model.forward(tok, batch, 1, { cache }); // (B, 1, V)
        seqLen = 1;
      }
    });
  return (batch * newTokens) / medianTime(run, 1, SAMPLE.reps);
}

interface Row {
  metric: string;
  value: number;
  unit: string;
  note?: string;
}

function runPeer(): Record<string, number | string> | null {
  if (args["no-peer"]) return null;
  if (!existsSync(PY)) {
    console.log(`peer skipped: no Python environment at ${PY} (the PyTorch comparison needs .venv with torch)`);
    return null;
  }
  const settings: Record<string, unknown> = { threads: THREADS };
  if (only.has("matmul")) settings["matmul"] = MATMUL;
  if (only.has("train"))
    settings["train"] = Object.fromEntries(
      Object.entries(TRAIN).map(([k, t]) => [k, { ...t, config: parseTransformerConfig(t.config) }]),
    );
  if (only.has("sample")) settings["sample"] = { ...SAMPLE, config: parseTransformerConfig(SAMPLE.config) };
  if (only.has("vision")) settings["vision"] = visionShape(VISION_REPS);
  const env = { ...process.env };
  delete env.OPENBLAS_CORETYPE;
  delete env.OPENBLAS_L2_SIZE;
  const r = spawnSync(PY, [join(ROOT, "bench", "peers", "engine_peer.py"), JSON.stringify(settings)], {
    encoding: "utf8",
    maxBuffer: 1 << 24,
    env,
  });
  if (r.status !== 0) {
    console.log(
      `peer skipped: PyTorch peer failed (${(r.stderr || r.error?.message || "").trim().split("\n").slice(-1)[0]})`,
    );
    return null;
  }
  return JSON.parse(r.stdout.trim().split("\n").pop()!) as Record<string, number | string>;
}

function main(): void {
  const k = setBackend(args.backend === "js" ? "js" : "native");
  if (k.name === "native") setNativeThreads(THREADS);
  const info = k.name === "native" ? nativeInfo() : null;
  console.log(
    `bench:engine backend=${k.name}${info ? ` (${info.simd} GEMM, ${info.threads} threads)` : ""} threads=${THREADS} cores=${cpus().length} cpu="${cpus()[0]?.model ?? "?"}"`,
  );
  const rows: Row[] = [];
  if (only.has("matmul"))
    for (const n of MATMUL) rows.push({ metric: `matmul.${n}.gflops`, value: benchMatmul(n), unit: "GFLOP/s" });
  if (only.has("train")) {
    for (const [name, t] of Object.entries(TRAIN)) {
      const r = benchTrain(t);
      rows.push({
        metric: `train.${name}.tokens_per_s`,
        value: r.tokensPerS,
        unit: "tokens/s",
        note: `${(r.params / 1e6).toFixed(2)}M params, batch ${t.batch} x seq ${t.seq}`,
      });
    }
  }
  if (only.has("sample"))
    rows.push({
      metric: "sample.tokens_per_s",
      value: benchSample(),
      unit: "tokens/s",
      note: `${SAMPLE.batch} seqs x ${SAMPLE.newTokens} new tokens, KV cache`,
    });
  if (only.has("vision")) {
    rows.push({
      metric: "vision.encode.images_per_s",
      value: benchEncode(medianTime, VISION_REPS),
      unit: "images/s",
      note: "visual-rft encoder, 40 px, 100 patches, batch 64, no grad",
    });
    const rl = benchRlStep(medianTime, VISION_REPS);
    rows.push({
      metric: "vision.rl_step.images_per_s",
      value: rl.imagesPerS,
      unit: "images/s",
      note: `${ROWS} rows x ${NEW_TOKENS} sampled tokens + one update; sampling ${(100 * rl.sampleShare).toFixed(0)}% of rlvr's step`,
    });
  }
  const peer = runPeer();
  if (peer) {
    const b = (k: string) => String(peer[k]);
    console.log(
      `peers: torch ${b("torch")} (BLAS ${b("torch_blas")}, ISA ${b("torch_isa")}, oneDNN ${b("torch_mkldnn")}); numpy ${b("numpy")} (BLAS ${b("numpy_blas")}, OpenBLAS core ${b("numpy_openblas_coretype")})`,
    );
  }
  for (const row of rows) {
    // Every peer that measured this metric; the ratio is quoted against the best of them.
    const peers: { name: string; value: number }[] = [];
    if (peer && typeof peer[row.metric] === "number")
      peers.push({
        name: `pytorch-eager ${peer["torch"]} (${peer["threads"]} threads)`,
        value: peer[row.metric] as number,
      });
    if (peer && typeof peer[`numpy:${row.metric}`] === "number")
      peers.push({
        name: `numpy ${peer["numpy"]} ${peer["numpy_blas"]}`,
        value: peer[`numpy:${row.metric}`] as number,
      });
    const best = peers.reduce<(typeof peers)[number] | null>((a, p) => (a === null || p.value > a.value ? p : a), null);
    const rec: Record<string, unknown> = {
      bench: "engine",
      metric: row.metric,
      value: Number(row.value.toPrecision(4)),
      unit: row.unit,
    };
    if (best)
      Object.assign(rec, {
        peer: best.name,
        peerValue: Number(best.value.toPrecision(4)),
        ratio: Number((row.value / best.value).toFixed(3)),
      });
    console.log(JSON.stringify(rec));
    const vs = peers
      .map((p) => `   vs ${p.name.split(" ")[0]} ${p.value.toPrecision(4)} → ${(row.value / p.value).toFixed(2)}x`)
      .join("");
    console.log(
      `  ${row.metric.padEnd(28)} ${row.value.toPrecision(4).padStart(9)} ${row.unit}${vs}${row.note ? `   (${row.note})` : ""}`,
    );
  }
  if (!peer) console.log("  (PyTorch peer skipped: rlvr figures only)");
}

main();
