/**
 * Kills during checkpoint writes and pruning (issue 11, item 12). Each kill point of `saveCheckpoint` and
 * `pruneCheckpoints` is simulated by a hook that throws there, which leaves the disk exactly as a SIGKILL at that
 * line would; leftovers of older versions (a half-deleted `step-N`, temp files of atomic writes) are planted.
 * After `recoverCheckpoints` / `RunDir.recover` nothing hidden is left, every complete checkpoint still loads,
 * and a checkpoint that was moved aside for replacement when the kill came is put back.
 */
import { describe, expect, it } from "vitest";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { createModel } from "../../src/models/registry.js";
import { Rng } from "../../src/util/index.js";
import {
  completeSteps,
  loadCheckpoint,
  pruneCheckpoints,
  recoverCheckpoints,
  saveCheckpoint,
  type KillPoint,
  type TrainerState,
} from "../../src/trainer/checkpoints.js";
import { RunDir } from "../../src/trainer/run-dir.js";

const { model, tokenizer } = createModel("micro-char", new Rng(1));
const state = (step: number): TrainerState => ({
  step,
  rng: new Rng(step).state(),
  beta: 0,
  best: null,
  counters: { dataCursor: step },
});
const save = (dir: string, name: string, step: number, kill?: KillPoint) =>
  saveCheckpoint(
    dir,
    name,
    { model, tokenizer, optimizerState: { m: new Float32Array([step]) }, state: state(step) },
    kill,
  );
/** A hook that "kills" the process at `at` (throws, so nothing after that line runs). */
const killAt =
  (at: Parameters<KillPoint>[0]): KillPoint =>
  (p) => {
    if (p === at) throw new Error(`killed at ${p}`);
  };
const hidden = (dir: string) => readdirSync(dir).filter((n) => n.startsWith("."));
const stepOf = (dir: string) => loadCheckpoint(dir).state.step;

/** A checkpoints folder with complete step-2 and best (step 2). */
function fresh(): string {
  const dir = join(mkdtempSync(join(tmpdir(), "rlvr-recover-")), "checkpoints");
  save(dir, "step-2", 2);
  save(dir, "best", 2);
  return dir;
}

describe("kill points of saveCheckpoint", () => {
  it("killed after writing, before the rename: the temporary folder is removed, the old checkpoints stand", () => {
    const dir = fresh();
    expect(() => save(dir, "step-4", 4, killAt("written"))).toThrow(/killed/);
    expect(hidden(dir)).toHaveLength(1);
    expect(completeSteps(dir)).toEqual([2]);
    expect(recoverCheckpoints(dir)).toHaveLength(1);
    expect(hidden(dir)).toEqual([]);
    expect(stepOf(join(dir, "step-2"))).toBe(2);
  });
  it("killed with the old folder moved aside and the new one not yet in place: the old one is put back", () => {
    const dir = fresh();
    expect(() => save(dir, "best", 4, killAt("movedAside"))).toThrow(/killed/);
    expect(existsSync(join(dir, "best"))).toBe(false); // the window the old code never repaired
    recoverCheckpoints(dir);
    expect(hidden(dir)).toEqual([]);
    expect(stepOf(join(dir, "best"))).toBe(2);
  });
  it("killed after the rename, before the old folder is deleted: the old folder is removed", () => {
    const dir = fresh();
    expect(() => save(dir, "best", 4, killAt("renamed"))).toThrow(/killed/);
    recoverCheckpoints(dir);
    expect(hidden(dir)).toEqual([]);
    expect(stepOf(join(dir, "best"))).toBe(4);
  });
  it("killed while deleting the replaced folder: its trash is removed", () => {
    const dir = fresh();
    expect(() => save(dir, "best", 4, killAt("trashed"))).toThrow(/killed/);
    expect(hidden(dir).some((n) => n.endsWith(".trash"))).toBe(true);
    recoverCheckpoints(dir);
    expect(hidden(dir)).toEqual([]);
    expect(stepOf(join(dir, "best"))).toBe(4);
  });
});

describe("kill points of pruneCheckpoints", () => {
  it("killed mid-prune: the pruned checkpoint is trash (never a half-deleted step-N), and recovery removes it", () => {
    const dir = fresh();
    save(dir, "step-4", 4);
    save(dir, "step-6", 6);
    expect(() => pruneCheckpoints(dir, 2, killAt("trashed"))).toThrow(/killed/);
    expect(completeSteps(dir)).toEqual([4, 6]);
    expect(
      readdirSync(dir)
        .filter((n) => /^step-/.test(n))
        .sort(),
    ).toEqual(["step-4", "step-6"]);
    recoverCheckpoints(dir);
    expect(hidden(dir)).toEqual([]);
    for (const s of [4, 6]) expect(stepOf(join(dir, `step-${s}`))).toBe(s);
  });
  it("a trash folder half deleted by a kill inside rm is removed too", () => {
    const dir = fresh();
    save(dir, "step-4", 4);
    expect(() => pruneCheckpoints(dir, 1, killAt("trashed"))).toThrow(/killed/);
    const trash = hidden(dir).find((n) => n.endsWith(".trash"))!;
    rmSync(join(dir, trash, "model.safetensors")); // rm got this far
    rmSync(join(dir, trash, "COMPLETE"));
    recoverCheckpoints(dir);
    expect(hidden(dir)).toEqual([]);
    expect(completeSteps(dir)).toEqual([4]);
  });
  it("an uninterrupted prune keeps the newest `keep` and leaves nothing hidden", () => {
    const dir = fresh();
    for (const s of [4, 6, 8]) save(dir, `step-${s}`, s);
    pruneCheckpoints(dir, 2);
    expect(completeSteps(dir)).toEqual([6, 8]);
    expect(hidden(dir)).toEqual([]);
  });
});

describe("leftovers from older versions and from atomic writes", () => {
  it("a step-N half deleted in place (no marker) is removed; the start model and complete checkpoints stay", () => {
    const dir = fresh();
    mkdirSync(join(dir, "step-1"));
    writeFileSync(join(dir, "step-1", "optimizer.bin"), "partial");
    mkdirSync(join(dir, "start"));
    writeFileSync(join(dir, "start", "config.json"), "{}");
    expect(recoverCheckpoints(dir)).toEqual(["step-1"]);
    expect(readdirSync(dir).sort()).toEqual(["best", "start", "step-2"]);
  });
  it("RunDir.recover removes temp files of killed atomic writes, in the run folder and the start model", () => {
    const root = mkdtempSync(join(tmpdir(), "rlvr-recover-run-"));
    const run = new RunDir(root);
    save(run.checkpointsDir, "step-2", 2);
    mkdirSync(join(run.checkpointsDir, "start"));
    writeFileSync(join(root, ".metrics.jsonl.4242.1700000000000.tmp"), '{"step":1}\n');
    writeFileSync(join(run.checkpointsDir, "start", ".model.safetensors.4242.1700000000000.tmp"), "partial");
    writeFileSync(join(root, "notes.txt"), "the user's own file");
    writeFileSync(join(root, ".hidden-user-file.tmp"), "not our pattern");
    expect(run.recover().sort()).toEqual([
      ".metrics.jsonl.4242.1700000000000.tmp",
      ".model.safetensors.4242.1700000000000.tmp",
    ]);
    expect(readdirSync(root).sort()).toEqual([".hidden-user-file.tmp", "checkpoints", "notes.txt"]);
    expect(readFileSync(join(root, "notes.txt"), "utf8")).toBe("the user's own file");
  });
});

describe("a training checkpoint whose own files lie", () => {
  const broken: Array<[string, (dir: string) => void, RegExp]> = [
    [
      "optimizer.json not JSON",
      (d) => writeFileSync(join(d, "optimizer.json"), "{"),
      /optimizer\.json: missing or not valid JSON/,
    ],
    ["state.json missing", (d) => rmSync(join(d, "state.json")), /state\.json: missing or not valid JSON/],
    ["state.json without a step", (d) => writeFileSync(join(d, "state.json"), '{"step": -1}'), /not a trainer state/],
    [
      "optimizer.bin torn",
      (d) => writeFileSync(join(d, "optimizer.bin"), Buffer.alloc(3)),
      /3 bytes is not a whole number/,
    ],
    [
      "a moment past the blob",
      (d) => writeFileSync(join(d, "optimizer.json"), JSON.stringify({ m: { __f32: 0, length: 99 } })),
      /values \[0, \+99\) lie outside the 1 stored values/,
    ],
    [
      "a negative offset",
      (d) => writeFileSync(join(d, "optimizer.json"), JSON.stringify({ m: { __f32: -1, length: 1 } })),
      /values \[-1, \+1\) lie outside/,
    ],
    [
      "a tensor with a bad shape",
      (d) => writeFileSync(join(d, "optimizer.json"), JSON.stringify({ t: { __tensor: 0, shape: [1.5] } })),
      /a tensor has shape \[1\.5\]/,
    ],
  ];
  it.each(broken)("%s: a CheckpointError naming the file", (_name, edit, pattern) => {
    const dir = fresh();
    edit(join(dir, "step-2"));
    expect(() => loadCheckpoint(join(dir, "step-2"))).toThrow(pattern);
  });
});
