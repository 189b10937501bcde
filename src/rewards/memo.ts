/**
 * A small bounded memo for rewards that run things (solver, kernel timing): the same completion, gold and options
 * within a group score once. An unscorable result caused by an infrastructure failure (worker crash, solver abort)
 * is not remembered, since it says nothing about the completion.
 */
import type { RewardResult } from "./types.js";

/** Wraps `evaluate` so identical (completion, gold, options) share one pending result; keeps the newest `size`. */
export function memoizeReward<G, O>(
  size: number,
  evaluate: (completion: string, gold: G, options: O) => Promise<RewardResult>,
) {
  const cache = new Map<string, Promise<RewardResult>>();
  return (completion: string, gold: G, options: O): Promise<RewardResult> => {
    const key = JSON.stringify([completion, gold, options]);
    let p = cache.get(key);
    if (!p) {
      p = evaluate(completion, gold, options);
      cache.set(key, p);
      void p.then((r) => {
        if (r.score === null && String(r.info?.reason ?? "").startsWith("infrastructure")) cache.delete(key);
      });
      if (cache.size > size) cache.delete(cache.keys().next().value!);
    }
    return p;
  };
}
