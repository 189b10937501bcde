/**
 * "countdown-expression": checks a Countdown answer, an arithmetic expression that must reach a target from the
 * given numbers (rewards spec §6, the Countdown note; the task of TinyZero and wd1).
 *
 * The expression is parsed by a small recursive-descent parser over `[0-9+\-*()/ .]` and evaluated by walking the
 * tree; model text is never passed to `eval` (rewards spec G4). Rules:
 * - Graded region (`region`): the single `<answer>…</answer>` block (default, as in TinyZero; G3), or the single
 *   `\boxed{…}` (the built-in task's short form), or the whole completion ("all"). No region, or two or more blocks or
 *   boxes, earns 0 (G5: no hedging).
 * - Only binary `+ - * /` and parentheses over non-negative number literals; no unary minus, no implicit product.
 * - Each literal must be one of the given numbers, each given number used at most once; with `useAll: true`
 *   (default, the spec's rule) every given number exactly once.
 * - Value within 1e-5 of the target → 1. A well-formed expression that obeys the number rule but misses the
 *   target (or divides by zero) → `formatCredit` (default 0.1, the reference's format credit). Anything else → 0.
 * - Bad gold (no numbers, non-finite target) → null (G2). Over 200 characters or 50 levels of nesting → 0 (G8).
 * Departure from the wd1/TinyZero reference: it accepts any characters that Python's eval takes once the regex
 * passes (e.g. `**`, unary minus); we accept only the grammar above.
 */
import { z } from "zod";
import { rewards } from "./registry.js";
import { boxedSpans } from "./boxed-format.js";
import { answerBlock } from "./text/region.js";
import type { RewardResult, RewardSpec } from "./types.js";

/** Gold of a countdown example: the numbers to use and the target to reach. */
export interface CountdownGold {
  numbers: number[];
  target: number;
}

/** Options of "countdown-expression". */
export const countdownOptions = z
  .object({
    useAll: z.boolean().default(true).describe("every given number must be used exactly once (else at most once)"),
    formatCredit: z.number().min(0).max(1).default(0.1).describe("score of a valid expression with the wrong value"),
    region: z
      .enum(["answerTag", "boxed", "all"])
      .default("answerTag")
      .describe("where the expression is: the single <answer> block, the single \\boxed{}, or the whole completion"),
    tolerance: z.number().positive().default(1e-5).describe("|value - target| below this is correct"),
  })
  .strict();

/** Options of "countdown-expression" after defaults. */
export type CountdownOptions = z.infer<typeof countdownOptions>;

const MAX_CHARS = 200;
const MAX_DEPTH = 50;

/** A parsed expression: its value and the number literals it uses. */
export interface ParsedExpression {
  value: number;
  literals: number[];
}

/** Why an expression was rejected, for `info.reason`. */
export class ExpressionError extends Error {}

/**
 * Parses and evaluates an arithmetic expression (`+ - * /`, parentheses, non-negative decimal literals) without
 * eval. Throws ExpressionError naming the position of the first problem. Division by zero gives a non-finite value.
 */
export function parseExpression(text: string): ParsedExpression {
  if (text.length > MAX_CHARS) throw new ExpressionError(`expression longer than ${MAX_CHARS} characters`);
  if (!/^[0-9+\-*/().\s]*$/.test(text))
    throw new ExpressionError("characters other than digits, + - * / ( ) . and spaces");
  // Spaces may separate tokens but never split a number: "1 6" must not read as 16.
  if (/[\d.]\s+[\d.]/.test(text))
    throw new ExpressionError("a number split by spaces, or two numbers without an operator");
  const s = text.replace(/\s+/g, "");
  if (s.length === 0) throw new ExpressionError("empty expression");
  let pos = 0;
  const literals: number[] = [];

  // expr := term (('+' | '-') term)*
  const expr = (depth: number): number => {
    let v = term(depth);
    while (s[pos] === "+" || s[pos] === "-") {
      const op = s[pos++];
      const r = term(depth);
      v = op === "+" ? v + r : v - r;
    }
    return v;
  };
  // term := atom (('*' | '/') atom)*
  const term = (depth: number): number => {
    let v = atom(depth);
    while (s[pos] === "*" || s[pos] === "/") {
      const op = s[pos++];
      if (s[pos] === "*" || s[pos] === "/") throw new ExpressionError(`operator "${op}${s[pos]}" at ${pos - 1}`);
      const r = atom(depth);
      v = op === "*" ? v * r : v / r;
    }
    return v;
  };
  // atom := number | '(' expr ')'
  const atom = (depth: number): number => {
    if (depth > MAX_DEPTH) throw new ExpressionError(`nesting deeper than ${MAX_DEPTH}`);
    if (s[pos] === "(") {
      pos++;
      const v = expr(depth + 1);
      if (s[pos] !== ")") throw new ExpressionError(`missing ")" at ${pos}`);
      pos++;
      return v;
    }
    const m = /^\d+(\.\d+)?/.exec(s.slice(pos));
    if (!m) throw new ExpressionError(pos < s.length ? `unexpected "${s[pos]}" at ${pos}` : "expression ends early");
    pos += m[0].length;
    const v = Number(m[0]);
    literals.push(v);
    return v;
  };

  const value = expr(0);
  if (pos !== s.length) throw new ExpressionError(`unexpected "${s[pos]}" at ${pos}`);
  return { value, literals };
}

/** Checks that `literals` uses the given numbers at most once each (exactly once with `useAll`). */
export function usesNumbers(literals: readonly number[], numbers: readonly number[], useAll: boolean): string | null {
  const left = [...numbers];
  for (const x of literals) {
    const i = left.indexOf(x);
    if (i < 0) return numbers.includes(x) ? `uses ${x} more often than given` : `uses ${x}, which is not given`;
    left.splice(i, 1);
  }
  if (useAll && left.length > 0) return `does not use ${left.join(", ")}`;
  return null;
}

function validGold(gold: unknown): gold is CountdownGold {
  const g = gold as CountdownGold | null;
  return (
    !!g &&
    Array.isArray(g.numbers) &&
    g.numbers.length > 0 &&
    g.numbers.every((n) => typeof n === "number" && Number.isFinite(n) && n >= 0) &&
    typeof g.target === "number" &&
    Number.isFinite(g.target)
  );
}

/** Scores one countdown completion (see the file comment for the rules). */
export function scoreCountdown(completion: string, gold: CountdownGold, o: CountdownOptions): RewardResult {
  if (!validGold(gold))
    return { score: null, terms: {}, info: { reason: "gold needs numbers (non-negative) and a finite target" } };
  const zero = (reason: string, extra: Record<string, unknown> = {}): RewardResult => ({
    score: 0,
    terms: { correct: 0, partial: 0 },
    info: { reason, ...extra },
  });
  let text = completion;
  if (o.region === "answerTag") {
    const block = answerBlock(completion); // the shared single-block rule (G5)
    if (block.text === null) return zero(block.reason);
    text = block.text;
  } else if (o.region === "boxed") {
    const boxes = boxedSpans(completion);
    if (boxes.length !== 1 || completion.split("\\boxed").length !== 2)
      return zero(boxes.length === 0 ? "no closed \\boxed{}" : "more than one \\boxed{}");
    text = boxes[0]!.content;
  }
  let parsed: ParsedExpression;
  try {
    parsed = parseExpression(text.trim());
  } catch (err) {
    if (err instanceof ExpressionError) return zero(err.message, { extracted: text.slice(0, 200) });
    throw err;
  }
  const misuse = usesNumbers(parsed.literals, gold.numbers, o.useAll);
  if (misuse) return zero(misuse, { extracted: text.trim() });
  const info = { extracted: text.trim(), value: parsed.value };
  if (Number.isFinite(parsed.value) && Math.abs(parsed.value - gold.target) < o.tolerance) {
    return { score: 1, terms: { correct: 1, partial: 0 }, info };
  }
  return {
    score: o.formatCredit,
    terms: { correct: 0, partial: o.formatCredit },
    info: { ...info, reason: "wrong value" },
  };
}

/** A node while building expressions: value, text and the precedence of its top operator (3 = literal). */
interface Built {
  value: number;
  text: string;
  prec: number;
}

/** Joins two built expressions with `op`, adding only the parentheses precedence needs. */
export function combineExpressions(a: Built, op: "+" | "-" | "*" | "/", b: Built): Built {
  const prec = op === "+" || op === "-" ? 1 : 2;
  const left = a.prec < prec ? `(${a.text})` : a.text;
  // The right operand of - and / needs parentheses at equal precedence: a-(b-c) differs from a-b-c.
  const right = b.prec < prec || (b.prec === prec && (op === "-" || op === "/")) ? `(${b.text})` : b.text;
  const value =
    op === "+"
      ? a.value + b.value
      : op === "-"
        ? a.value - b.value
        : op === "*"
          ? a.value * b.value
          : a.value / b.value;
  return { value, text: `${left}${op}${right}`, prec };
}

/**
 * Exhaustive search for an expression reaching `target` from `numbers` (every number once; non-negative integer
 * intermediate results, as in the game). Returns the expression text or null. Exponential: meant for <= 6 numbers.
 */
export function solveCountdown(numbers: readonly number[], target: number): string | null {
  const search = (pool: Built[]): string | null => {
    if (pool.length === 1) return Math.abs(pool[0]!.value - target) < 1e-9 ? pool[0]!.text : null;
    for (let i = 0; i < pool.length; i++) {
      for (let j = 0; j < pool.length; j++) {
        if (i === j) continue;
        const a = pool[i]!;
        const b = pool[j]!;
        const rest = pool.filter((_, k) => k !== i && k !== j);
        for (const op of ["+", "-", "*", "/"] as const) {
          if ((op === "+" || op === "*") && i > j) continue; // commutative: one order is enough
          if (op === "-" && a.value < b.value) continue;
          if (op === "/" && (b.value === 0 || a.value % b.value !== 0)) continue;
          const found = search([...rest, combineExpressions(a, op, b)]);
          if (found) return found;
        }
      }
    }
    return null;
  };
  return search(numbers.map((n) => ({ value: n, text: String(n), prec: 3 })));
}

/** The registered reward spec. */
export const countdownExpression: RewardSpec<CountdownOptions, CountdownGold> = {
  name: "countdown-expression",
  description:
    "Countdown: the <answer> expression must reach the target using the given numbers (parsed, never eval'd)",
  options: countdownOptions,
  score: ({ completion, gold }, o) => scoreCountdown(completion, gold, o),
  goldCompletion: (gold) => {
    const expr = solveCountdown(gold.numbers, gold.target);
    if (expr === null)
      throw new Error(`countdown: no expression reaches ${gold.target} from ${gold.numbers.join(", ")}`);
    return `<answer>${expr}</answer>`;
  },
  exampleGold: { numbers: [3, 5, 2], target: 10 },
  maxScore: 1,
};

rewards.register(countdownExpression);
