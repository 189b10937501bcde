/**
 * The Conductor task's questions and worker skills (issue 13; arXiv 2512.04388 §3.1, §4.1). A question needs two or
 * three skills chained: reading a word problem into an expression, multiplying multi-digit numbers, adding them.
 *
 * Each skill is an exact program over a worker's inputs (its subtask and the outputs of the steps it may see). The
 * programs are the gold of the skill workers' SFT data (the bench trains small built-in workers on them) and serve as
 * deterministic workers in tests and in planner smoke runs. Departure from the paper: its workers are frontier LLMs
 * on coding and maths benchmarks; here the pool is small and procedural, so that skills really differ and a chain
 * can be checked exactly.
 */
import type { Rng } from "../util/rng.js";
import { splitOf } from "./generate.js";

/** The kinds of question: a word problem with a product and a sum, a bare expression, or an additive word problem. */
export const QUESTION_KINDS = ["word", "expr", "word-add"] as const;
/** One kind of question. */
export type QuestionKind = (typeof QUESTION_KINDS)[number];

/** A drawn question with its expression, answer and the skills a chain needs, in order. */
export interface ConductorQuestion {
  kind: QuestionKind;
  question: string;
  /** The expression the question reads as, e.g. "23*47+158". */
  expression: string;
  answer: number;
  skills: SkillName[];
}

const ITEMS = ["pens", "cups", "books", "coins", "seeds", "tiles"] as const;
const NAMES = ["Ann", "Bo", "Cy", "Dee", "Eli", "Fay"] as const;

/** Draws one question of `kind`; factors have `digits` digits (2 or 3), addends 2-3 digits. */
export function drawQuestion(rng: Rng, kind: QuestionKind, digits: number): ConductorQuestion {
  const lo = 10 ** (digits - 1);
  const num = () => rng.intBetween(lo, 10 * lo - 1);
  const add = () => rng.intBetween(10, 999);
  const item = rng.choice(ITEMS);
  const who = rng.choice(NAMES);
  if (kind === "expr") {
    const [a, b, c] = [num(), num(), add()];
    const expression = `${a}*${b}+${c}`;
    return { kind, question: `Compute ${expression}.`, expression, answer: a * b + c, skills: ["multiply", "add"] };
  }
  if (kind === "word-add") {
    const [a, b, c] = [add(), add(), add()];
    const question = `${who} has ${a} ${item}, gets ${b} more and then ${c} more. How many ${item}?`;
    return { kind, question, expression: `${a}+${b}+${c}`, answer: a + b + c, skills: ["read", "add"] };
  }
  const [a, b, c] = [num(), num(), add()];
  const question = `${who} has ${a} boxes of ${b} ${item} and ${c} loose ${item}. How many ${item}?`;
  return { kind, question, expression: `${a}*${b}+${c}`, answer: a * b + c, skills: ["read", "multiply", "add"] };
}

/**
 * A chain step's prompt (the executor's, src/rollout/conductor/executor.ts, and the skill workers' SFT data): the
 * visible steps' outputs, labelled by step index, then the subtask.
 */
export function stepPrompt(subtask: string, visible: readonly { index: number; output: string }[]): string {
  const context = visible.map((v) => `Step ${v.index}: ${v.output}\n`).join("");
  return `${context}Task: ${subtask}\nAnswer:`;
}

/** The skills a worker can have. */
export const SKILL_NAMES = ["read", "multiply", "add", "generalist"] as const;
/** One skill. */
export type SkillName = (typeof SKILL_NAMES)[number];

/** A skill program: the worker's subtask and the outputs of the steps it may see, in access-list order. */
export type SkillProgram = (subtask: string, context: readonly string[]) => string;

const WORD = /(\d+) boxes of (\d+) [a-z]+ and (\d+) loose/;
const WORD_ADD = /has (\d+) [a-z]+, gets (\d+) more and then (\d+) more/;
const EXPR = /\d+(?:[*+]\d+)+/g;

/** The expression a worker works on: the last one in its visible outputs, else the last one in its subtask. */
function lastExpression(subtask: string, context: readonly string[]): string | null {
  for (const text of [...context].reverse().concat(subtask)) {
    const all = text.replace(/\s+/g, "").match(EXPR);
    if (all) return all[all.length - 1]!;
    const n = /-?\d+/.exec(text.trim());
    if (n && n[0] === text.trim()) return n[0];
  }
  return null;
}

/** Reads a word problem (in the subtask or a visible output) into its expression. */
const read: SkillProgram = (subtask, context) => {
  for (const text of [subtask, ...context]) {
    const w = WORD.exec(text);
    if (w) return `${w[1]}*${w[2]}+${w[3]}`;
    const a = WORD_ADD.exec(text);
    if (a) return `${a[1]}+${a[2]}+${a[3]}`;
  }
  return "unknown";
};

/** Replaces every product a*b in the expression by its value (exact multi-digit multiplication). */
const multiply: SkillProgram = (subtask, context) => {
  const e = lastExpression(subtask, context);
  if (e === null) return "unknown";
  return e.replace(/(\d+)\*(\d+)/g, (_, a: string, b: string) => String(Number(a) * Number(b)));
};

/** Sums an expression of additions only; a product left in it cannot be done, so the worker returns it unchanged. */
const addition: SkillProgram = (subtask, context) => {
  const e = lastExpression(subtask, context);
  if (e === null) return "unknown";
  if (e.includes("*")) return e;
  return String(e.split("+").reduce((s, x) => s + Number(x), 0));
};

/**
 * A weak generalist: reads and computes in one go, but multiplies two numbers of two or more digits wrongly (drops
 * the product's last digit to 0), the way a small model that never learned long multiplication does.
 */
const generalist: SkillProgram = (subtask, context) => {
  const e = read(subtask, context) !== "unknown" ? read(subtask, context) : lastExpression(subtask, context);
  if (e === null) return "unknown";
  const terms = e.split("+").map((t) => {
    const [a, b] = t.split("*").map(Number);
    if (b === undefined) return a!;
    const p = a! * b;
    return a! >= 10 && b >= 10 ? p - (p % 10) : p;
  });
  return String(terms.reduce((s, x) => s + x, 0));
};

/** The skill programs by name. */
export const SKILLS: Readonly<Record<SkillName, SkillProgram>> = { read, multiply, add: addition, generalist };

/** What the planner sees about each skill's worker (the built-in pool's descriptions). */
export const SKILL_DESCRIPTIONS: Readonly<Record<SkillName, string>> = {
  read: "reads a word problem into an expression",
  multiply: "multiplies: replaces each a*b in an expression by its value",
  add: "adds: sums an expression of additions",
  generalist: "answers anything in one go, but is weak at long multiplication",
};

/**
 * The gold plan of a question for a pool (worker index per skill): one step per needed skill, each step seeing
 * every earlier step (the adder needs the addend that the reader wrote). Null when the pool lacks a skill.
 */
export function goldPlan(
  q: ConductorQuestion,
  skillWorker: Readonly<Partial<Record<SkillName, number>>>,
): { modelIds: number[]; subtasks: string[]; accessList: number[][] } | null {
  const modelIds: number[] = [];
  const subtasks: string[] = [];
  for (const s of q.skills) {
    const w = skillWorker[s];
    if (w === undefined) return null;
    modelIds.push(w);
    subtasks.push(modelIds.length === 1 ? q.question : s);
  }
  return { modelIds, subtasks, accessList: modelIds.map((_, i) => (i === 0 ? [] : [i - 1])) };
}

/** A plan written as the planner writes it (three literal assignments, conductor-plan's grammar). */
export function planText(plan: { modelIds: number[]; subtasks: string[]; accessList: number[][] }): string {
  const list = (xs: readonly unknown[]) => `[${xs.map((x) => JSON.stringify(x)).join(", ")}]`;
  return (
    `model_id = ${list(plan.modelIds)}\nsubtasks = ${list(plan.subtasks)}\n` +
    `access_list = [${plan.accessList.map((a) => list(a)).join(", ")}]`
  );
}

/** One SFT pair of a skill worker: the step prompt it gets in a gold chain and the skill's exact answer. */
export interface SkillPair {
  prompt: string;
  completion: string;
}

/**
 * SFT pairs for the worker of `skill`: the prompts it sees when gold plans run (its subtask and the previous step's
 * output), answered by the skill program. The generalist is asked whole questions. Seeded. Only questions of the
 * task's train split are used (the split key is the question, as in the task), so no worker has seen a held-out
 * question or its sub-steps.
 */
export function skillPairs(skill: SkillName, count: number, rng: Rng, digits = 2): SkillPair[] {
  const out: SkillPair[] = [];
  while (out.length < count) {
    const q = drawQuestion(rng, rng.choice(QUESTION_KINDS), digits);
    if (splitOf(q.question) !== "train") continue;
    if (skill === "generalist") {
      out.push({ prompt: stepPrompt(q.question, []), completion: SKILLS.generalist(q.question, []) });
      continue;
    }
    let prev: { index: number; output: string } | null = null;
    for (let i = 0; i < q.skills.length; i++) {
      const s = q.skills[i]!;
      const subtask = i === 0 ? q.question : s;
      const output = SKILLS[s](subtask, prev ? [prev.output] : []);
      if (s === skill) out.push({ prompt: stepPrompt(subtask, prev ? [prev] : []), completion: output });
      prev = { index: i, output };
    }
  }
  return out.slice(0, count);
}
