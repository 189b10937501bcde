/**
 * Kernel speed reward, CPU edition (rewards spec §10, after CUDA-L2 arXiv eq. 2–3 and `deepreinforce-ai/CUDA-L2`).
 *
 *   any gate fails (static screen, correctness, anti-cheat, per-call limit)  →  score = gateFailScore (−1)
 *   flagged suspicious, or the pay rule says "noise"  →  score = 0 − lengthPenaltyCoef · lengthPenalty
 *   otherwise  →  score = clip(S − 1, −0.9, capSpeedup − 1) − lengthPenaltyCoef · lengthPenalty
 *
 * The pay rule (significance.ts, issue 11) pays S only when it is distinguishable from 1: the seeded bootstrap bound
 * of the candidate's median speed-up over two baseline isolates must clear a dead band of at least `deadBand` and at
 * least the baseline-against-baseline difference measured in the same evaluation. Every evaluation draws a fresh
 * input seed (node:crypto) unless `seed` is set, so no kernel can predict its inputs; the seed is reported in info.
 *
 * S is the aggregate speedup over the naive baseline (`meanOfRatios` by default); lengthPenalty is the kernel
 * source length in units of `lengthUnitChars`. Departure from the paper (eq. 3): correctness is a gate, not a
 * subtracted error penalty, so a wrong kernel (−1) never outscores a slow correct one (≥ −0.9).
 * The completion's kernel is the last fenced ```js block after the last </think> (G3, G5); it must define
 * `function matmul(A, B, C, m, n, k)`. The evaluation runs in a reward pool worker under the "timing" lock, one
 * timing job per machine (§10.2 #7). `kernel-speed` gives the score; `kernel-correct` gives the gate (0/1) from the
 * same memoised evaluation.
 */
import { randomInt } from "node:crypto";
import { z } from "zod";
import { memoizeReward } from "../memo.js";
import { rewards } from "../registry.js";
import type { RewardResult, RewardSpec } from "../types.js";
import { jobFault, moduleUrl, sharedPool } from "../sandbox/pool.js";
import { BASELINES, NAIVE_MATMUL } from "./baselines.js";
import type { KernelJobArgs } from "./job.js";
import { NAIVE_MATMUL_WAT } from "./wat.js";
import { PROFILES, type KernelEvaluation } from "./types.js";

/** Gold of a kernel example: the shape, dtype and baseline kernel id. */
export interface KernelGold {
  m: number;
  n: number;
  k: number;
  dtype: "float32";
  baseline: string;
}

/** Options of the kernel rewards. */
export const kernelOptions = z
  .object({
    profile: z
      .enum(["test", "train", "paper"])
      .default("train")
      .describe("timing profile: paper = 10 s warm-up + 30 s"),
    aggregate: z.enum(["meanOfRatios", "ratioOfMeans", "medianOfRatios"]).default("meanOfRatios"),
    capSpeedup: z.number().min(1).default(10),
    gateFailScore: z.number().default(-1).describe("score when any gate fails"),
    lengthPenaltyCoef: z.number().min(0).default(0).describe("β: weight of the length penalty"),
    lengthUnitChars: z.number().positive().default(1000).describe("lengthPenalty = source chars / this"),
    maxSourceChars: z.number().int().positive().default(65_536),
    deadBand: z.number().min(0).max(1).default(0.1).describe("speed-ups within [1/(1+b), 1+b] are noise: paid 0"),
    payConfidence: z.number().gt(0.5).lt(1).default(0.95).describe("one-sided confidence of the bootstrap bound"),
    bootstrapResamples: z.number().int().min(100).max(100_000).default(2000).describe("bootstrap resamples (seeded)"),
    structuralProbes: z
      .boolean()
      .default(true)
      .describe("probe zero/identity/sparse operands, other shapes, shared buffers"),
    allowWasm: z.boolean().default(false).describe("grant WebAssembly to a JS kernel (wasm-kernel tasks)"),
    language: z
      .enum(["js", "wat"])
      .default("js")
      .describe("kernel language: a ```js function, or a ```wat module (wasm-kernel tasks)"),
    seed: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("input seed; unset (the default) draws a fresh unpredictable seed per evaluation"),
  })
  .strict();

/** Options after defaults. */
export type KernelOptions = z.infer<typeof kernelOptions>;

/** The kernel source of a completion: the last fenced js (or wat) block after the last </think>. */
export function extractKernel(completion: string, language: "js" | "wat" = "js"): string | null {
  const cut = completion.lastIndexOf("</think>");
  const region = cut >= 0 ? completion.slice(cut + "</think>".length) : completion;
  const fence =
    language === "wat"
      ? /```[ \t]*(?:wat|wasm)[ \t]*\r?\n([\s\S]*?)```/g
      : /```[ \t]*(?:js|javascript)[ \t]*\r?\n([\s\S]*?)```/g;
  const blocks = [...region.matchAll(fence)];
  return blocks.length ? (blocks.at(-1)![1] ?? null) : null;
}

const memoEvaluate = memoizeReward(64, evaluate);

/** Scores one completion (memoised per completion, gold and options). */
export function scoreKernel(
  completion: string,
  gold: KernelGold,
  options: Partial<KernelOptions> = {},
): Promise<RewardResult> {
  const o = kernelOptions.parse(options);
  return memoEvaluate(completion, gold, o);
}

function validGold(g: KernelGold): string | null {
  for (const d of ["m", "n", "k"] as const)
    if (!Number.isInteger(g[d]) || g[d] < 1 || g[d] > 4096) return `gold.${d} must be an integer in [1, 4096]`;
  if (g.dtype !== "float32") return `gold.dtype must be "float32", got ${String(g.dtype)}`;
  if (!BASELINES[g.baseline]) return `unknown baseline "${g.baseline}"`;
  return null;
}

async function evaluate(completion: string, gold: KernelGold, o: KernelOptions): Promise<RewardResult> {
  const bad = validGold(gold);
  if (bad) return { score: null, terms: {}, info: { reason: bad } };
  const source = extractKernel(completion, o.language);
  const fail = (reason: string, extra: Record<string, unknown> = {}): RewardResult => ({
    score: o.gateFailScore,
    terms: { correct: 0, speedup: 0, lengthPenalty: 0 },
    info: { reason, ...extra },
  });
  if (source === null) return fail(`no fenced \`\`\`${o.language} block with the kernel`);
  if (source.length > o.maxSourceChars)
    return fail(`kernel source is ${source.length} chars > cap ${o.maxSourceChars}`);
  const profile = PROFILES[o.profile];
  const seed = o.seed ?? randomInt(0, 2 ** 47); // fresh per evaluation: the kernel cannot predict its inputs
  const args: KernelJobArgs = {
    source,
    shape: { m: gold.m, n: gold.n, k: gold.k },
    baseline: gold.baseline,
    harness: {
      profile,
      seed,
      aggregate: o.aggregate,
      capSpeedup: o.capSpeedup,
      allowWasm: o.allowWasm,
      structuralProbes: o.structuralProbes,
      significance: { deadBand: o.deadBand, confidence: o.payConfidence, resamples: o.bootstrapResamples },
    },
    language: o.language,
  };
  const probeMs = (profile.exactIters + profile.toleranceIters + 24) * 2000;
  const [out] = await sharedPool().runAll<KernelEvaluation>([
    {
      module: moduleUrl("../kernel/job"),
      fn: "evaluateKernelJob",
      args,
      wallMs: 3 * (profile.warmupMs + profile.measureMs) + probeMs + 30_000,
      exclusive: "timing",
    },
  ]);
  if (!out) return { score: null, terms: {}, info: { reason: "infrastructure: the pool returned no outcome" } };
  if (!out.ok) {
    if (jobFault(out)) return fail(out.error); // overran, over memory, or crashed its worker process
    return { score: null, terms: {}, info: { reason: `infrastructure: ${out.error}` } };
  }
  const ev = out.value;
  if (ev.infraError)
    return { score: null, terms: {}, info: { reason: `infrastructure: ${ev.infraError}`, checks: ev.checks } };
  const lengthPenalty = source.length / o.lengthUnitChars;
  if (!ev.correct || ev.speedup === null) {
    const failed = ev.checks.find((c) => !c.ok);
    return {
      ...fail(failed ? `${failed.name}: ${failed.detail ?? ""}` : "a gate failed", { checks: ev.checks }),
      terms: { correct: 0, speedup: 0, lengthPenalty },
    };
  }
  const S = ev.speedup;
  const { verdict, paid } = speedScore(ev, o.capSpeedup);
  const score = paid - o.lengthPenaltyCoef * lengthPenalty;
  return {
    score,
    terms: { correct: 1, speedup: S, lengthPenalty },
    info: {
      verdict,
      significance: ev.significance,
      seed: ev.seed,
      suspiciousReasons: ev.suspiciousReasons,
      checks: ev.checks,
      ci95: ev.ci95,
      iterations: ev.iterations,
      verifiedCalls: ev.verifiedCalls,
      baselineMedianMs: ev.baselineMedianMs,
      candidateMedianMs: ev.candidateMedianMs,
      overheadMs: ev.overheadMs,
      suspicious: ev.suspicious,
      machine: ev.machine,
      ...(ev.baselineMedianMs !== null && ev.baselineMedianMs < 1
        ? { warning: "baseline call under 1 ms: pick a larger shape (§10.2 #5)" }
        : {}),
    },
  };
}

/**
 * The speed part of the score of a correct kernel: clip(S − 1, −0.9, capSpeedup − 1) when the pay rule calls it
 * faster or slower (with the sign of the verdict), 0 when it is noise, and 0 when it is flagged suspicious.
 */
export function speedScore(
  ev: Pick<KernelEvaluation, "speedup" | "significance" | "suspicious">,
  capSpeedup: number,
): { verdict: "faster" | "slower" | "noise" | "suspicious"; paid: number } {
  const verdict = ev.suspicious ? "suspicious" : (ev.significance?.verdict ?? "noise");
  const S = ev.speedup ?? 1;
  const raw = verdict === "faster" ? Math.max(S - 1, 0) : verdict === "slower" ? Math.min(S - 1, 0) : 0;
  return { verdict, paid: Math.min(Math.max(raw, -0.9), capSpeedup - 1) };
}

const EXAMPLE_GOLD: KernelGold = { m: 32, n: 32, k: 32, dtype: "float32", baseline: "naive" };

/** The completion that submits the naive kernel (correct 1; for js, S ≈ 1 and score ≈ 0). */
export function naiveKernelCompletion(language: "js" | "wat" = "js"): string {
  const src = language === "wat" ? NAIVE_MATMUL_WAT : NAIVE_MATMUL;
  return `<think>The naive triple loop is correct for any shape.</think>\n\`\`\`${language}\n${src}\n\`\`\``;
}

/** `kernel-speed`: the speed score (−1 on any failed gate). */
export const kernelSpeedReward: RewardSpec<KernelOptions, KernelGold> = {
  name: "kernel-speed",
  description:
    "CUDA-L2 style: time a JS matmul kernel against the naive baseline in separate isolates; clip(S-1) or -1 on any gate",
  options: kernelOptions,
  score: ({ completion, gold }, o) => scoreKernel(completion, gold, o),
  exampleGold: EXAMPLE_GOLD,
};

/** `kernel-correct`: 1 when every correctness and anti-cheat gate passes. */
export const kernelCorrectReward: RewardSpec<KernelOptions, KernelGold> = {
  name: "kernel-correct",
  description: "CUDA-L2 style: 1 if the kernel passes every correctness and anti-cheat gate, else 0",
  options: kernelOptions,
  async score({ completion, gold }, o) {
    const r = await scoreKernel(completion, gold, o);
    return {
      score: r.score === null ? null : (r.terms.correct ?? 0),
      terms: r.terms,
      ...(r.info ? { info: r.info } : {}),
    };
  },
  // No `goldCompletion` here: the registry-wide gold test runs default options, and a default ("train") timing
  // profile takes ~8 s. test/kernel/ checks that the naive kernel passes every gate.
  exampleGold: EXAMPLE_GOLD,
  maxScore: 1,
};

for (const spec of [kernelSpeedReward, kernelCorrectReward]) if (!rewards.has(spec.name)) rewards.register(spec);
