/**
 * Algorithm presets (spec §10) as partial recipes, derived from src/algorithms/presets.ts. A recipe
 * names one with `preset:` and its own fields win over the preset's. Fields not listed keep the section-0 defaults.
 *
 * Departure: `dapo`'s soft overlong punishment (§8.4) is `algorithm.overlong`, a reward term the trainer adds.
 */
import { PRESETS as ALGORITHM_PRESETS, type AlgorithmPresetName } from "../algorithms/presets.js";
import type { TrainConfigInput } from "./config.js";

/** Preset names, as `preset:` in a recipe accepts them (the algorithm presets of spec §10). */
export type PresetName = AlgorithmPresetName;

/**
 * Each preset as a partial recipe: the named-piece composition from `src/algorithms/presets.ts` (the one place a
 * preset is defined, with its sources), plus its group size where the paper sets one.
 */
export const PRESETS = Object.fromEntries(
  Object.entries(ALGORITHM_PRESETS).map(([name, p]) => [
    name,
    {
      algorithm: p.algorithm,
      ...("groupSize" in p ? { train: { groupSize: p.groupSize } } : {}),
    } as Partial<TrainConfigInput>,
  ]),
) as Record<PresetName, Partial<TrainConfigInput>>;

/** Deep-merges `over` onto `base`; a union member whose `type` changes is replaced, not merged. Arrays replace. */
export function mergeRecipe(base: unknown, over: unknown): unknown {
  if (!isPlain(base) || !isPlain(over)) return over === undefined ? base : over;
  if ("type" in over && "type" in base && over.type !== base.type) return over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = k in base ? mergeRecipe(base[k], v) : v;
  return out;
}

function isPlain(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}
