/**
 * Every recipe field outside `algorithm` changes what a run produces when it is flipped. A small seeded run from the
 * committed demo start (mixed rewards, so the optimizer moves and evaluation scores vary) is fingerprinted by everything it leaves behind (its folder's path relative to the work dir, metrics.jsonl,
 * eval.jsonl and samples.jsonl without timings, the checkpoint folders kept, and the final weights); the same recipe
 * twice gives the same fingerprint, and each flip below must give another. The `algorithm` fields have their own flip
 * tests with the numbers each one moves (test/algorithms/knob-flips.test.ts, test/trainer/knob-runs.test.ts), and
 * test/trainer/config-readers.test.ts checks that every field has a reader. A walk over the schema keeps this table
 * complete: a new field without a flip here fails the last test.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/trainer/recipe.js";
import { train } from "../../src/trainer/train.js";
import { jsonlReporter } from "../../src/trainer/reporters.js";
import { RunDir } from "../../src/trainer/run-dir.js";

type Recipe = Record<string, unknown>;

const WORK = mkdtempSync(join(tmpdir(), "rlvr-flips-"));
/** A run whose every field is readable in its output: checkpoints each step, evaluation each step, samples. */
const DEMO_START = join(import.meta.dirname, "..", "..", "assets", "demo-start");
/**
 * A run whose every field is visible in its output: the committed demo start (it solves about a fifth of the sums,
 * so groups have mixed rewards, the optimizer moves and evaluation scores vary), checkpoints and evaluation every
 * step, samples. Fields of a new model are flipped on NEW_MODEL instead.
 */
const BASE: Recipe = {
  name: "flip",
  seed: 5,
  model: { type: "checkpoint", path: DEMO_START },
  task: { name: "addition", options: { minDigits: 1, maxDigits: 2 }, trainExamples: 40, testExamples: 12 },
  train: { steps: 2, promptsPerStep: 2, groupSize: 6, maxCompletionTokens: 14, lr: 0.003 },
  eval: { every: 1, atStart: true, examples: 10, temperature: 0, k: [1] },
  checkpoint: { every: 1, keepLast: 2, keepBest: true },
  log: { progress: false, sampleGroups: 2 },
};
const NEW_MODEL: Recipe = {
  ...BASE,
  model: { type: "new", arch: "gpt2", dModel: 16, nLayers: 1, nHeads: 2, maxSeqLen: 48 },
  task: { name: "addition", options: { maxDigits: 1 }, trainExamples: 30, testExamples: 6 },
};
const NEW_MODEL_FIELDS = /^model\.(arch|dModel|nLayers|nHeads|nKvHeads|dFf|maxSeqLen)$/;

/** Deep-merges `over` onto `base` (objects merge, everything else replaces). */
function merge(base: unknown, over: unknown): unknown {
  if (typeof base !== "object" || base === null || Array.isArray(base)) return over;
  if (typeof over !== "object" || over === null || Array.isArray(over)) return over;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [k, v] of Object.entries(over)) out[k] = k in out ? merge(out[k], v) : v;
  return out;
}

const TIMING = /^(time\/|perf\/|.*PerSec|.*_s$)/;
/** A JSONL file's records with timing fields removed, as one string. */
function untimed(path: string): string {
  if (!existsSync(path)) return "";
  return readFileSync(path, "utf8")
    .trim()
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(l)).filter(([k]) => !TIMING.test(k)))))
    .join("\n");
}

/** Runs a recipe in its own folder under WORK and fingerprints what it leaves. */
async function fingerprint(recipe: Recipe, outDir = mkdtempSync(join(WORK, "run-"))): Promise<string> {
  const config = resolveConfig({ outDir, ...recipe } as Parameters<typeof resolveConfig>[0]);
  const res = await train(config, { resume: false, reporters: [jsonlReporter(new RunDir(join(outDir, config.name)))] });
  const ck = join(res.runDir, "checkpoints");
  const kept = existsSync(ck) ? readdirSync(ck).sort() : [];
  const last = join(ck, `step-${res.step}`, "model.safetensors");
  const h = createHash("sha256");
  h.update(relative(outDir, res.runDir)).update(kept.join(","));
  for (const f of ["metrics.jsonl", "eval.jsonl", "samples.jsonl"]) h.update(untimed(join(res.runDir, f)));
  if (existsSync(last)) h.update(readFileSync(last));
  return h.digest("hex");
}

/** One flip per field outside `algorithm`: the override that changes it. */
const FLIPS: Record<string, Recipe> = {
  name: { name: "flop" },
  outDir: {}, // a different folder is chosen per run below; the relative path part is the name
  seed: { seed: 6 },
  preset: { preset: "drGrpo" },
  reference: { reference: "<other checkpoint>" }, // the default reference is the start itself
  "model.type": {}, // checkpoint → new, set below
  "model.arch": { model: { arch: "llama" } },
  "model.dModel": { model: { dModel: 24 } },
  "model.nLayers": { model: { nLayers: 2 } },
  "model.nHeads": { model: { nHeads: 4 } },
  "model.nKvHeads": { model: { arch: "llama", nHeads: 4, nKvHeads: 2 } },
  "model.dFf": { model: { dFf: 24 } },
  "model.maxSeqLen": { model: { maxSeqLen: 64 } },
  "model.path": {}, // compared between two checkpoint paths below
  "task.name": { task: { name: "linear-equation", options: {}, testExamples: 12 } },
  "task.options": { task: { options: { minDigits: 2, maxDigits: 2 } } },
  "task.trainExamples": { task: { trainExamples: 12 } },
  "task.testExamples": { task: { testExamples: 6 } }, // fewer than eval.examples: evaluation sees 6
  "task.seed": { task: { seed: 9 } },
  "sampler.temperature": { sampler: { type: "builtin", temperature: 0.6 } },
  "sampler.topK": { sampler: { type: "builtin", topK: 3 } },
  "sampler.topP": { sampler: { type: "builtin", topP: 0.5 } },
  "train.steps": { train: { steps: 3 } },
  "train.promptsPerStep": { train: { promptsPerStep: 3 } },
  "train.groupSize": { train: { groupSize: 3 } },
  "train.maxCompletionTokens": { train: { maxCompletionTokens: 4 } },
  "train.innerIterations": { train: { innerIterations: 2 }, algorithm: { policy: { clip: { type: "ppo" } } } },
  "train.miniBatches": { train: { miniBatches: 2 }, algorithm: { policy: { clip: { type: "ppo" } } } },
  "train.microBatchSize": { train: { microBatchSize: 1 } },
  "train.lr": { train: { lr: 0.02 } },
  "train.maxGradNorm": { train: { maxGradNorm: 0.01 } },
  "train.optimizer.type": { train: { optimizer: { type: "sgd" } } },
  "train.optimizer.betas": { train: { optimizer: { type: "adamw", betas: [0.5, 0.9] } } },
  "train.optimizer.eps": { train: { optimizer: { type: "adamw", eps: 0.5 } } },
  "train.optimizer.weightDecay": { train: { optimizer: { type: "adamw", weightDecay: 0.5 } } },
  "train.optimizer.momentum": { train: { optimizer: { type: "sgd", momentum: 0.9 }, lr: 0.5 } },
  "train.schedule.type": { train: { schedule: { type: "cosine" } } },
  "train.schedule.warmupSteps": { train: { schedule: { type: "linearWarmup", warmupSteps: 2 } } },
  "train.schedule.minLrFrac": { train: { schedule: { type: "cosine", minLrFrac: 0.9 } } },
  "sft.enabled": { sft: { enabled: true, steps: 2, batchSize: 4 } },
  "sft.steps": { sft: { enabled: true, steps: 3, batchSize: 4 } },
  "sft.batchSize": { sft: { enabled: true, steps: 2, batchSize: 2 } },
  "sft.lr": { sft: { enabled: true, steps: 2, batchSize: 4, lr: 0.02 } },
  "eval.every": { eval: { every: 2 } },
  "eval.examples": { eval: { examples: 3 } },
  "eval.temperature": { eval: { temperature: 1 } },
  "eval.k": {}, // compared at T 1 below (greedy evaluation draws one sample whatever k is)
  "eval.atStart": { eval: { atStart: false } },
  "checkpoint.every": { checkpoint: { every: 2 } },
  "checkpoint.keepLast": { checkpoint: { keepLast: 1 } },
  "checkpoint.keepBest": { checkpoint: { keepBest: false } },
  "log.sampleGroups": { log: { sampleGroups: 1 } },
  lora: { lora: { rank: 2 } }, // adapters on frozen weights instead of full fine-tuning (their own tests: test/models/adapter*.test.ts)
};
/**
 * Fields that admit one value today, or that only the CLI reads (test/trainer/config-readers.test.ts); sampler.type
 * "openai" needs a server, and with the same seed it gives the same run by design: test/sampling/remote-train.test.ts.
 */
const NOT_FLIPPABLE = ["model.tokenizer", "sampler.type", "log.progress"];

/** Every field path of the recipe schema outside `algorithm`, from resolved configs of each union branch. */
function schemaFields(): string[] {
  const leaves = (o: unknown, p = ""): string[] =>
    o !== null && typeof o === "object" && !Array.isArray(o) && !(p === "task.options")
      ? Object.entries(o as Record<string, unknown>).flatMap(([k, v]) => leaves(v, p ? `${p}.${k}` : k))
      : [p];
  const variants = [
    NEW_MODEL,
    merge(NEW_MODEL, { model: { arch: "llama" }, train: { optimizer: { type: "sgd" }, schedule: { type: "cosine" } } }),
    merge(BASE, { train: { schedule: { type: "linearWarmup" } } }),
  ];
  const paths = new Set(variants.flatMap((v) => leaves(resolveConfig({ outDir: WORK, ...(v as Recipe) } as never))));
  return [...paths].filter((p) => !p.startsWith("algorithm.")).sort();
}

describe("recipe flips outside algorithm", () => {
  const baseline = { fp: "" };
  const newModel = { fp: "" };
  let start = "";
  let other = "";

  it("the same recipe twice gives the same fingerprint", async () => {
    const dir = mkdtempSync(join(WORK, "base-"));
    baseline.fp = await fingerprint(BASE, dir);
    expect(await fingerprint(BASE)).toBe(baseline.fp);
    newModel.fp = await fingerprint(NEW_MODEL);
    expect(await fingerprint(NEW_MODEL)).toBe(newModel.fp);
    start = join(dir, "flip", "checkpoints", "start");
    expect(existsSync(join(start, "model.safetensors"))).toBe(true);
    const otherDir = mkdtempSync(join(WORK, "other-"));
    await fingerprint(merge(BASE, { seed: 11 }) as Recipe, otherDir);
    other = join(otherDir, "flip", "checkpoints", "step-2");
  }, 60_000);

  it.each(Object.keys(FLIPS))(
    "flipping %s changes the run",
    async (field) => {
      if (field === "outDir") {
        // The work folder itself is not in the fingerprint (every run gets its own); the run lands inside it.
        const dir = mkdtempSync(join(WORK, "outdir-"));
        const config = resolveConfig({ ...BASE, outDir: dir } as never);
        const res = await train(config, { resume: false, reporters: [] });
        expect(res.runDir.startsWith(dir)).toBe(true);
        return;
      }
      const flip = JSON.parse(
        JSON.stringify(FLIPS[field]).replaceAll("<start checkpoint>", start).replaceAll("<other checkpoint>", other),
      ) as Recipe;
      const base = NEW_MODEL_FIELDS.test(field) ? NEW_MODEL : BASE;
      const recipe = merge(base, flip) as Recipe;
      if (field === "model.type") recipe.model = NEW_MODEL.model;
      if (field === "task.name") recipe.task = { ...(BASE.task as Recipe), name: "linear-equation", options: {} };
      if (field === "eval.k") {
        const a = await fingerprint(merge(BASE, { eval: { temperature: 1, k: [1] } }) as Recipe);
        const b = await fingerprint(merge(BASE, { eval: { temperature: 1, k: [1, 2] } }) as Recipe);
        expect(b).not.toBe(a);
        return;
      }
      if (field === "model.path") {
        // Two checkpoint starts: the base run's start (the same weights as BASE) and another run's last step.
        const a = await fingerprint({ ...BASE, model: { type: "checkpoint", path: start } });
        const b = await fingerprint({ ...BASE, model: { type: "checkpoint", path: other } });
        expect(b).not.toBe(a);
        return;
      }
      expect(await fingerprint(recipe)).not.toBe(base === NEW_MODEL ? newModel.fp : baseline.fp);
    },
    60_000,
  );

  it("every field outside algorithm has a flip here, or is single-valued or CLI-read", () => {
    const missing = schemaFields().filter((p) => !(p in FLIPS) && !NOT_FLIPPABLE.includes(p));
    expect(missing).toEqual([]);
  });
});
