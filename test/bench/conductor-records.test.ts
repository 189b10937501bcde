/**
 * bench/conductor/records.ts: records name checkpoint workers by their weights' SHA-256 (so a pool rebuilt into
 * another folder with the same bytes still matches), and a made checkpoint is reused only under reuse, with equal
 * settings, and while its weights still hash as recorded; otherwise it is trained again and the record replaced.
 */
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { madeCheckpoint, recordedOptions, unweighedOptions, weightsHash } from "../../bench/conductor/records.js";
import type { ConductorInput } from "../../src/tasks/conductor.js";

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
