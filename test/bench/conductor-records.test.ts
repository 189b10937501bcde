/**
 * bench/conductor/records.ts: records name checkpoint workers by their weights' SHA-256 (so a pool rebuilt into
 * another folder with the same bytes still matches), and a made checkpoint is reused only under reuse, with equal
 * settings, and while its weights still hash as recorded; otherwise it is trained again and the record replaced. A
 * longer RL run continues the longest shorter made run of equal settings, and ends where an uninterrupted run does.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  madeCheckpoint,
  prepareRun,
  recordedOptions,
  shorterRun,
  unweighedOptions,
  weightsHash,
} from "../../bench/conductor/records.js";
import type { ConductorInput } from "../../src/tasks/conductor.js";
import { resolveConfig } from "../../src/trainer/recipe.js";
import { train } from "../../src/trainer/train.js";
import { RunDir } from "../../src/trainer/run-dir.js";
import { jsonlReporter } from "../../src/trainer/reporters.js";

const sha = (s: string) => createHash("sha256").update(s).digest("hex");

/** A folder holding a stand-in weights file with the given bytes. */
function checkpoint(root: string, name: string, bytes: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "model.safetensors"), bytes);
  return dir;
}

describe("recordedOptions", () => {
  it("replaces a checkpoint worker's folder by its weights' hash and leaves other workers alone", () => {
    const root = mkdtempSync(join(tmpdir(), "rlvr-conductor-rec-"));
    const a = checkpoint(root, "pool-key-1/add", "weights of the adder");
    const b = checkpoint(root, "pool-key-2/add", "weights of the adder"); // the same bytes, another folder
    const options = (path: string): ConductorInput => ({
      workers: [
        { id: "adder", description: "adds", source: { type: "checkpoint", path, temperature: 0 } },
        { id: "reader", description: "reads", source: { type: "program", skill: "read" } },
      ],
      digits: 2,
    });
    const rec = recordedOptions(options(a));
    expect(rec).toEqual({
      workers: [
        {
          id: "adder",
          description: "adds",
          source: { type: "checkpoint", temperature: 0, weights: sha("weights of the adder") },
        },
        { id: "reader", description: "reads", source: { type: "program", skill: "read" } },
      ],
      digits: 2,
    });
    expect(JSON.stringify(recordedOptions(options(b)))).toBe(JSON.stringify(rec));
    writeFileSync(join(b, "model.safetensors"), "other weights");
    expect(JSON.stringify(recordedOptions(options(b)))).not.toBe(JSON.stringify(rec));
    // a report-only run (no pool to hash) matches records but for the weights: the recorded options and the
    // options with a folder that does not exist come out the same, key order included
    const unweighed = JSON.stringify(unweighedOptions(options(join(root, "not-made"))));
    expect(JSON.stringify(unweighedOptions(rec))).toBe(unweighed);
    expect(unweighed).not.toContain("path");
    expect(JSON.stringify(unweighedOptions(recordedOptions(options(b))))).toBe(unweighed);
    expect(unweighedOptions({ ...options(a), digits: 3 })).not.toEqual(unweighedOptions(rec));
  });
});

describe("madeCheckpoint", () => {
  it("trains, records, then reuses with equal settings under reuse only", async () => {
    const out = mkdtempSync(join(tmpdir(), "rlvr-conductor-made-"));
    let trained = 0;
    const make = async () => checkpoint(out, `run-a/step-${++trained}`, `weights ${trained}`);
    const opts = { out, name: "rl-0", settings: { lr: 2e-4 }, source: "src1", reuse: true };
    const first = await madeCheckpoint(opts, make);
    expect(first).toEqual({ dir: join(out, "run-a/step-1"), reused: false });
    const rec = JSON.parse(readFileSync(join(out, "made-rl-0.json"), "utf8"));
    // the folder is kept relative to the work folder, with the weights' hash and the source that made it
    expect(rec).toMatchObject({
      settings: { lr: 2e-4 },
      source: "src1",
      result: { dir: "run-a/step-1", weights: sha("weights 1") },
    });
    expect(await madeCheckpoint({ ...opts, source: "src2" }, make)).toEqual({ dir: first.dir, reused: true });
    expect(trained).toBe(1);
    // other settings, or no reuse: trained again, and the record replaced
    expect(await madeCheckpoint({ ...opts, settings: { lr: 1e-4 } }, make)).toMatchObject({ reused: false });
    expect(trained).toBe(2);
    expect(await madeCheckpoint({ ...opts, settings: { lr: 1e-4 }, reuse: false }, make)).toMatchObject({
      reused: false,
    });
    expect(trained).toBe(3);
    expect(weightsHash(join(out, "run-a/step-3"))).toBe(sha("weights 3"));
  });

  it("trains again when the recorded checkpoint is gone or its weights changed", async () => {
    const out = mkdtempSync(join(tmpdir(), "rlvr-conductor-made-"));
    let trained = 0;
    const make = async () => checkpoint(out, "start", `weights ${++trained}`);
    const opts = { out, name: "start-0", settings: { seed: 0 }, source: "s", reuse: true };
    await madeCheckpoint(opts, make);
    writeFileSync(join(out, "start", "model.safetensors"), "overwritten by another run");
    expect(await madeCheckpoint(opts, make)).toMatchObject({ reused: false });
    expect(trained).toBe(2);
    expect(await madeCheckpoint(opts, make)).toMatchObject({ reused: true });
    expect(trained).toBe(2);
  });
});

/** A made RL run's record: its settings (with `rlSteps`) and `<run>/checkpoints/step-<steps>` holding `bytes`. */
async function madeRun(out: string, run: string, settings: object, steps: number, bytes: string) {
  await madeCheckpoint({ out, name: run, settings, source: "s", reuse: true }, async () =>
    checkpoint(out, `${run}/checkpoints/step-${steps}`, bytes),
  );
}

describe("shorterRun", () => {
  it("finds the longest made run of equal settings but fewer steps, whose weights still hash as recorded", async () => {
    const out = mkdtempSync(join(tmpdir(), "rlvr-conductor-short-"));
    const rl = { arm: "rl", seed: 1, start: "abc", rlLr: 2e-4, group: 16 };
    await madeRun(out, "rl-1-s100", { ...rl, rlSteps: 100 }, 100, "w100");
    await madeRun(out, "rl-1", { ...rl, rlSteps: 200 }, 200, "w200");
    await madeRun(out, "rl-1-s600", { ...rl, rlSteps: 600 }, 600, "w600"); // longer: never continued
    await madeRun(out, "control-1", { ...rl, arm: "control", rlSteps: 300 }, 300, "c300"); // another arm
    await madeRun(out, "rl-1-lr1e-4", { ...rl, rlLr: 1e-4, rlSteps: 300 }, 300, "l300"); // another lr
    expect(shorterRun(out, { ...rl, rlSteps: 400 } as never)).toMatchObject({ runDir: join(out, "rl-1"), steps: 200 });
    expect(shorterRun(out, { ...rl, rlSteps: 150 } as never)).toMatchObject({ runDir: join(out, "rl-1-s100") });
    expect(shorterRun(out, { ...rl, rlSteps: 100 } as never)).toBeNull();
    expect(shorterRun(out, { ...rl, start: "other", rlSteps: 400 } as never)).toBeNull();
    // the 200-step run's weights overwritten: the 100-step run is the one left to continue
    writeFileSync(join(out, "rl-1", "checkpoints", "step-200", "model.safetensors"), "changed");
    expect(shorterRun(out, { ...rl, rlSteps: 400 } as never)).toMatchObject({ steps: 100 });
  });
});

describe("prepareRun", () => {
  const recipe = (name: string, out: string, steps: number) =>
    resolveConfig({
      name,
      outDir: out,
      seed: 3,
      model: { type: "new", dModel: 16, nLayers: 1, nHeads: 2, maxSeqLen: 32 },
      task: { name: "addition", options: { maxDigits: 1 }, trainExamples: 40, testExamples: 4 },
      train: { steps, promptsPerStep: 2, groupSize: 4, maxCompletionTokens: 6, lr: 0.003 },
      // an untrained model earns no reward; the entropy bonus makes every step move the weights and Adam's moments
      algorithm: { loss: { entropyCoef: 0.05 } },
      eval: { every: 0, atStart: false, examples: 1 },
      checkpoint: { every: 2, keepLast: 5 },
      log: { progress: false },
    } as Parameters<typeof resolveConfig>[0]);
  const stable = (rows: Record<string, number>[]) =>
    rows.map((r) =>
      Object.fromEntries(Object.entries(r).filter(([k]) => !k.startsWith("time/") && !k.endsWith("PerSec"))),
    );

  it("continues a shorter made run to the same end as an uninterrupted run, and resumes a killed one", async () => {
    const out = mkdtempSync(join(tmpdir(), "rlvr-conductor-extend-"));
    // with metrics.jsonl written, so the runs' steps can be compared (the bench's runs log samples only)
    const go = (config: ReturnType<typeof recipe>, opts: { resume?: boolean } = {}) =>
      train(config, { ...opts, overwrite: true, reporters: [jsonlReporter(new RunDir(join(out, config.name)))] });
    const whole = await go(recipe("whole", out, 4));
    const short = await go(recipe("short", out, 2));
    const start = weightsHash(join(short.runDir, "checkpoints", "start"));
    const settings = { arm: "rl", start, rlSteps: 2 };
    await madeCheckpoint({ out, name: "short", settings, source: "s", reuse: true }, async () =>
      join(short.runDir, "checkpoints", "step-2"),
    );
    const longer = recipe("longer", out, 4);
    const runDir = join(out, "longer");
    expect(prepareRun(out, runDir, { ...settings, rlSteps: 4 }, longer)).toMatch(/^continuing the 2-step run/);
    const res = await go(longer, { resume: true });
    expect(res.step).toBe(4);
    expect(new RunDir(runDir).metrics()).toHaveLength(4);
    expect(stable(new RunDir(runDir).metrics())).toEqual(stable(new RunDir(whole.runDir).metrics()));
    // steps 1-2 were not trained again: their lines are the shorter run's, wall-clock figures included
    expect(new RunDir(runDir).metrics().slice(0, 2)).toEqual(new RunDir(short.runDir).metrics());
    expect(weightsHash(join(runDir, "checkpoints", "step-4"))).toBe(
      weightsHash(join(whole.runDir, "checkpoints", "step-4")),
    );
    expect(existsSync(join(short.runDir, "checkpoints", "step-4"))).toBe(false); // the shorter run is left as it was

    // the folder of the longer run, now further than the shorter one, resumes from its own newest step
    expect(prepareRun(out, runDir, { ...settings, rlSteps: 6 }, recipe("longer", out, 6))).toBe(
      `resuming ${runDir} from its step 4`,
    );
    // a folder made from another start is deleted, and the shorter run continued
    expect(prepareRun(out, runDir, { ...settings, start: "other", rlSteps: 6 }, longer)).toBe(
      `training ${runDir} from the start`,
    );
    expect(existsSync(runDir)).toBe(false);
  });
});
