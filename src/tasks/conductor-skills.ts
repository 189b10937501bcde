/**
 * The Conductor task's questions and worker skills (issue 13; arXiv 2512.04388 §3.1, §4.1). A question needs two or
 * three skills chained: reading a word problem into an expression, multiplying, adding.
 *
 * Each skill is an exact program over a worker's inputs (its subtask and the outputs of the steps it may see). The
 * programs are the gold of the skill workers' SFT data (the bench trains small built-in workers on them) and serve as
 * deterministic workers in tests and in planner smoke runs. Departure from the paper: its workers are frontier LLMs
 * on coding and maths benchmarks; here the pool is small and procedural, so that skills really differ and a chain
 * can be checked exactly.
 *
 * Fixed-width formats, so that a character-level worker of about a million parameters can learn its skill in a few
 * minutes of CPU: every name has three letters and every item four, addends are written with three digits
 * (`058`), a product has one digit more than its multi-digit factor (`23*7` → `161`, `12*3` → `036`), and a sum has
 * one digit more than its widest term (`161+058` → `0219`). Each template then puts every number at the same place,
 * so reading is a copy at fixed offsets and the skills are the digit-aligned programs that small transformers learn
 * (Lee et al. 2023 zero-pad for the same reason). With free-width numbers, free-length words and two multi-digit
 * factors, workers of that size learned none of their skills (docs/conductor.md, "The pool"). A padded answer is
 * still exactly its integer (`isCorrectAnswer` reads `0219` as 219).
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
  /** The expression the question reads as, e.g. "23*7+158". */
  expression: string;
  answer: number;
  skills: SkillName[];
}

const ITEMS = ["pens", "cups", "nuts", "jars", "mugs", "rods"] as const;
const NAMES = ["Ann", "Bob", "Cyd", "Dee", "Eli", "Fay"] as const;

/** `n` with leading zeros to `width` digits. */
const pad = (n: number, width: number) => String(n).padStart(width, "0");

/**
 * Draws one question of `kind`: a product of a `digits`-digit factor (2 or 3) and a one-digit factor (2-9), and
 * three-digit addends (000-999).
 */
export function drawQuestion(rng: Rng, kind: QuestionKind, digits: number): ConductorQuestion {
  const lo = 10 ** (digits - 1);
  const a = rng.intBetween(lo, 10 * lo - 1);
  const b = rng.intBetween(2, 9);
  const c = rng.intBetween(0, 999);
  const item = rng.choice(ITEMS);
  const who = rng.choice(NAMES);
  if (kind === "word-add") {
    const x = rng.intBetween(0, 999);
    const question = `${who} has ${pad(x, 3)} ${item} and gets ${pad(c, 3)} more. How many ${item}?`;
    return { kind, question, expression: `${pad(x, 3)}+${pad(c, 3)}`, answer: x + c, skills: ["read", "add"] };
  }
  const expression = `${a}*${b}+${pad(c, 3)}`;
  if (kind === "expr")
    return { kind, question: `Compute ${expression}.`, expression, answer: a * b + c, skills: ["multiply", "add"] };
  const question = `${who} has ${a} boxes of ${b} ${item} and ${pad(c, 3)} loose ${item}. How many ${item}?`;
  return { kind, question, expression, answer: a * b + c, skills: ["read", "multiply", "add"] };
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
const WORD_ADD = /has (\d+) [a-z]+ and gets (\d+) more/;
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
    if (a) return `${a[1]}+${a[2]}`;
  }
  return "unknown";
};

/** Replaces every product a*b in the expression by its value, written with as many digits as a and b together. */
const multiply: SkillProgram = (subtask, context) => {
  const e = lastExpression(subtask, context);
  if (e === null) return "unknown";
  return e.replace(/(\d+)\*(\d+)/g, (_, a: string, b: string) => pad(Number(a) * Number(b), a.length + b.length));
};

/**
 * Sums an expression of additions only, written with one digit more than its widest term; a product left in it
 * cannot be done, so the worker returns it unchanged.
 */
const addition: SkillProgram = (subtask, context) => {
  const e = lastExpression(subtask, context);
  if (e === null) return "unknown";
  if (e.includes("*")) return e;
  const terms = e.split("+");
  const width = 1 + Math.max(...terms.map((t) => t.length));
  return pad(
    terms.reduce((s, x) => s + Number(x), 0),
    width,
  );
};

/**
 * A weak generalist: reads and computes in one go, but multiplies a number of two or more digits wrongly (drops the
 * product's last digit to 0), the way a small model that never learned multiplication does; its sums are right.
 */
const generalist: SkillProgram = (subtask, context) => {
  const e = read(subtask, context) !== "unknown" ? read(subtask, context) : lastExpression(subtask, context);
  if (e === null) return "unknown";
  const terms = e.split("+").map((t) => {
    const [a, b] = t.split("*").map(Number);
    if (b === undefined) return a!;
    const p = a! * b;
    return a! >= 10 || b >= 10 ? p - (p % 10) : p;
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
  generalist: "answers anything in one go, but is weak at multiplication",
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

/** The subtask a format plan gives a later step: its worker's skill, or "answer" for a worker without one. */
const SKILL_VERB: Readonly<Record<SkillName, string>> = {
  read: "read",
  multiply: "multiply",
  add: "add",
  generalist: "answer",
};

/**
 * A format-only plan (the `warmStart: "format"` SFT target): one to three steps, each worker drawn uniformly from the
 * `pool` (skill per listed worker, undefined for one without), the question as the first subtask, each later step's
 * subtask its worker's skill, each step seeing the one before. It teaches the grammar, copying the question and the
 * subtask words, and nothing about which workers, in which order, answer which question: that is left to RL.
 */
export function formatPlan(
  rng: Rng,
  q: ConductorQuestion,
  pool: readonly (SkillName | undefined)[],
): { modelIds: number[]; subtasks: string[]; accessList: number[][] } {
  const steps = rng.intBetween(1, 3);
  const modelIds = Array.from({ length: steps }, () => rng.int(pool.length));
  const subtasks = modelIds.map((w, i) => (i === 0 ? q.question : SKILL_VERB[pool[w] ?? "generalist"]));
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
 * question; a sub-step (an addition, say) can recur across questions, as any skill's inputs would.
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
