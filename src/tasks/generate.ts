/**
 * Deterministic example generation with disjoint train/test splits, shared by the built-in tasks.
 *
 * A problem's split is a pure function of its canonical key (FNV-1a hash mod 100 < testPercent → test), so train
 * and test can never share a problem, whatever the seeds and counts. Generation draws problems from a seeded
 * stream (the seed split by the split name) and keeps those that land in the requested split, without repeats.
 * When the difficulty settings hold fewer distinct problems than requested (found: no new one in STALL_DRAWS
 * draws), the train split repeats the distinct problems it found in order (harmless for training, where prompts
 * are sampled anyway), and the test split fails with an error naming the task: a held-out set must not repeat.
 */
import { Rng } from "../util/rng.js";
import { ConfigError } from "../util/errors.js";
import type { Example } from "./types.js";

/** Consecutive draws without a new problem after which the problem space counts as exhausted. */
export const STALL_DRAWS = 20_000;

/** Share of the problem space that belongs to the test split, in percent. */
export const TEST_PERCENT = 20;

/** A drawn problem: its canonical key (decides the split and uniqueness) and the example fields. */
export interface Drawn<Gold> {
  key: string;
  prompt: string;
  gold: Gold;
  goldCompletion: string;
}

/** FNV-1a 32-bit hash of a string. */
export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The split a canonical problem key belongs to. */
export function splitOf(key: string, testPercent = TEST_PERCENT): "train" | "test" {
  // Mix the hash once more so that keys differing in one trailing character spread evenly.
  const h = Math.imul(fnv1a(key) ^ 0x5bd1e995, 0x27d4eb2d) >>> 0;
  return h % 100 < testPercent ? "test" : "train";
}

/**
 * Draws `count` distinct problems of `split` with `draw(rng)`. Throws a ConfigError naming the task when the
 * problem space is too small for the request (after `count * 200 + 1000` draws).
 */
export function generateExamples<Gold>(
  taskName: string,
  split: "train" | "test",
  count: number,
  seed: number,
  draw: (rng: Rng) => Drawn<Gold>,
): Example<Gold>[] {
  if (split !== "train" && split !== "test")
    throw new ConfigError(`${taskName}: split must be "train" or "test", got ${String(split)}`);
  if (!Number.isInteger(count) || count < 0)
    throw new ConfigError(`${taskName}: count must be a non-negative integer, got ${count}`);
  const rng = new Rng(seed).split(`${taskName}/${split}`);
  const seen = new Set<string>();
  const out: Example<Gold>[] = [];
  for (let stall = 0; out.length < count; stall++) {
    if (stall >= STALL_DRAWS) {
      if (split === "test" || out.length === 0) {
        throw new ConfigError(
          `${taskName}: could only find ${out.length} distinct ${split} problems of ${count} requested; widen the difficulty options`,
        );
      }
      const distinct = out.length;
      for (let i = distinct; i < count; i++) out.push({ ...out[i % distinct]!, id: `${taskName}/${split}/${i}` });
      break;
    }
    const p = draw(rng);
    if (seen.has(p.key) || splitOf(p.key) !== split) continue;
    seen.add(p.key);
    stall = -1;
    out.push({
      id: `${taskName}/${split}/${out.length}`,
      prompt: p.prompt,
      gold: p.gold,
      goldCompletion: p.goldCompletion,
    });
  }
  return out;
}

/** A uniformly random integer with exactly `digits` decimal digits (1 digit: 0-9). */
export function randomWithDigits(rng: Rng, digits: number): number {
  if (digits <= 1) return rng.int(10);
  const lo = 10 ** (digits - 1);
  return lo + rng.int(9 * lo);
}
