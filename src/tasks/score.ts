/**
 * Combining a task's weighted reward terms into one `RewardResult` (algorithms spec §8.1, `sumThenNormalize`).
 *
 * Each term is a registered reward; its unweighted score t_k enters the sum with weight w_k. A term with w_k = 0 is
 * computed and logged only. If any term with w_k ≠ 0 is null, the whole completion is null (never coerced to 0 or
 * 1); the per-term values that were scorable are still reported, so metrics can see which checker failed.
 */
import { rewards as defaultRegistry, type RewardRegistry } from "../rewards/registry.js";
import type { RewardInput, RewardResult } from "../rewards/types.js";
import type { RewardTerm } from "./types.js";

/** One term's outcome: its unweighted value (null when unscorable), weight and the reward's full result. */
export interface TermOutcome {
  name: string;
  value: number | null;
  weight: number;
  result: RewardResult;
}

/**
 * Weighted sum of already computed term results. `results[name]` is the reward's result for term `name`.
 * Returns `score` (null if a weighted term is null or missing), `terms` (unweighted values by term name, scorable
 * terms only) and `info.terms` (each term's info) plus `info.nullTerms`, and the earliest `firstErrorEnd` any term
 * reported (weight-0 terms included).
 */
export function scoreTerms(
  terms: readonly RewardTerm[],
  results: Readonly<Record<string, RewardResult | undefined>>,
): RewardResult {
  let total = 0;
  let isNull = false;
  const values: Record<string, number> = {};
  const infos: Record<string, unknown> = {};
  const nullTerms: string[] = [];
  let firstErrorEnd: number | undefined;
  for (const term of terms) {
    const r = results[term.name];
    // The earliest localised mistake of any term, weighted or not (a weight-0 term can still shape credit).
    if (r?.firstErrorEnd !== undefined && Number.isFinite(r.firstErrorEnd))
      firstErrorEnd = Math.min(firstErrorEnd ?? Infinity, r.firstErrorEnd);
    const v = r?.score ?? null;
    if (r?.info) infos[term.name] = r.info;
    if (v === null || !Number.isFinite(v)) {
      nullTerms.push(term.name);
      if (term.weight !== 0) isNull = true;
      continue;
    }
    values[term.name] = v;
    total += term.weight * v;
  }
  return {
    score: isNull ? null : total,
    terms: values,
    info: { terms: infos, ...(nullTerms.length ? { nullTerms } : {}) },
    ...(firstErrorEnd !== undefined ? { firstErrorEnd } : {}),
  };
}

/**
 * Runs every term's reward through the registry (which validates options and turns a throwing checker into a
 * null result; an unknown reward name or invalid options throw, since that is a recipe bug) and combines them with `scoreTerms`. `goldFor(term)` picks the gold each reward expects; by default
 * every term sees `input.gold`.
 */
export async function scoreWithTerms(
  terms: readonly RewardTerm[],
  input: RewardInput,
  opts: { registry?: RewardRegistry; goldFor?: (term: RewardTerm) => unknown } = {},
): Promise<RewardResult> {
  const registry = opts.registry ?? defaultRegistry;
  const results: Record<string, RewardResult> = {};
  for (const term of terms) {
    const gold = opts.goldFor ? opts.goldFor(term) : input.gold;
    // An unknown reward or invalid options throw (a recipe bug); a checker that throws gives null (registry).
    results[term.name] = await registry.score(term.reward, { ...input, gold }, term.options ?? {});
  }
  return scoreTerms(terms, results);
}

/** Per-term outcomes in term order, for reports that want the weights next to the values. */
export function termOutcomes(
  terms: readonly RewardTerm[],
  results: Readonly<Record<string, RewardResult>>,
): TermOutcome[] {
  return terms.map((t) => {
    const result = results[t.name] ?? { score: null, terms: {} };
    return { name: t.name, value: result.score, weight: t.weight, result };
  });
}
