/**
 * Settings of `npm run bench:sima` (bench/sima.ts): the policy, the SFT start (solver trajectories of four of the
 * five task kinds, mixed with arithmetic so that the policy has an unrelated skill whose change RL can be charged
 * with), the RL arm and its control, and the job records the runner and its jobs (bench/sima/job.ts) exchange.
 * Not tuned yet: these are recipes/sima.yaml's values (docs/multi-turn.md).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startKey } from "../harness/arms.js";

/**
 * The world's byte-level BPE (scripts/make-sima-tokenizer.py, trained on the SFT mix's text): a command is 3 to 8
 * tokens ("take red key\n" is 4) where the char tokenizer needed one per character, so an episode is about a third as
 * long. With the char tokenizer the policy garbled words and confused the colours and directions it had to copy from
 * the observation (docs/multi-turn.md).
 */
const TOKENIZER_FILE = "assets/tokenizers/sima-bpe/tokenizer.json";

/** The policy: a GPT (about 0.85M parameters) over the world's BPE, whose context holds a whole 8-command episode. */
export const MODEL = {
  type: "new" as const,
  arch: "gpt2" as const,
  dModel: 128,
  nLayers: 4,
  nHeads: 4,
  maxSeqLen: 448,
  tokenizer: { file: resolve(import.meta.dirname, "../..", TOKENIZER_FILE) },
};

/** The world tasks (RL on every kind); SFT sees SFT_KINDS only, so `answer` is the kind it never showed. */
export const SIMA = { name: "sima", options: { maxSteps: 8, minSteps: 3, maxRooms: 4 }, trainExamples: 3000 };
export const SFT_KINDS = ["reach", "fetch", "open", "place"] as const;
/** The unrelated skill: arithmetic with a boxed answer, through the same tokenizer. */
export const ARITHMETIC = { name: "arithmetic", options: {}, trainExamples: 3000, maxTokens: 24 };
/**
 * Completion budget of an episode in BPE tokens: 8 commands with their observations (golds of 6,000 drawn tasks take
 * at most 238 tokens, 81 on average; prompts at most 64), with room for invalid commands and their messages.
 */
export const MAX_TOKENS = 360;

const num = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);

/** Sizes (env overrides for tuning on other seeds or BENCH_SPLIT=tune: BENCH_SIMA_LR, _STEPS, _SFT_STEPS). */
export function sizes(smoke: boolean) {
  if (smoke)
    return {
      sftSteps: 20,
      steps: 2,
      promptsPerStep: 2,
      groupSize: 4,
      lr: 1e-3,
      evalExamples: 6,
      evalSamples: 1,
      mix: 0.3,
    };
  return {
    sftSteps: num("BENCH_SIMA_SFT_STEPS", 1500),
    steps: num("BENCH_SIMA_STEPS", 100),
    promptsPerStep: 8,
    groupSize: 8,
    lr: num("BENCH_SIMA_LR", 5e-5),
    /** Held-out episodes per evaluation (the `final` or `tune` half of the test split). */
    evalExamples: 100,
    /** Samples per episode at the sampled decodings. */
    evalSamples: 2,
    /** Share of arithmetic examples in the SFT mix. */
    mix: 0.3,
  };
}

/** One job: a seed's SFT start, or an RL arm from it. */
export interface SimaJob {
  kind: "sft" | "rl" | "control";
  seed: number;
  dir: string;
  startDir: string;
  split: "tune" | "final";
  sizes: ReturnType<typeof sizes>;
}

/** Held-out success of one model: pass@1 per decoding, and at greedy per composition and in all. */
export interface SimaEval {
  /** pass@1 at every decoding of bench/harness/decoding.ts (fractions). */
  pass: Record<string, number>;
  /** Greedy success per composition ("kind:object"): successes and episodes. */
  byComposition: Record<string, { ok: number; n: number }>;
  /** Greedy arithmetic pass@1 on held-out questions. */
  arithmetic: number;
  /** Greedy episodes: mean commands, mean invalid commands, share ended by the step limit. */
  turnsMean: number;
  errorsMean: number;
}

/** What a job reports. */
export interface SimaResult extends SimaJob {
  eval: SimaEval;
  trainSeconds: number;
}

/** The start's folder, keyed by the settings it depends on and the source hash. */
export function startDirOf(workDir: string, seed: number, smoke: boolean, source: string): string {
  // the tokenizer by its file's content, not its absolute path (the same key in every clone)
  const tokenizer = createHash("sha256").update(readFileSync(MODEL.tokenizer.file)).digest("hex");
  const model = { ...MODEL, tokenizer };
  const key = startKey({ MODEL: model, SIMA, SFT_KINDS, ARITHMETIC, sft: sizes(smoke).sftSteps, smoke }, source);
  return join(workDir, `start-${seed}-${key}`);
}
