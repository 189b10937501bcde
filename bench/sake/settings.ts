/**
 * Settings of `npm run bench:sake` (bench/sake.ts): the policy, the SFT start on gold trajectories, the RL arm, its
 * control and the ablation without the filtering turn, and the job records the runner and its jobs
 * (bench/sake/job.ts) exchange: recipes/sake.yaml's model on a larger graph, so that the held-out half has enough
 * questions about unseen drugs, with sizes tuned on the tune split (docs/multi-turn.md).
 */
import { startKey } from "../harness/arms.js";
import { join } from "node:path";
import { splitOf } from "../../src/tasks/generate.js";

/** The policy of recipes/sake.yaml: a character-level Llama (d 96, 3 layers). */
export const MODEL = {
  type: "new" as const,
  arch: "llama" as const,
  dModel: 96,
  nLayers: 3,
  nHeads: 4,
  nKvHeads: 2,
  maxSeqLen: 384,
  tokenizer: "char" as const,
};

/** The graph: 12 drug classes of 8 drugs, so about 19 drugs are held out (37 answerable yes-questions, 74 in all). */
export const GRAPH = { drugClasses: 12, drugsPerClass: 8 };
/** The task options of an arm: SAKE's three turns, or the ablation without the filtering turn. */
export const taskOptions = (filterTurn: boolean) => ({ graph: GRAPH, preset: "sake3b" as const, filterTurn });
/**
 * The SFT start's gold trajectories come from the first TRAIN_EXAMPLES train questions (1,434 distinct prompts), the
 * 984 of them in `inSftHalf`.
 */
export const TRAIN_EXAMPLES = 2000;
/**
 * RL arms draw from the first RL_TRAIN_EXAMPLES (4,575 distinct prompts), so most prompts RL trains on were never in
 * SFT: with RL on SFT's own 2,000, a start that had seen them ten times answered 98% of them and RL had nothing
 * left to learn (docs/multi-turn.md, the 1,200-step probe).
 */
export const RL_TRAIN_EXAMPLES = 8000;
/** The hash that picks the SFT half; part of the start's key, so a changed split never reuses a start. */
const SFT_HALF = { salt: "sake-sft", percent: 50 };
/**
 * The train questions SFT learns from: those whose drug, as the question names it, falls in the SFT half of a hash.
 * The other half is asked about only in RL, so RL trains on what the held-out questions test (naming and copying a
 * drug the start was never asked about) instead of on drugs SFT already answers (docs/multi-turn.md).
 */
export function inSftHalf(prompt: string): boolean {
  const drug = /^Q: does (\S+) /.exec(prompt)?.[1];
  if (drug === undefined) throw new Error(`bench:sake: no drug in the prompt ${JSON.stringify(prompt)}`);
  return splitOf(`${SFT_HALF.salt}:${drug}`, SFT_HALF.percent) === "train";
}
/** Completion budget: three turns and two tool answers (the gold is at most about 310 characters). */
export const MAX_TOKENS = 320;

const num = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);

/** Sizes (env overrides for tuning on other seeds or BENCH_SPLIT=tune: BENCH_SAKE_LR, _STEPS, _SFT_STEPS). */
export function sizes(smoke: boolean) {
  if (smoke) return { sftSteps: 20, steps: 2, promptsPerStep: 2, groupSize: 4, lr: 1e-3, evalSamples: 1, smoke };
  return {
    // Tuned on the tune split, seed 0 (docs/multi-turn.md): 1,500 SFT steps on the SFT half give a start at about 81%
    // greedy EM; RL at lr 2e-4 for 100 steps took it to 97% (lr 1e-4: +2.6, before unanswerable questions were dropped).
    // 250 RL steps since `final` seed 1 gained only 6.6 points in 100: on the tune split seed 1 gained 26.4 in 250.
    sftSteps: num("BENCH_SAKE_SFT_STEPS", 1500),
    steps: num("BENCH_SAKE_STEPS", 250),
    promptsPerStep: 8,
    groupSize: 8,
    lr: num("BENCH_SAKE_LR", 2e-4),
    /** Samples per question at the sampled decodings. */
    evalSamples: 2,
    smoke,
  };
}

/** One job: a seed's SFT start (with or without the filtering turn), or an RL arm from it. */
export interface SakeJob {
  kind: "sft" | "rl" | "control";
  filterTurn: boolean;
  seed: number;
  dir: string;
  startDir: string;
  split: "tune" | "final";
  sizes: ReturnType<typeof sizes>;
}

/** Held-out evaluation of one model. */
export interface SakeEval {
  /** EM at every decoding of bench/harness/decoding.ts (fractions). */
  pass: Record<string, number>;
  /** Greedy: mean completion tokens per question (model and tool tokens), and the share with full format credit. */
  tokensPerQuestion: number;
  formatRate: number;
  questions: number;
}

/** What a job reports. */
export interface SakeResult extends SakeJob {
  eval: SakeEval;
  trainSeconds: number;
}

/** The start's folder, keyed by the settings it depends on and the source hash. */
export function startDirOf(workDir: string, seed: number, filterTurn: boolean, smoke: boolean, source: string): string {
  const key = startKey(
    { MODEL, GRAPH, filterTurn, TRAIN_EXAMPLES, SFT_HALF, sft: sizes(smoke).sftSteps, smoke },
    source,
  );
  return join(workDir, `start-${filterTurn ? "filter" : "nofilter"}-${seed}-${key}`);
}
