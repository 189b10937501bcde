/**
 * Conductor plan reward ("conductor-plan", spec §8; arXiv 2512.04388 §3.1, no public code): 1 if the executed
 * chain's final answer is correct, 0.5 if the plan parses but the answer is wrong, 0 if the plan cannot be parsed.
 * The plan is three assignments written as literals (`model_id = [...]`, `subtasks = [...]`, `access_list = [...]`),
 * read with a literal grammar (integers, quoted strings, nested lists) — never evaluated (G4). Chain execution is
 * the rollout layer's job: this reward takes the chain outcome as input (`gold.chain`); a worker infrastructure
 * failure gives null.
 */
import { z } from "zod";
import type { RewardResult, RewardSpec } from "./types.js";
import { answerRegion } from "./text/region.js";

/** A literal value: integer/number, string, or list. */
export type Literal = number | string | Literal[];

const MAX_DEPTH = 4;
const MAX_PLAN_CHARS = 50_000;
const MAX_ITEMS = 1_000;

/** Reads one literal at `i`; returns it and the end index, or null when the text there is not a literal. */
export function parseLiteral(s: string, i: number, depth = 0): { value: Literal; end: number } | null {
  while (s[i] === " " || s[i] === "\t" || s[i] === "\n" || s[i] === "\r") i++;
  const c = s[i];
  if (c === "[") {
    if (depth >= MAX_DEPTH) return null;
    const items: Literal[] = [];
    i++;
    for (;;) {
      while (s[i] === " " || s[i] === "\t" || s[i] === "\n" || s[i] === "\r") i++;
      if (s[i] === "]") return { value: items, end: i + 1 };
      if (items.length > 0) {
        if (s[i] !== ",") return null;
        i++;
        while (s[i] === " " || s[i] === "\t" || s[i] === "\n" || s[i] === "\r") i++;
        if (s[i] === "]") return { value: items, end: i + 1 }; // trailing comma
      }
      const item = parseLiteral(s, i, depth + 1);
      if (!item || items.length >= MAX_ITEMS) return null;
      items.push(item.value);
      i = item.end;
    }
  }
  if (c === '"' || c === "'") {
    let out = "";
    for (let j = i + 1; j < s.length && j - i < 4_000; j++) {
      const d = s[j]!;
      if (d === c) return { value: out, end: j + 1 };
      if (d === "\n") return null;
      if (d === "\\") {
        const e = s[++j];
        out += e === "n" ? "\n" : e === "t" ? "\t" : (e ?? "");
      } else out += d;
    }
    return null;
  }
  const m = /^-?\d{1,15}(?:\.\d{1,15})?/.exec(s.slice(i, i + 40));
  if (!m) return null;
  const after = s[i + m[0].length];
  if (after !== undefined && /[A-Za-z_(.]/.test(after)) return null; // calls, attributes, 1e5, 1.2.3
  return { value: Number(m[0]), end: i + m[0].length };
}

/** A parsed plan: worker id, subtask and visible earlier steps for each step. */
export interface Plan {
  modelIds: number[];
  subtasks: string[];
  accessList: number[][];
}

const NAMES = ["model_id", "subtasks", "access_list"] as const;

/** Finds `name = <literal>` exactly once (as a whole word); null when missing, repeated or not a literal. */
function assignment(s: string, name: string): Literal | null {
  const re = new RegExp(String.raw`(?<![A-Za-z0-9_])${name}[ \t]{0,8}=(?!=)`, "g");
  const hits = [...s.matchAll(re)];
  if (hits.length !== 1) return null;
  const lit = parseLiteral(s, hits[0]!.index + hits[0]![0].length);
  if (!lit) return null;
  const rest = s.slice(lit.end, lit.end + 2).trimStart();
  if (rest.startsWith("(") || rest.startsWith(".") || rest.startsWith("+") || rest.startsWith("*")) return null;
  return lit.value;
}

/** Parses and validates a plan (§8 "Valid"); returns the plan or the reason it is invalid. */
export function parsePlan(text: string, poolSize: number, maxSteps = 8): { plan: Plan } | { error: string } {
  if (text.length > MAX_PLAN_CHARS) return { error: "plan text too long" };
  const [ids, subtasks, access] = NAMES.map((n) => assignment(text, n));
  if (!Array.isArray(ids) || !Array.isArray(subtasks) || !Array.isArray(access))
    return { error: "each of model_id, subtasks, access_list must be assigned exactly once to a list literal" };
  const L = ids.length;
  if (L === 0 || subtasks.length !== L || access.length !== L)
    return { error: "the three lists must be non-empty and of equal length" };
  if (L > maxSteps) return { error: `plan has ${L} steps, more than maxSteps ${maxSteps}` };
  if (!ids.every((x) => typeof x === "number" && Number.isInteger(x) && x >= 0 && x < poolSize))
    return { error: `model_id entries must be integers in [0, ${poolSize})` };
  if (!subtasks.every((x) => typeof x === "string" && x.trim().length > 0 && x.length <= 2_000))
    return { error: "subtasks must be non-empty strings of at most 2000 chars" };
  for (let i = 0; i < L; i++) {
    const a = access[i];
    if (
      !Array.isArray(a) ||
      !a.every((j) => typeof j === "number" && Number.isInteger(j) && j >= 0 && j < i) ||
      new Set(a).size !== a.length
    ) {
      return { error: `access_list[${i}] must be distinct earlier step indices` };
    }
  }
  return { plan: { modelIds: ids as number[], subtasks: subtasks as string[], accessList: access as number[][] } };
}

/** Outcome of executing the plan's chain (filled in by the rollout layer). */
export interface ChainOutcome {
  /** Whether the task's checker accepted the last step's output. */
  correct: boolean;
  /** A worker infrastructure failure (HTTP error, timeout after retries): the plan is not scorable. */
  infraFailure?: boolean;
}

/** Gold of the plan reward: the worker pool and, once executed, the chain outcome. */
export interface PlanGold {
  pool: string[] | number;
  maxSteps?: number;
  chain?: ChainOutcome;
}

/** Options of the plan reward. */
export const planOptions = z.object({
  region: z
    .enum(["afterThink", "all"])
    .default("afterThink")
    .describe("read the plan after the last </think> (G3) or anywhere"),
});

/** "conductor-plan": 1 correct chain, 0.5 parsed plan with a wrong answer, 0 unparseable plan. */
export const conductorPlanReward: RewardSpec<z.output<typeof planOptions>, PlanGold> = {
  name: "conductor-plan",
  description:
    "Conductor plan: 1 if the executed chain is correct, 0.5 if the plan (model_id/subtasks/access_list) parses, else 0",
  options: planOptions,
  exampleGold: { pool: ["qwen-7b", "llama-8b", "gemma-9b"], chain: { correct: true } },
  maxScore: 1,
  score({ completion, gold }, o): RewardResult {
    const poolSize = typeof gold.pool === "number" ? gold.pool : gold.pool.length;
    // The shared region rule (G3): after the last </think>; reasoning opened and never closed commits to nothing.
    const region = answerRegion(completion, { mode: o.region, maxChars: MAX_PLAN_CHARS });
    if (region.text === null) return { score: 0, terms: { parsed: 0, correct: 0 }, info: { reason: region.reason } };
    const res = parsePlan(region.text, poolSize, gold.maxSteps ?? 8);
    if ("error" in res) return { score: 0, terms: { parsed: 0, correct: 0 }, info: { reason: res.error } };
    const steps = res.plan.modelIds.length;
    if (gold.chain?.infraFailure)
      return { score: null, terms: { parsed: 1 }, info: { reason: "worker infrastructure failure", steps } };
    if (!gold.chain)
      return {
        score: 0.5,
        terms: { parsed: 1, correct: 0 },
        info: { reason: "chain not executed", steps, plan: res.plan },
      };
    const correct = gold.chain.correct ? 1 : 0;
    return { score: correct ? 1 : 0.5, terms: { parsed: 1, correct }, info: { steps, plan: res.plan } };
  },
  goldCompletion: () =>
    `<think>\nSplit the work.\n</think>\nmodel_id = [2, 0, 1]\nsubtasks = ["Extract the constraints", "Solve", "Check and state the final answer"]\naccess_list = [[], [0], [0, 1]]`,
};
