/**
 * What `bench:trl` (bench/trl.ts) and `bench:trl:learn` (bench/trl-learn.ts) share: finding the Python environment
 * with TRL, writing a Llama checkpoint that both rlvr and transformers load (rlvr's own `saveModel`, with the BPE
 * tokenizer.json of the parity fixture), running a Python peer without blocking Node's event loop (the peer calls
 * back into Node to score completions), and reading the peer's JSON lines out of TRL's own log output.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { Rng } from "../src/util/index.js";
import { parseTransformerConfig } from "../src/models/config.js";
import { Transformer } from "../src/models/transformer.js";
import { loadModel, saveModel } from "../src/models/checkpoint.js";
import { emit, type Reporter } from "../src/trainer/reporters.js";
import { fromTrlGrpo, type TrlGrpoOptions } from "../src/algorithms/trl-options.js";
import type { AlgorithmConfigInput } from "../src/algorithms/schema.js";

/** The repository root. */
export const ROOT = resolve(import.meta.dirname, "..");
/** The Python interpreter of the TRL peers: BENCH_TRL_PYTHON, else the repository's .venv. */
export const PY = process.env.BENCH_TRL_PYTHON ?? join(ROOT, ".venv", "bin", "python");
/** The parity fixture whose byte-level BPE tokenizer (300 ids) both benches use. */
export const FIXTURE = join(ROOT, "test", "fixtures", "parity", "llama");
/** The tsx launcher the Python peer uses to start the scoring worker (bench/trl-score-worker.ts). */
export const TSX = join(ROOT, "node_modules", ".bin", "tsx");

/** True when PY exists and imports trl, torch and transformers. */
export function haveTrl(): boolean {
  if (!existsSync(PY)) return false;
  return spawnSync(PY, ["-c", "import trl, torch, transformers"], { encoding: "utf8" }).status === 0;
}

/** The shape of a Llama written by `writeLlama`. */
export interface LlamaShape {
  dModel: number;
  nLayers: number;
  nHeads: number;
  nKvHeads: number;
  dFf: number;
  maxSeqLen: number;
}

/**
 * Writes a randomly initialised Llama of `shape` (seeded) with the fixture's tokenizer to `dir` via rlvr's
 * `saveModel`, so rlvr and transformers read the same safetensors. The head is untied, as in the fixture.
 */
export function writeLlama(dir: string, shape: LlamaShape, seed: number): void {
  const { tokenizer } = loadModel(FIXTURE); // its tokenizer, with the eos and pad ids of its config.json
  const config = parseTransformerConfig({
    arch: "llama",
    vocabSize: 300,
    tieEmbeddings: false,
    normEps: 1e-6,
    ...shape,
  });
  saveModel(dir, new Transformer(config, new Rng(seed).split("init")), tokenizer);
}

/** Runs `python script settingsPath`; resolves with its stdout, rejects with its stderr's tail on failure. */
export function runPython(script: string, settingsPath: string): Promise<string> {
  return new Promise((ok, fail) => {
    const child = spawn(PY, [script, settingsPath], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString()));
    child.stderr.on("data", (b: Buffer) => (err = (err + b.toString()).slice(-8000)));
    child.on("error", fail);
    child.on("close", (code) => {
      if (code === 0) ok(out);
      else fail(new Error(`${script} exited with ${code}:\n${err.slice(-4000)}`));
    });
  });
}

/** The JSON objects among `stdout`'s lines that carry `key` (TRL prints its own lines too). */
export function jsonLines(stdout: string, key: string): Record<string, number>[] {
  return stdout.split("\n").flatMap((l) => {
    if (!l.startsWith("{")) return [];
    try {
      const j = JSON.parse(l) as Record<string, number>;
      return typeof j === "object" && j !== null && key in j ? [j] : [];
    } catch {
      return [];
    }
  });
}

/**
 * Steps per second over the steady-state window: from the end of step 1 to the end of the last step, `ends` being
 * each step's end (seconds, any origin) and `excluded` each step's seconds that do not count (evaluation,
 * checkpoints); step 1's own exclusions fall before the window. Needs at least two step ends.
 */
export function steadyStepsPerSecond(ends: readonly number[], excluded: readonly number[] = []): number {
  if (ends.length < 2) throw new Error(`steadyStepsPerSecond: need at least 2 step ends, got ${ends.length}`);
  const left = excluded.slice(1, ends.length).reduce((a, b) => a + b, 0);
  const seconds = ends[ends.length - 1]! - ends[0]! - left;
  if (!(seconds > 0)) {
    throw new Error(`steadyStepsPerSecond: the window has ${seconds} s once exclusions are taken out`);
  }
  return (ends.length - 1) / seconds;
}

/**
 * A reporter that records each step's end (seconds since it was made) and passes every event on to `inner`,
 * leaving the inner reporters' own time (logging) out of the recorded clock.
 */
export function stepClock(inner: readonly Reporter[]): { reporter: Reporter; ends: number[] } {
  const t0 = performance.now();
  let logging = 0;
  const ends: number[] = [];
  const timed =
    <K extends keyof Reporter>(hook: K) =>
    (...args: Parameters<NonNullable<Reporter[K]>>) => {
      const t = performance.now();
      emit(inner, hook, ...args);
      logging += performance.now() - t;
    };
  const onStep = timed("onStep");
  const reporter: Reporter = {
    onStart: timed("onStart"),
    onStep: (step, m) => {
      ends.push((performance.now() - t0 - logging) / 1000);
      onStep(step, m);
    },
    onEval: timed("onEval"),
    onCheckpoint: timed("onCheckpoint"),
    onEnd: timed("onEnd"),
  };
  return { reporter, ends };
}

/**
 * The recipe's `algorithm` section and `train.innerIterations` for a TRL configuration: `fromTrlGrpo`'s mapping
 * written out field by field (advantage, ratio and clip, KL β, estimator and importance weight, aggregation), so the
 * rlvr side runs exactly what the printed mapping says rather than relying on a preset's defaults.
 */
export function rlvrSettingsFor(options: TrlGrpoOptions): { algorithm: AlgorithmConfigInput; innerIterations: number } {
  const m = fromTrlGrpo(options);
  const { ratio, clip, beta, estimator, klImportanceWeight, aggregation, entropyCoef } = m.loss;
  const algorithm: AlgorithmConfigInput = {
    advantage: m.advantage as AlgorithmConfigInput["advantage"],
    policy: { ratio, clip },
    kl: { beta, estimator, importanceWeight: klImportanceWeight },
    loss: { aggregation, entropyCoef },
  };
  return { algorithm, innerIterations: m.innerIterations };
}
