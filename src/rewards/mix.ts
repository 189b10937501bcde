/**
 * Weighted mixes of reward terms (VideoChat-R1 style per-task sums; spec §0.1 `score = Σ weight_i · term_i`, G6).
 * `combineTerms` merges already-computed results; `mixRewards` builds a new registered reward from parts.
 * A null part makes the mix null (never 0 or 1). `gateOnFormat` multiplies the accuracy parts by the format term.
 */
import { z } from "zod";
import type { RewardInput, RewardResult, RewardSpec } from "./types.js";

/** One weighted part of a mix. */
export interface MixPart {
  /** Term name prefix in the mixed result. */
  name: string;
  weight: number;
  result: RewardResult;
}

/** Σ weight·score over parts; terms are the parts' terms prefixed `name.`, plus each weighted part under `name`. */
export function combineTerms(parts: readonly MixPart[], opts: { gateOnFormat?: string } = {}): RewardResult {
  const terms: Record<string, number> = {};
  const info: Record<string, unknown> = {};
  let nullPart: string | null = null;
  for (const p of parts) {
    if (p.result.info) info[p.name] = p.result.info;
    if (p.result.score === null) nullPart ??= p.name;
    for (const [k, v] of Object.entries(p.result.terms)) terms[`${p.name}.${k}`] = v;
  }
  if (nullPart !== null) return { score: null, terms, info: { ...info, reason: `part "${nullPart}" is not scorable` } };
  const gate = opts.gateOnFormat ? (parts.find((p) => p.name === opts.gateOnFormat)?.result.score ?? 0) : 1;
  let score = 0;
  for (const p of parts) {
    const weighted = p.weight * p.result.score! * (opts.gateOnFormat && p.name !== opts.gateOnFormat ? gate : 1);
    terms[p.name] = weighted;
    score += weighted;
  }
  return { score, terms, info };
}

/** A part of a mixed reward spec: another reward, its weight and its options. */
export interface MixComponent {
  name: string;
  reward: RewardSpec<any, any>;
  weight: number;
  options?: unknown;
}

/** Builds a reward whose score is the weighted sum of its components (all scored on the same input). */
export function mixRewards(
  name: string,
  description: string,
  components: readonly MixComponent[],
  gateOnFormat?: string,
): RewardSpec<Record<string, unknown>, unknown> {
  return {
    name,
    description,
    options: z.record(z.string(), z.unknown()).default({}),
    maxScore: components.reduce((s, c) => s + c.weight * (c.reward.maxScore ?? 1), 0),
    async score(input: RewardInput, options) {
      const parts: MixPart[] = [];
      for (const c of components) {
        const opts = c.reward.options.parse({
          ...(c.options as object | undefined),
          ...((options[c.name] as object | undefined) ?? {}),
        });
        parts.push({ name: c.name, weight: c.weight, result: await c.reward.score(input, opts) });
      }
      return combineTerms(parts, gateOnFormat ? { gateOnFormat } : {});
    },
  };
}
