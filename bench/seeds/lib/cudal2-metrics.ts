/**
 * Pure figures of the CUDA-L2 seed bench (bench/seeds/cudal2.ts): the speed-up a sampled kernel counts for, the
 * share of each taught kernel among samples, the rewarded training kernels the audit reruns, and the audit's count.
 *
 * A kernel counts for its measured speed-up S (the reward's `speedup` term: naive time / kernel time, paired and
 * interleaved) when every gate passes, and for 0 when any gate fails: a wrong kernel is worth nothing, however fast.
 */
import type { RolloutGroup } from "../../../src/rollout/types.js";
import { classifyKernel, TAUGHT } from "./cudal2-kernels.js";

/** One timed held-out sample. */
export interface KernelSample {
  text: string;
  /** 1 when every gate passed. */
  correct: number;
  /** Measured S (0 when a gate failed first). */
  speedup: number;
}

/** The speed-up a sample counts for: S when every gate passed, else 0. */
export function speedupOf(s: KernelSample): number {
  if (!Number.isFinite(s.speedup) || s.speedup < 0) throw new Error(`speedupOf: bad speed-up ${s.speedup}`);
  return s.correct === 1 ? s.speedup : 0;
}

/** Mean of a non-empty list. */
export function meanOf(xs: readonly number[]): number {
  if (xs.length === 0) throw new Error("meanOf: no values");
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Share of each taught kernel (and "other") among completions. */
export function kernelMix(texts: readonly string[]): Record<string, number> {
  const out: Record<string, number> = Object.fromEntries([...TAUGHT.map((t) => [t.name, 0]), ["other", 0]]);
  for (const t of texts) out[classifyKernel(t)]! += 1 / texts.length;
  return out;
}

/**
 * The distinct (completion, shape) pairs of a training step that the reward paid (speed term > 0), with their gold;
 * called before any control shuffle, so the reward is the kernel's own.
 */
export function rewardedKernels<G>(groups: readonly RolloutGroup[], goldOf: (exampleId: string) => G | undefined) {
  const seen = new Set<string>();
  const out: { text: string; gold: G }[] = [];
  for (const g of groups)
    for (const r of g.rollouts) {
      if (!((r.terms.speed ?? 0) > 0)) continue;
      const key = `${r.exampleId}\u0000${r.text}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const gold = goldOf(r.exampleId);
      if (gold === undefined) throw new Error(`rewardedKernels: no gold for ${r.exampleId}`);
      out.push({ text: r.text, gold });
    }
  return out;
}

/** The audit: rewarded kernels rerun with fresh inputs, and how many of them the rerun rejects. */
export function auditCount(reruns: readonly { correct: number }[]): { rerun: number; rejected: number } {
  return { rerun: reruns.length, rejected: reruns.filter((r) => r.correct !== 1).length };
}
