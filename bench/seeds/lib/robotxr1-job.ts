/**
 * One job of the RobotxR1 seed system, run in its own process (bench/harness/child-job.ts) by bench/seeds/robotxr1.ts:
 *
 * - `base`: the shared base model, a full-weight SFT of a fresh char GPT on the train split (cached by the caller);
 * - `rl`: the recipe (LoRA SFT from the base, merged into checkpoints/start, then LoRA GRPO on a fresh adapter); then
 *   the start and the final policy are evaluated at every decoding, and the final policy again with its weights
 *   passed through the GGUF export's Q8_0 and F16 (`roundTripWeights`) at the start's best decoding;
 * - `control`: the same run with the verifier's outputs permuted inside each group (`withinGroupControl`).
 *
 * The success metric is the task's `improved` term (the lap's error beats the default parameters'), as pass@1 on the
 * F track with paraphrases no training prompt used. Usage: `tsx bench/seeds/lib/robotxr1-job.ts '<spec as JSON>'`.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DECODINGS, bestDecoding, withinGroupControl, type PassByDecoding } from "../../harness/index.js";
import { getTask } from "../../../src/tasks/index.js";
import { train } from "../../../src/trainer/train.js";
import { buildModel } from "../../../src/trainer/model-setup.js";
import { trainSft } from "../../../src/trainer/sft.js";
import { evaluate } from "../../../src/trainer/evaluate.js";
import { jsonlReporter } from "../../../src/trainer/reporters.js";
import { RunDir } from "../../../src/trainer/run-dir.js";
import { loadModel, saveModel } from "../../../src/models/checkpoint.js";
import { baseWeightsHash } from "../../../src/models/adapter.js";
import { roundTripWeights, type GgufExportType } from "../../../src/models/export/index.js";
import type { Transformer } from "../../../src/models/transformer.js";
import type { Tokenizer } from "../../../src/models/tokenizer.js";
import { Rng } from "../../../src/util/index.js";
import { FULL, MODEL, SMOKE, TASK_OPTIONS, robotRecipe, type RobotSettings } from "./robotxr1-settings.js";

/** What the orchestrator asks of a job. */
export interface RobotJobSpec {
  kind: "base" | "rl" | "control";
  seed: number;
  smoke: boolean;
  /** The job's folder (the base model, or the run folder's parent). */
  dir: string;
  /** The base model folder (rl, control). */
  base?: string;
}

/** What a job reports. */
export interface RobotJobResult {
  kind: RobotJobSpec["kind"];
  seed: number;
  /** Success (pass@1 of `improved`) per decoding: of the start (rl only) and of the job's final model. */
  start?: PassByDecoding;
  final?: PassByDecoding;
  /** The final policy after a Q8_0 / F16 round trip, at the start's best decoding (rl only). */
  quantized?: { decoding: string; q8_0: number; f16: number; q8MaxAbsError: number };
  /** sha256 of the start's weights, so the orchestrator checks that RL and control began from one start. */
  startHash?: string;
  /** Mean training reward (`improved`) per RL step. */
  trainSuccess?: number[];
  seconds: number;
}

const KEY = "eval/mpc-car/pass@1";

/** Success of `model` on the held-out split at each decoding in `decodings`. */
async function successByDecoding(
  model: Transformer,
  tokenizer: Tokenizer,
  s: RobotSettings,
  seed: number,
  decodings = DECODINGS,
): Promise<PassByDecoding> {
  const task = getTask("mpc-car", TASK_OPTIONS);
  const testSet = task.generate("test", s.evalExamples, 0);
  const out: PassByDecoding = {};
  for (const d of decodings) {
    const k = d.temperature === 0 ? [1] : [1, s.evalSamples];
    const res = await evaluate(model, tokenizer, task, testSet, {
      maxNewTokens: s.maxTokens,
      seed,
      temperature: d.temperature,
      k,
    });
    out[d.label] = res.metrics[KEY]!;
  }
  return out;
}

async function runJob(spec: RobotJobSpec): Promise<RobotJobResult> {
  const s = spec.smoke ? SMOKE : FULL;
  const t0 = performance.now();
  const seconds = () => (performance.now() - t0) / 1000;
  if (spec.kind === "base") {
    if (!existsSync(join(spec.dir, "model.safetensors"))) {
      const policy = buildModel(MODEL, s.base.seed);
      const trainSet = getTask("mpc-car", TASK_OPTIONS).generate("train", s.trainExamples, 0);
      const pairs = trainSet.map((e) => ({ prompt: e.prompt, completion: e.goldCompletion }));
      trainSft(policy.model, policy.tokenizer, pairs, { ...s.base, rng: new Rng(s.base.seed).split("base") });
      saveModel(spec.dir, policy.model, policy.tokenizer);
    }
    return { kind: "base", seed: spec.seed, seconds: seconds() };
  }
  const config = robotRecipe(s, { name: spec.kind, outDir: spec.dir, seed: spec.seed, base: spec.base! });
  const run = new RunDir(join(spec.dir, spec.kind));
  const res = await train(config, {
    resume: false,
    overwrite: true, // the bench owns its work folder
    reporters: [jsonlReporter(run)],
    warn: () => {},
    ...(spec.kind === "control" ? { transformGroups: withinGroupControl(spec.seed) } : {}),
  });
  const trainSuccess = run.metrics().map((m) => m["reward/improved/mean"] ?? NaN);
  const startDir = join(res.runDir, "checkpoints", "start");
  const start = loadModel(startDir);
  const startHash = baseWeightsHash(start.model);
  const finalDir = join(res.runDir, "checkpoints", `step-${res.step}`);
  const finalModel = () => loadModel(finalDir); // merged: what `rlvr export` writes
  const f = finalModel();
  const final = await successByDecoding(f.model, f.tokenizer, s, spec.seed);
  const out: RobotJobResult = { kind: spec.kind, seed: spec.seed, final, startHash, trainSuccess, seconds: 0 };
  if (spec.kind === "rl") {
    out.start = await successByDecoding(start.model, start.tokenizer, s, spec.seed);
    const best = bestDecoding(out.start);
    const at = DECODINGS.filter((d) => d.label === best.label);
    const q = { decoding: best.label, q8_0: NaN, f16: NaN, q8MaxAbsError: NaN };
    for (const type of ["q8_0", "f16"] as GgufExportType[]) {
      const m = finalModel();
      const report = roundTripWeights(m.model, type);
      if (type === "q8_0") q.q8MaxAbsError = report.maxAbsError;
      q[type as "q8_0" | "f16"] = (await successByDecoding(m.model, m.tokenizer, s, spec.seed, at))[best.label]!;
    }
    out.quantized = q;
  }
  out.seconds = seconds();
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const spec = JSON.parse(process.argv[2]!) as RobotJobSpec;
  const result = await runJob(spec);
  writeFileSync(join(spec.dir, `${spec.kind}.json`), JSON.stringify(result));
}
