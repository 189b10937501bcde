/**
 * Training checkpoints: `checkpoints/step-N/` holds the model (saveModel: safetensors weights, config, tokenizer),
 * `optimizer.bin` + `optimizer.json` (the optimizer's state, typed arrays stored as raw little-endian float32),
 * and `state.json` (step, RNG state, trainer state). A checkpoint is written into a hidden temporary folder, a
 * `COMPLETE` marker is written last, and the folder is renamed into place, so a crash at any point leaves either
 * the previous checkpoints or a complete new one; resume picks the newest folder that has the marker.
 *
 * Deleting is crash-safe too: a checkpoint is first renamed to a hidden trash name (atomic), then deleted, so a
 * kill mid-delete leaves a trash folder, never a half-deleted `step-N`. `recoverCheckpoints` (run at every start
 * and after every prune) removes trash and unfinished temporary folders, and puts back a checkpoint that a kill
 * left moved aside while it was being replaced.
 */
import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { CheckpointError, fsyncDir, makeDirs, writeFileAtomic, type RngState } from "../util/index.js";
import { Tensor, tensor } from "../engine/index.js";
import { loadModel, saveModel } from "../models/checkpoint.js";
import type { Transformer } from "../models/transformer.js";
import type { Tokenizer } from "../models/tokenizer.js";
import type { ReplayState } from "../algorithms/replay-buffer.js";

const MARKER = "COMPLETE";
/** Hidden names of our own work in progress: `.<name>.<pid>.<kind>` (tmp: being written; old: being replaced). */
const LEFTOVER = /^\.(.+)\.(\d+)\.(tmp|old|trash)$/;
/** Folders written only by `saveCheckpoint`, so one without the marker is a leftover. */
const MARKED = /^(step-\d+|best)$/;

/** Test hook: called at each point where a kill would leave the disk in a distinct state. */
export type KillPoint = (point: "written" | "movedAside" | "renamed" | "trashed") => void;

/** Trainer-side state saved with each checkpoint. */
export interface TrainerState {
  /** Last completed RL step. */
  step: number;
  /** The run's RNG position after that step. */
  rng: RngState;
  /** Current KL coefficient (changes under the adaptive controller). */
  beta: number;
  /** Best held-out pass@1 so far and its step (keep-best). */
  best: { score: number; step: number } | null;
  /** Cumulative counters carried across resume (tokens, samples, nulls). */
  counters: Record<string, number>;
  /** The experience-replay buffer (ExGRPO, `algorithm.replay`), so a resumed run replays the same answers. */
  replay?: ReplayState;
  /**
   * The metrics of `step`, kept so that a crash between writing this checkpoint and appending its metrics line
   * loses nothing: resume writes the line if metrics.jsonl lacks it.
   */
  stepMetrics?: Record<string, number>;
}

/** What a loaded checkpoint gives back. */
export interface LoadedCheckpoint {
  dir: string;
  model: Transformer;
  tokenizer: Tokenizer;
  optimizerState: unknown;
  state: TrainerState;
}

/** Writes `checkpoints/<name>/` atomically (name "step-N" or "best"); an existing folder of that name is replaced. */
export function saveCheckpoint(
  checkpointsDir: string,
  name: string,
  parts: { model: Transformer; tokenizer: Tokenizer; optimizerState: unknown; state: TrainerState },
  killPoint: KillPoint = () => {},
): string {
  makeDirs(checkpointsDir);
  const final = join(checkpointsDir, name);
  const tmp = join(checkpointsDir, `.${name}.${process.pid}.tmp`);
  rmSync(tmp, { recursive: true, force: true });
  makeDirs(tmp);
  saveModel(tmp, parts.model, parts.tokenizer);
  const { json, bytes } = encodeState(parts.optimizerState);
  writeFileAtomic(join(tmp, "optimizer.bin"), bytes);
  writeFileAtomic(join(tmp, "optimizer.json"), JSON.stringify(json));
  writeFileAtomic(join(tmp, "state.json"), JSON.stringify(parts.state, null, 2));
  writeFileAtomic(join(tmp, MARKER), `${parts.state.step}\n`);
  killPoint("written");
  // Move the old folder aside before the rename so the new one lands atomically even when replacing.
  const old = join(checkpointsDir, `.${name}.${process.pid}.old`);
  if (existsSync(final)) renameSync(final, old);
  killPoint("movedAside");
  renameSync(tmp, final);
  fsyncDir(checkpointsDir);
  killPoint("renamed");
  if (existsSync(old)) removeDir(checkpointsDir, `.${name}.${process.pid}.old`, killPoint);
  return final;
}

/** Step numbers of the complete `step-N` checkpoints, ascending. */
export function completeSteps(checkpointsDir: string): number[] {
  if (!existsSync(checkpointsDir)) return [];
  return readdirSync(checkpointsDir)
    .map((n) => /^step-(\d+)$/.exec(n))
    .filter((m): m is RegExpExecArray => m !== null && existsSync(join(checkpointsDir, m[0], MARKER)))
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
}

/** The newest complete `step-N` folder, or null. */
export function latestCheckpoint(checkpointsDir: string): string | null {
  const steps = completeSteps(checkpointsDir);
  return steps.length ? join(checkpointsDir, `step-${steps[steps.length - 1]}`) : null;
}

/** Deletes all but the newest `keep` complete step checkpoints (crash-safely), then any leftovers. */
export function pruneCheckpoints(checkpointsDir: string, keep: number, killPoint: KillPoint = () => {}): void {
  const steps = completeSteps(checkpointsDir);
  for (const s of steps.slice(0, Math.max(0, steps.length - keep))) removeDir(checkpointsDir, `step-${s}`, killPoint);
  recoverCheckpoints(checkpointsDir);
}

/**
 * Cleans what a killed process left in `checkpointsDir`: trash and temporary folders are deleted; a folder moved
 * aside while being replaced comes back if its replacement never landed; a `step-N` or `best` folder without the
 * marker (half-deleted by an older version) is deleted. Returns the names it removed or restored.
 */
export function recoverCheckpoints(checkpointsDir: string): string[] {
  if (!existsSync(checkpointsDir)) return [];
  const done: string[] = [];
  for (const n of readdirSync(checkpointsDir)) {
    const m = LEFTOVER.exec(n);
    const orphan = m !== null && m[3] === "old" && !existsSync(join(checkpointsDir, m[1]!));
    if (orphan && existsSync(join(checkpointsDir, n, MARKER))) {
      // the replacement never landed: put the old one back
      renameSync(join(checkpointsDir, n), join(checkpointsDir, m![1]!));
      fsyncDir(checkpointsDir);
      done.push(n);
    } else if (m || (MARKED.test(n) && !existsSync(join(checkpointsDir, n, MARKER)))) {
      removeDir(checkpointsDir, n);
      done.push(n);
    }
  }
  return done;
}

/** Renames `checkpointsDir/name` to a trash name, then deletes it: a kill leaves trash, never half a checkpoint. */
function removeDir(checkpointsDir: string, name: string, killPoint: KillPoint = () => {}): void {
  let trash = join(checkpointsDir, name);
  if (!name.endsWith(".trash")) {
    trash = join(checkpointsDir, `.${name}.${process.pid}.trash`);
    rmSync(trash, { recursive: true, force: true });
    renameSync(join(checkpointsDir, name), trash);
    fsyncDir(checkpointsDir);
  }
  killPoint("trashed");
  rmSync(trash, { recursive: true, force: true });
}

/** Loads a checkpoint folder written by `saveCheckpoint`. */
export function loadCheckpoint(dir: string): LoadedCheckpoint {
  if (!existsSync(join(dir, MARKER)))
    throw new CheckpointError(`checkpoint ${dir}: no ${MARKER} marker (incomplete or not a training checkpoint)`);
  const { model, tokenizer } = loadModel(dir);
  const json = readCheckpointJson(join(dir, "optimizer.json"));
  let bytes: Buffer;
  try {
    bytes = readFileSync(join(dir, "optimizer.bin"));
  } catch (err) {
    throw new CheckpointError(`checkpoint ${dir}: cannot read optimizer.bin`, { cause: err });
  }
  const state = readCheckpointJson(join(dir, "state.json")) as TrainerState;
  if (typeof state !== "object" || state === null || !Number.isSafeInteger(state.step) || state.step < 0) {
    throw new CheckpointError(`${join(dir, "state.json")}: not a trainer state (no non-negative integer "step")`);
  }
  return { dir, model, tokenizer, optimizerState: decodeState(json, bytes, join(dir, "optimizer.bin")), state };
}

/** A JSON file of a checkpoint; unreadable or invalid JSON is a CheckpointError naming it. */
function readCheckpointJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new CheckpointError(`${path}: missing or not valid JSON`, { cause: err });
  }
}

/** True when `dir` is a training checkpoint (has the completion marker). */
export function isTrainingCheckpoint(dir: string): boolean {
  return existsSync(join(dir, MARKER));
}

// ------------------------------------------------------------------ state codec: JSON with typed arrays in a blob

/** Splits a state object into JSON and one float32 blob (Float32Array and Tensor leaves go to the blob). */
export function encodeState(state: unknown): { json: unknown; bytes: Uint8Array } {
  const chunks: Float32Array[] = [];
  let offset = 0;
  const put = (a: Float32Array): number => {
    chunks.push(a);
    const at = offset;
    offset += a.length;
    return at;
  };
  const walk = (x: unknown): unknown => {
    if (x instanceof Float32Array) return { __f32: put(x), length: x.length };
    if (x instanceof Tensor) return { __tensor: put(x.data), shape: [...x.shape] };
    if (ArrayBuffer.isView(x)) {
      const a = Float32Array.from(x as unknown as ArrayLike<number>);
      return { __f32: put(a), length: a.length };
    }
    if (Array.isArray(x)) return x.map(walk);
    if (x !== null && typeof x === "object") return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, walk(v)]));
    return x;
  };
  const json = walk(state);
  const all = new Float32Array(offset);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return { json, bytes: new Uint8Array(all.buffer) };
}

/** Inverse of `encodeState`; a reference outside the blob is a CheckpointError naming `source`. */
export function decodeState(json: unknown, bytes: Uint8Array, source = "optimizer state"): unknown {
  if (bytes.byteLength % 4 !== 0) {
    throw new CheckpointError(`${source}: ${bytes.byteLength} bytes is not a whole number of float32 values`);
  }
  const all = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const count = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
  const span = (at: unknown, n: unknown): Float32Array => {
    if (!count(at) || !count(n) || at + n > all.length) {
      const where = `[${String(at)}, +${String(n)})`;
      throw new CheckpointError(`${source}: values ${where} lie outside the ${all.length} stored values`);
    }
    return all.slice(at, at + n);
  };
  const walk = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(walk);
    if (x !== null && typeof x === "object") {
      const o = x as Record<string, unknown>;
      if (o.__f32 !== undefined) return span(o.__f32, o.length);
      if (o.__tensor !== undefined) {
        const shape = o.shape;
        if (!Array.isArray(shape) || !shape.every(count)) {
          throw new CheckpointError(`${source}: a tensor has shape ${JSON.stringify(shape)}`);
        }
        return tensor(
          span(
            o.__tensor,
            shape.reduce((a: number, b: number) => a * b, 1),
          ),
          shape,
        );
      }
      return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, walk(v)]));
    }
    return x;
  };
  return walk(json);
}
