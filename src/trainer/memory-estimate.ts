/**
 * A recipe's memory, estimated at load from its sizes, so that a recipe too large for the machine is refused with
 * the estimate and the limit, instead of ending in a V8 out-of-memory abort (which no error handler can catch).
 *
 * Two budgets, because Node keeps two kinds of memory:
 * - tensors (Float32Array storage, outside the JS heap), against `os.totalmem()`: parameters, gradients and
 *   optimizer moments; the frozen reference; the KV cache and logits of one sampling batch (all
 *   promptsPerStep × groupSize rows at once, and eval.examples × max k rows when evaluating); the activations kept
 *   for backward by one micro-batch, with its logits and their gradient;
 * - JS objects (rollout records, the generated task splits), against the V8 heap limit: per rollout row its token,
 *   log-prob and mask arrays and text; per example its JSON size, measured on a few generated examples.
 * The figures are upper-bound estimates (sequence length: the longest sampled prompt plus maxCompletionTokens,
 * capped at the model's maxSeqLen), close enough to refuse what cannot fit while passing everything that does.
 */
import { readFileSync } from "node:fs";
import { totalmem } from "node:os";
import { join } from "node:path";
import { getHeapStatistics } from "node:v8";
import { CharTokenizer } from "../models/tokenizer.js";
import { fromHfConfig, headDimOf, parameterCount, type TransformerConfig } from "../models/config.js";
import { getTask } from "../tasks/index.js";
import { TrainConfigSchema, type ConfigProblem, type TrainConfig } from "./config.js";

/** One line of the estimate: what it is, its bytes, and the recipe fields that scale it. */
export interface MemoryPart {
  what: string;
  bytes: number;
  fields: string[];
}

/** The estimate of one recipe against the machine's limits. */
export interface MemoryEstimate {
  tensors: MemoryPart[];
  heap: MemoryPart[];
  tensorBytes: number;
  heapBytes: number;
  /** os.totalmem(): what Float32Array storage can use at most. */
  tensorLimit: number;
  /** The V8 heap limit (node --max-old-space-size): what JS objects can use. */
  heapLimit: number;
}

/** Bytes of JS heap per rollout row (record, ids, terms, sampler state) beyond its per-token arrays. */
const ROW_OVERHEAD = 1024;
/** Bytes of JS heap per token of a rollout: ids, sampler log-probs, loss mask, reference log-probs (8 each), text. */
const ROW_TOKEN_BYTES = 40;
/** The field that multiplies a step's rollouts under `zeroStd.policy: resample`. */
const RESAMPLE_FIELD = "algorithm.zeroStd.maxGenBatches";

/** Estimates the memory of `config`; `model` is its transformer config (see `modelConfigOf`). */
export function estimateMemory(
  config: TrainConfig,
  model: TransformerConfig,
  promptTokens: number,
  exampleBytes: number,
): MemoryEstimate {
  const tc = config.train,
    a = config.algorithm;
  const P = parameterCount(model);
  const d = model.dModel,
    L = model.nLayers,
    V = model.vocabSize,
    H = model.nHeads,
    hd = headDimOf(model);
  const T = Math.min(model.maxSeqLen, promptTokens + tc.maxCompletionTokens);
  const moments = tc.optimizer.type === "adamw" ? 2 : tc.optimizer.momentum > 0 ? 1 : 0;
  const rows = tc.promptsPerStep * tc.groupSize;
  const perQuestion = config.eval.temperature > 0 ? Math.max(...config.eval.k) : 1;
  const evalRows = Math.min(config.eval.examples, config.task.testExamples) * perQuestion;
  const sampleRows = Math.max(rows, evalRows);
  const sampleFields = rows >= evalRows ? ["train.promptsPerStep", "train.groupSize"] : ["eval.examples", "eval.k"];
  const modelFields = config.model.type === "new" ? ["model.dModel", "model.nLayers"] : ["model.path"];
  const m = Math.min(tc.microBatchSize, rows);
  const perToken = L * (10 * d + 4 * model.dFf + 2 * H * T) + 3 * V; // kept for backward: (B, T, ·) per layer, logits
  const useRef = a.kl.beta > 0 || a.kl.monitorOnly;
  const tensors: MemoryPart[] = [
    {
      what: `parameters, gradients and optimizer moments (${P.toExponential(2)} parameters)`,
      bytes: 4 * P * (2 + moments),
      fields: modelFields,
    },
    { what: "the frozen reference model", bytes: useRef ? 4 * P : 0, fields: ["algorithm.kl.beta", ...modelFields] },
    {
      what: `the KV cache of one sampling batch (${sampleRows} rows × ${T} positions)`,
      bytes: 4 * 2 * L * sampleRows * model.nKvHeads * T * hd + 4 * sampleRows * (V + 2 * T), // K, V; logits, masks
      fields: [...sampleFields, "train.maxCompletionTokens", ...modelFields],
    },
    {
      what: `activations of one micro-batch (${m} rows × ${T} positions)`,
      bytes: 4 * m * T * perToken,
      fields: ["train.microBatchSize", "train.maxCompletionTokens", ...modelFields],
    },
  ];
  const genBatches = a.zeroStd.policy === "resample" ? a.zeroStd.maxGenBatches : 1;
  const examples = config.task.trainExamples + config.task.testExamples;
  const heap: MemoryPart[] = [
    {
      what: `rollout records of one step (${rows * genBatches} rows)`,
      bytes: rows * genBatches * (ROW_OVERHEAD + ROW_TOKEN_BYTES * T),
      fields: ["train.promptsPerStep", "train.groupSize", ...(genBatches > 1 ? [RESAMPLE_FIELD] : [])],
    },
    {
      what: `the generated task splits (${examples} examples)`,
      bytes: examples * exampleBytes,
      fields: ["task.trainExamples", "task.testExamples"],
    },
  ];
  const sum = (ps: MemoryPart[]) => ps.reduce((s, p) => s + p.bytes, 0);
  return {
    tensors,
    heap,
    tensorBytes: sum(tensors),
    heapBytes: sum(heap),
    tensorLimit: totalmem(),
    heapLimit: getHeapStatistics().heap_size_limit,
  };
}

/**
 * The recipe's memory problems: one per budget it exceeds, naming the estimate, the limit and the field that
 * drives the largest part (the one furthest above its default). Empty when it fits. A checkpoint whose config.json
 * cannot be read is left to the model loader, which names the file.
 */
export function memoryProblems(config: TrainConfig): ConfigProblem[] {
  const model = modelConfigOf(config);
  if (model === null) return [];
  const { promptTokens, exampleBytes } = measureTask(config);
  const est = estimateMemory(config, model, promptTokens, exampleBytes);
  const out: ConfigProblem[] = [];
  const check = (parts: MemoryPart[], total: number, limit: number, kind: string, limitName: string) => {
    if (total <= limit) return;
    const top = [...parts].sort((x, y) => y.bytes - x.bytes);
    const shown = top
      .filter((p) => p.bytes > 0)
      .slice(0, 3)
      .map((p) => `${p.what}: ${fmtBytes(p.bytes)} [${p.fields.join(", ")}]`)
      .join("; ");
    out.push({
      path: driver(config, top[0]!.fields),
      message:
        `the recipe needs about ${fmtBytes(total)} of ${kind}, more than the limit of ${fmtBytes(limit)} ` +
        `(${limitName}): ${shown}; reduce ${top[0]!.fields.slice(0, 3).join(" or ")}`,
    });
  };
  check(est.tensors, est.tensorBytes, est.tensorLimit, "tensor memory", "os.totalmem()");
  check(est.heap, est.heapBytes, est.heapLimit, "JS heap", "V8 heap limit; node --max-old-space-size raises it");
  return out;
}

/** The recipe's transformer config: built from `model` fields, or read from the checkpoint's config.json. */
export function modelConfigOf(config: TrainConfig): TransformerConfig | null {
  const m = config.model;
  if (m.type === "checkpoint") {
    try {
      return fromHfConfig(JSON.parse(readFileSync(join(m.path, "config.json"), "utf8")) as Record<string, unknown>);
    } catch {
      return null;
    }
  }
  const dFf = m.dFf ?? 4 * m.dModel;
  return {
    arch: m.arch,
    vocabSize: new CharTokenizer().vocabSize,
    dModel: m.dModel,
    nLayers: m.nLayers,
    nHeads: m.nHeads,
    nKvHeads: m.nKvHeads ?? m.nHeads,
    dFf,
    maxSeqLen: m.maxSeqLen,
    ropeTheta: 10000,
    normEps: 1e-5,
    tieEmbeddings: true,
    qkvBias: false,
    dropout: 0,
  };
}

/** Longest prompt (in characters, an upper bound on tokens) and mean JSON size of a few generated examples. */
function measureTask(config: TrainConfig): { promptTokens: number; exampleBytes: number } {
  try {
    const examples = getTask(config.task.name, config.task.options).generate("train", 8, config.task.seed);
    const promptTokens = 2 + Math.max(0, ...examples.map((e) => e.prompt.length));
    const chars = examples.reduce((s, e) => s + JSON.stringify(e).length, 0);
    const exampleBytes = 200 + (2 * chars) / Math.max(1, examples.length); // UTF-16 strings plus object overhead
    return { promptTokens, exampleBytes };
  } catch {
    return { promptTokens: 0, exampleBytes: 200 }; // the task's own check reports a task that cannot generate
  }
}

/** Of `fields`, the one whose value is furthest above its default (the one to reduce); the first when none is. */
function driver(config: TrainConfig, fields: string[]): string {
  const defaults = TrainConfigSchema.parse({ model: { type: "new" }, task: { name: "x" } }) as unknown;
  let best = fields[0]!,
    ratio = 0;
  for (const f of fields) {
    const v = valueAt(config, f),
      d = valueAt(defaults, f);
    const r = typeof v === "number" && typeof d === "number" && d > 0 ? v / d : 0;
    if (r > ratio) [best, ratio] = [f, r];
  }
  return best;
}

function valueAt(x: unknown, path: string): unknown {
  let cur = x;
  for (const k of path.split(".")) {
    cur = typeof cur === "object" && cur !== null ? (cur as Record<string, unknown>)[k] : undefined;
  }
  return cur;
}

/** Bytes as `12.3 GiB` (or MiB/TiB/PiB). */
export function fmtBytes(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
  let i = 0;
  while (bytes >= 1024 && i < units.length - 1) [bytes, i] = [bytes / 1024, i + 1];
  return `${bytes.toFixed(bytes < 10 && i > 0 ? 1 : 0)} ${units[i]}`;
}
