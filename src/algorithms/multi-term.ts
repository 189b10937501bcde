/**
 * Combining reward terms before the estimator (algorithms spec §8.1). `sumThenNormalize` (default, the card: terms
 * are summed) is a weighted sum per completion; `normalizeThenSum` (GDPO, TRL multi_objective_aggregation) z-scores
 * each term within its group, sums with the weights, then standardises over the batch (sample std + 1e-4).
 * A completion with a null term of non-zero weight is null.
 */
import { zScore } from "./advantages.js";
import { ADVANTAGE_DEFAULTS } from "./advantage-options.js";

/** One term's values per group and completion, with its weight. */
export interface WeightedTerm {
  values: readonly (readonly (number | null)[])[];
  weight: number;
}

/** r_i = Σ_k w_k t_{i,k}; null when a weighted term is null. Zero-weight terms are ignored. */
export function sumThenNormalize(terms: readonly WeightedTerm[]): (number | null)[][] {
  const shape = terms[0]?.values ?? [];
  return shape.map((g, gi) =>
    g.map((_, i) => {
      let r = 0;
      for (const t of terms) {
        if (t.weight === 0) continue;
        const v = t.values[gi]![i]!;
        if (v === null) return null;
        r += t.weight * v;
      }
      return r;
    }),
  );
}

/**
 * GDPO advantages: z_{i,k} = zScore of term k within the group (§1.1 rules, sample std, ε), r̃_i = Σ_k w_k z_{i,k},
 * A_i = (r̃_i − mean_B r̃)/(std_B r̃ + 1e-4) with the sample std over the batch's scored completions. Nulls get 0.
 */
export function normalizeThenSum(terms: readonly WeightedTerm[], opts: { eps?: number } = {}): number[][] {
  const eps = opts.eps ?? ADVANTAGE_DEFAULTS.eps;
  const combined = sumThenNormalize(terms.map((t) => ({ ...t, weight: t.weight === 0 ? 0 : 1 }))); // null pattern only
  const z = terms.map((t) =>
    t.values.map((g, gi) =>
      zScore(
        g.map((v, i) => (combined[gi]![i] === null ? null : v)),
        { std: "sample", eps },
      ),
    ),
  );
  const weighted = (gi: number, i: number) => terms.reduce((a, t, k) => a + t.weight * z[k]![gi]![i]!, 0);
  const rt = combined.map((g, gi) => g.map((r, i) => (r === null ? null : weighted(gi, i))));
  const xs = rt.flat().filter((v): v is number => v !== null);
  const mean = xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const sd = xs.length > 1 ? Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1)) : 0;
  return rt.map((g) => g.map((v) => (v === null || xs.length < 2 ? 0 : (v - mean) / (sd + eps))));
}
