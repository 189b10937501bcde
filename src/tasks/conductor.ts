/**
 * The Conductor task (issue 13; concept card, Conductor part; arXiv 2512.04388 §3.1): the policy is a planner that
 * writes a plan for a pool of workers (three literal lists: `model_id`, `subtasks`, `access_list`); the plan's chain
 * is executed and the `conductor-plan` reward reads the chain's final answer: 1 correct, 0.5 parses but wrong, 0
 * unparsable. The questions need two or three skills chained (./conductor-skills.ts).
 *
 * Tasks know nothing of models, so the chain runner is injected: `createConductorTask(options, runChain)`. The
 * rollout layer (src/rollout/conductor/) builds the worker pool from `options.workers`, runs the chain and registers
 * the task as "conductor". The planner's completion is only the plan, so its tokens are the only trained tokens;
 * worker outputs live in `rewardInfo.chain` (shown in samples.jsonl), never in the completion.
 *
 * Departures: the final answer must be the last step's whole output, an integer (no extraction from prose, so a
 * worker that lists several numbers earns nothing). A chain that fails has no answer. When the failure is the
 * infrastructure's (a worker's HTTP error or malformed server reply, or a call that timed out: rewards spec §8) the
 * completion is not scorable (null, counted by the trainer) under `onInfraFailure: "null"`, the default; with
 * "parse" it earns the parse credit 0.5 like a worker that answers badly or not at all (an empty or wrong answer, or
 * a self-call past the depth limit), so a broken worker costs that rollout and not the run.
 */
import { z } from "zod";
import { ConfigError } from "../util/errors.js";
import { parsePlan, type Plan } from "../rewards/plan.js";
import { answerRegion } from "../rewards/text/region.js";
import { defineTask } from "./define-task.js";
import { scoreWithTerms } from "./score.js";
import type { Example, Task } from "./types.js";
import {
  drawQuestion,
  formatPlan,
  goldPlan,
  planText,
  QUESTION_KINDS,
  SKILL_DESCRIPTIONS,
  SKILL_NAMES,
  type QuestionKind,
  type SkillName,
} from "./conductor-skills.js";

/** Where a worker's answers come from: an exact skill program, a built-in checkpoint, or an OpenAI-compatible API. */
export const workerSource = z.discriminatedUnion("type", [
  z.object({ type: z.literal("program"), skill: z.enum(SKILL_NAMES) }).strict(),
  z
    .object({
      type: z.literal("checkpoint"),
      path: z.string().min(1).describe("a directory written by saveModel (rlvr's checkpoint format)"),
      temperature: z.number().min(0).default(0).describe("0 = greedy, so a chain is reproducible"),
    })
    .strict(),
  z
    .object({
      type: z.literal("openai"),
      baseUrl: z.string().url().describe("e.g. http://localhost:8000/v1 (POST {baseUrl}/chat/completions)"),
      model: z.string().min(1),
      apiKeyEnv: z.string().optional().describe("environment variable holding the API key (never the key itself)"),
      temperature: z.number().min(0).default(0),
    })
    .strict(),
]);

/** One worker of the pool. */
export const workerOptions = z
  .object({
    id: z.string().min(1).max(40).describe("the worker's name, shown to the planner beside its index"),
    description: z.string().min(1).max(200).describe("what the planner is told the worker does"),
    skill: z.enum(SKILL_NAMES).optional().describe("the skill it was trained on; used only to build gold plans"),
    maxTokens: z.number().int().min(1).max(4096).default(48).describe("most output tokens per call"),
    cost: z.number().min(0).default(1).describe("cost per 1,000 output tokens, summed over a chain"),
    source: workerSource,
  })
  .strict();
/** A worker's options after defaults. */
export type WorkerOptions = z.output<typeof workerOptions>;

const programWorker = (skill: SkillName, id: string): WorkerOptions => ({
  id,
  description: SKILL_DESCRIPTIONS[skill],
  skill,
  maxTokens: 48,
  cost: 1,
  source: { type: "program", skill },
});

/** The default pool: the four exact skill programs (a smoke pool; the bench swaps in SFT-trained checkpoints). */
export const DEFAULT_WORKERS = [
  programWorker("read", "reader"),
  programWorker("multiply", "multiplier"),
  programWorker("add", "adder"),
  programWorker("generalist", "generalist"),
];

/** Options of the conductor task. */
export const conductorOptions = z
  .object({
    workers: z.array(workerOptions).min(1).max(16).default(DEFAULT_WORKERS),
    kinds: z
      .array(z.enum(QUESTION_KINDS))
      .min(1)
      .default([...QUESTION_KINDS])
      .describe("question kinds drawn"),
    digits: z.number().int().min(2).max(3).default(2).describe("digits of the multi-digit factor (the other has one)"),
    maxSteps: z.number().int().min(1).max(16).default(4).describe("longer plans are invalid (reward 0)"),
    warmStart: z
      .enum(["gold", "format"])
      .default("gold")
      .describe(
        "each example's SFT target: its gold plan, or a random well-formed plan (format only; routing is left to RL)",
      ),
    timeoutMs: z.number().int().min(1).max(600_000).default(10_000).describe("per worker call"),
    onInfraFailure: z
      .enum(["null", "parse"])
      .default("null")
      .describe(
        "a chain broken by infrastructure (HTTP error, timeout): null, not scorable (rewards spec §8), or the parse credit 0.5",
      ),
    selfCalls: z
      .object({
        maxDepth: z.number().int().min(1).max(3).default(1),
        planner: workerSource
          .optional()
          .describe(
            "the planner copy that answers self-calls (a checkpoint or an endpoint; code may pass the live one)",
          ),
      })
      .strict()
      .nullable()
      .default(null)
      .describe("let the planner call itself as the last worker id, with a recursion depth limit; null = off"),
  })
  .strict();
/** Conductor options after defaults. */
export type ConductorOptions = z.output<typeof conductorOptions>;
/** Conductor options as written (defaults missing). */
export type ConductorInput = z.input<typeof conductorOptions>;

/** Gold of a conductor example. */
export interface ConductorGold {
  /** The question's answer; the chain's final output must be exactly this integer. */
  answer: number;
  kind: QuestionKind;
  /** Worker ids the plan may use (the pool, plus the planner itself when self-calls are on). */
  pool: number;
  maxSteps: number;
}

/** What a chain runner returns (src/rollout/conductor/executor.ts `Chain` has this shape and more). */
export interface ChainResult {
  /** The last step's output, or null when the chain failed. */
  answer: string | null;
  failed: boolean;
  /** True when a step failed for the infrastructure's reasons (HTTP error, malformed server reply, timeout). */
  infraFailure?: boolean;
  steps: readonly unknown[];
  workerTokens: number;
}

/** Runs a valid plan's chain for an example; never throws for a worker's failure (it is recorded in the chain). */
export type ChainRunner = (plan: Plan, example: Example<ConductorGold>) => Promise<ChainResult>;

/** True when the final output is exactly the gold integer (surrounding whitespace allowed, nothing else). */
export function isCorrectAnswer(output: string | null, answer: number): boolean {
  if (output === null) return false;
  const t = output.trim();
  return /^-?\d{1,18}$/.test(t) && Number(t) === answer;
}

/** The planner's prompt: the workers it may call, then the question. */
export function plannerPrompt(workers: readonly { id: string; description: string }[], question: string): string {
  const lines = workers.map((w, i) => `${i} ${w.id}: ${w.description}`);
  return `Workers:\n${lines.join("\n")}\nQuestion: ${question}\nPlan:\n`;
}

/** The workers the planner sees: the pool, plus itself as the last id when self-calls are on. */
export function visibleWorkers(o: ConductorOptions): { id: string; description: string }[] {
  const pool = o.workers.map((w) => ({ id: w.id, description: w.description }));
  return o.selfCalls ? [...pool, { id: "self", description: "the planner itself: plans a sub-question" }] : pool;
}

/**
 * The conductor task's questions, prompts and gold plans. Its own `score` does not execute anything (conductor-plan
 * then gives a valid plan 0.5, "chain not executed"); `withChainScoring` adds the chain.
 */
export const conductorTask = defineTask<ConductorGold, ConductorOptions>({
  name: "conductor",
  summary: "Conductor: plan a chain of worker calls (read, multiply, add) that answers a word problem",
  options: conductorOptions,
  build(o) {
    const shown = visibleWorkers(o);
    const skillWorker: Partial<Record<SkillName, number>> = {};
    const skills = shown.map((_, i) => {
      const w = o.workers[i];
      return w?.skill ?? (w?.source.type === "program" ? w.source.skill : undefined);
    });
    skills.forEach((s, i) => {
      if (s !== undefined && skillWorker[s] === undefined) skillWorker[s] = i;
    });
    return {
      description: `Conductor over ${o.workers.length} workers (${o.workers.map((w) => w.id).join(", ")})`,
      terms: [{ name: "plan", reward: "conductor-plan", weight: 1 }],
      correctTerm: "plan",
      maxNewTokens: 256,
      draw(rng) {
        const q = drawQuestion(rng, rng.choice(o.kinds), o.digits);
        const gold = goldPlan(q, skillWorker);
        if (!gold) throw new ConfigError(`conductor: the pool has no worker with skill(s) ${q.skills.join(", ")}`);
        const plan = o.warmStart === "format" ? formatPlan(rng.split(q.question), q, skills) : gold;
        return {
          key: q.question,
          prompt: plannerPrompt(shown, q.question),
          gold: { answer: q.answer, kind: q.kind, pool: shown.length, maxSteps: o.maxSteps },
          goldCompletion: planText(plan),
        };
      },
    };
  },
});

/** Builds the task with a chain runner: score parses the plan, runs a valid one, and applies conductor-plan. */
export function createConductorTask(options: ConductorInput, runChain: ChainRunner): Task<ConductorGold> {
  const o = conductorOptions.parse(options);
  return withChainScoring(conductorTask.create(o), runChain, o.onInfraFailure);
}

/** Replaces a conductor task's score by: parse → (valid) execute → conductor-plan on the chain's final answer. */
export function withChainScoring(
  base: Task<ConductorGold>,
  runChain: ChainRunner,
  onInfraFailure: ConductorOptions["onInfraFailure"] = "null",
): Task<ConductorGold> {
  return {
    ...base,
    async score(example, completion) {
      const gold = example.gold;
      const plan = readPlan(completion, gold);
      if ("error" in plan) {
        // Never executed: conductor-plan itself gives an unparsable or invalid plan 0.
        const res = await scoreWithTerms(base.terms, {
          completion,
          gold: { pool: gold.pool, maxSteps: gold.maxSteps },
        });
        return { ...res, info: { ...res.info, plan: plan.error } };
      }
      const chain = await runChain(plan.plan, example);
      const correct = isCorrectAnswer(chain.answer, gold.answer);
      const infraFailure = chain.failed && chain.infraFailure === true && onInfraFailure === "null";
      const res = await scoreWithTerms(base.terms, {
        completion,
        gold: {
          pool: gold.pool,
          maxSteps: gold.maxSteps,
          chain: { correct, ...(infraFailure ? { infraFailure } : {}) },
        },
      });
      return { ...res, info: { ...res.info, chain } };
    },
  };
}

/** The plan in a completion, read as conductor-plan reads it (after the last </think>). */
export function readPlan(completion: string, gold: ConductorGold): { plan: Plan } | { error: string } {
  const region = answerRegion(completion, { mode: "afterThink", maxChars: 50_000 });
  if (region.text === null) return { error: region.reason };
  return parsePlan(region.text, gold.pool, gold.maxSteps);
}
