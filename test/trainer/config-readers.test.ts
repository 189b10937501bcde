/**
 * Every recipe field has a reader. A tiny but complete run (SFT warm start, RL steps, evaluation at start and every
 * step, checkpoints with keep-best, samples) is given its resolved config behind a proxy that records each field
 * the trainer reads; a field nobody reads would be a knob that parses and silently does nothing. Reads made only to
 * serialise the config (JSON.stringify for config.json and the recipe hash) and whole-object copies do not count.
 * The `algorithm` section is covered field by field, with the numbers each flip changes, by
 * test/algorithms/knob-flips.test.ts and test/trainer/knob-runs.test.ts.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/trainer/recipe.js";
import { train } from "../../src/trainer/train.js";

/** A proxy over `obj` that records every dotted path read through it, except reads made while serialising. */
function recordReads<T extends object>(obj: T, reads: Set<string>, prefix = ""): T {
  return new Proxy(obj, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof key !== "string" || !Object.prototype.hasOwnProperty.call(target, key)) return value;
      const path = prefix ? `${prefix}.${key}` : key;
      const stack = new Error().stack ?? "";
      if (!/JSON\.stringify|structuredClone/.test(stack)) reads.add(path);
      return value !== null && typeof value === "object" && !ArrayBuffer.isView(value)
        ? recordReads(value as object, reads, path)
        : value;
    },
  });
}

/** Every leaf path of a plain config object (arrays and scalars are leaves). */
function leafPaths(obj: unknown, prefix = ""): string[] {
  if (obj === null || typeof obj !== "object" || Array.isArray(obj)) return [prefix];
  const entries = Object.entries(obj as Record<string, unknown>);
  if (entries.length === 0) return [prefix];
  return entries.flatMap(([k, v]) => leafPaths(v, prefix ? `${prefix}.${k}` : k));
}

const BASE = {
  name: "readers",
  seed: 3,
  model: { type: "new", dModel: 16, nLayers: 1, nHeads: 2, maxSeqLen: 40 },
  task: { name: "addition", options: { maxDigits: 1 }, trainExamples: 40, testExamples: 8 },
  sft: { enabled: true, steps: 2, batchSize: 4, lr: 0.003 },
  train: { steps: 2, promptsPerStep: 2, groupSize: 2, maxCompletionTokens: 6 },
  eval: { every: 1, atStart: true, examples: 4 },
  checkpoint: { every: 1, keepBest: true },
  log: { progress: false },
};

/**
 * The other branch of every field that is only read under a setting: resampling, the adaptive β, the overlong term,
 * the w_IS fields (read when lp_old is recomputed; the remote sampler's own fields: test/sampling/remote-*.test.ts).
 */
const CONDITIONAL = {
  zeroStd: { policy: "resample", maxGenBatches: 2 },
  kl: { controller: "adaptive" },
  overlong: { enabled: true },
  offPolicy: { oldLogprobs: "recompute" },
};

type Recipe = Parameters<typeof resolveConfig>[0];

/** Runs a recipe behind the recording proxy; returns the resolved config and the paths the trainer read. */
async function readsOf(recipe: Record<string, unknown>) {
  const config = resolveConfig({ ...recipe, outDir: mkdtempSync(join(tmpdir(), "rlvr-readers-")) } as Recipe);
  const reads = new Set<string>();
  await train(recordReads(config, reads), { resume: false, reporters: [] });
  return { config, reads };
}

/** Fields that admit exactly one value today (the only tokenizer): nothing to flip. */
const SINGLE_VALUED: Record<string, unknown> = { "model.tokenizer": "bpe" };
/** Fields the CLI reads when it builds the run's reporters (src/cli/commands/train.ts). */
const CLI_READ = ["log.progress"];

describe("recipe fields", () => {
  it("every field of the resolved config is read by the trainer (each branch of a conditional field run once)", async () => {
    const a = await readsOf(BASE);
    const b = await readsOf({ ...BASE, algorithm: CONDITIONAL });
    const reads = new Set([...a.reads, ...b.reads]);
    const fields = new Set([...leafPaths(a.config), ...leafPaths(b.config)]);
    const unread = [...fields].filter((p) => !reads.has(p) && !(p in SINGLE_VALUED) && !CLI_READ.includes(p));
    expect(unread).toEqual([]);
  });

  it("the exempt fields are really single-valued, or read by the CLI", () => {
    for (const [path, other] of Object.entries(SINGLE_VALUED)) {
      const [section, field] = path.split(".") as [keyof typeof BASE, string];
      const recipe = { ...BASE, [section]: { ...(BASE[section] as object), [field]: other } };
      expect(() => resolveConfig(recipe as Recipe), path).toThrow();
    }
    const cli = readFileSync(join(import.meta.dirname, "..", "..", "src", "cli", "commands", "train.ts"), "utf8");
    for (const path of CLI_READ) expect(cli).toContain(`config.${path}`);
  });

  it("the recorder sees a read, and ignores serialisation", () => {
    const reads = new Set<string>();
    const p = recordReads({ a: { b: 1, c: 2 }, d: 3 }, reads);
    JSON.stringify(p);
    expect([...reads]).toEqual([]);
    void p.a.b;
    expect([...reads].sort()).toEqual(["a", "a.b"]);
  });
});
