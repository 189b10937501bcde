/**
 * Gold-first comparison of two parsed maths answers (spec §1.3; G1). The first rule that decides wins:
 * text, structural equality, relations (assignments reduced, flipped inequalities, proportional equations),
 * containers (sets as multisets, tuples ordered, intervals with openness, matrices element-wise), numbers (exact for
 * two exact values, D-M4 rounding when either side is a decimal, D-M6 significant figures for tiny golds, D-M5
 * percent readings), then seeded probing for symbolic expressions (D-M8). Deliberately asymmetric where the spec is.
 * Issue 11 rules: a relation in the prediction is paid only as a claim about an unknown (`claimProblem`); two percent
 * signs are compared as written; braces are sets (repeats collapse); choice letters ignore case; one comparison
 * spends at most MATH_WORK_LIMIT units (budget.ts) and ends "not equal" (rule `work-limit`) past it.
 */
import { MathParseFail, type MathNode, req, rroundScaled, rtoNumber, show } from "./ast.js";
import { NODE_COST, Work, WorkLimitExceeded } from "./budget.js";
import {
  APPROX_TOLERANCE,
  evalExact,
  evalFloat,
  freeSymbols,
  hasDecimal,
  isApproximate,
  needsCalculus,
} from "./evaluate.js";
import type { ParsedAnswer } from "./normalize.js";
import { close, isConstantValued, probeEnvs, probeEqual } from "./probe.js";

/** Options that change what counts as equal (defaults from the spec). */
export interface CompareOptions {
  /** Decimal places both sides are rounded to when either is a decimal (D-M4). */
  floatRounding: number;
  /** When a relation may match an interval or set (D-M7). */
  allowSetRelation: "never" | "unambiguous" | "always";
  /** Evaluate integrals, limits and determinants, and let an expression in variables equal a constant (issue 11). */
  unsimplified: boolean;
}

/** Result of one comparison: whether it passed, the rule that decided, and the work units it spent. */
export interface CompareResult {
  equal: boolean;
  rule: string;
  work: number;
}

interface Interval {
  lo: MathNode;
  hi: MathNode;
  loOpen: boolean;
  hiOpen: boolean;
  v?: string;
}

const INEQ = new Set(["<", "<=", ">", ">="]);
const FLIP: Record<string, string> = { "<": ">", "<=": ">=", ">": "<", ">=": "<=" };

/** Canonical string: like `show` but with + and * arguments sorted, so reordering is structural equality. */
function canon(node: MathNode): string {
  switch (node.k) {
    case "add":
      return `(${node.args.map(canon).sort().join("+")})`;
    case "mul":
      return `(${node.args.map(canon).sort().join("*")})`;
    case "neg":
      return `-${canon(node.a)}`;
    case "div":
      return `(${canon(node.a)})/(${canon(node.b)})`;
    case "pow":
      return `(${canon(node.a)})^(${canon(node.b)})`;
    case "fn":
      return `${node.name}(${node.args.map(canon).join(",")})`;
    case "pct":
      return `${canon(node.a)}%`;
    default:
      return show(node);
  }
}

/** `x = v` or `x \in S`: a named value, reduced to v (or S) when the other side is not a relation. */
const isAssignment = (n: MathNode): n is Extract<MathNode, { k: "rel" }> =>
  n.k === "rel" && n.ops.length === 1 && (n.ops[0] === "=" || n.ops[0] === "in") && n.items[0]!.k === "sym";
const isEquationChain = (n: MathNode): n is Extract<MathNode, { k: "rel" }> =>
  n.k === "rel" && n.ops.every((o) => o === "=" || o === "in");
const isInfinite = (n: MathNode): boolean => (n.k === "sym" && n.name === "inf") || (n.k === "neg" && isInfinite(n.a));

/** Expands ± and "or"-lists of one variable into sets, which is how they compare (spec §1.2 "multiple solutions"). */
function expand(node: MathNode): MathNode {
  if (node.k === "pm") {
    const b = node.b;
    if (!node.a) return { k: "set", items: [b, { k: "neg", a: b }] };
    return {
      k: "set",
      items: [
        { k: "add", args: [node.a, b] },
        { k: "add", args: [node.a, { k: "neg", a: b }] },
      ],
    };
  }
  if (
    node.k === "rel" &&
    node.ops.length === 1 &&
    node.ops[0] === "=" &&
    node.items[1]!.k === "pm" &&
    node.items[0]!.k === "sym"
  ) {
    return expand(node.items[1]!);
  }
  if (node.k === "list" && node.items.every(isAssignment)) {
    const names = new Set(node.items.map((it) => (it.items[0] as { name: string }).name));
    if (names.size === 1) return { k: "set", items: node.items.map((it) => it.items[1]!) };
  }
  return node;
}

function asInterval(n: MathNode): Interval | null {
  if (n.k === "tuple" && n.items.length === 2) {
    return { lo: n.items[0]!, hi: n.items[1]!, loOpen: n.open === "(", hiOpen: n.close === ")" };
  }
  if (n.k !== "rel" || !n.ops.every((o) => INEQ.has(o))) return null;
  let items = n.items;
  let ops = n.ops;
  if (ops.every((o) => o === ">" || o === ">=")) {
    items = [...items].reverse();
    ops = [...ops].reverse().map((o) => FLIP[o]!);
  }
  if (!ops.every((o) => o === "<" || o === "<=")) return null;
  const inf: MathNode = { k: "sym", name: "inf" };
  const vars = items.filter((it) => it.k === "sym" && freeSymbols(it).size === 1);
  if (vars.length !== 1 || items.some((it) => it !== vars[0] && freeSymbols(it).size > 0)) return null;
  const v = (vars[0] as { name: string }).name;
  if (items.length === 2) {
    if (items[0] === vars[0])
      return { lo: { k: "neg", a: inf }, hi: items[1]!, loOpen: true, hiOpen: ops[0] === "<", v };
    return { lo: items[0]!, hi: inf, loOpen: ops[0] === "<", hiOpen: true, v };
  }
  if (items.length === 3 && items[1] === vars[0])
    return { lo: items[0]!, hi: items[2]!, loOpen: ops[0] === "<", hiOpen: ops[1] === "<", v };
  return null;
}

const unambiguousInterval = (n: MathNode): boolean =>
  n.k === "union" ||
  (n.k === "tuple" && n.items.length === 2 && (n.open !== "(" || n.close !== ")" || n.items.some(isInfinite)));

/** Compares two answers, gold first, within one work budget (a fresh meter unless one is given). */
export function compareAnswers(
  gold: ParsedAnswer,
  pred: ParsedAnswer,
  opts: CompareOptions,
  w = new Work(),
): CompareResult {
  if (gold.unit && pred.unit && gold.unit !== pred.unit) return { equal: false, rule: "unit-mismatch", work: w.used };
  const c = new Comparator(opts, w);
  try {
    const equal = c.top(expand(gold.node), expand(pred.node));
    return { equal, rule: c.rule, work: w.used };
  } catch (err) {
    if (err instanceof WorkLimitExceeded) return { equal: false, rule: "work-limit", work: w.used };
    const failed = err instanceof MathParseFail || err instanceof RangeError;
    if (failed) return { equal: false, rule: "evaluation-error", work: w.used };
    throw err;
  }
}

/** The letter of a choice, or of a one-letter symbol (so `b` and `(B)` compare as choices). */
function letterOf(n: MathNode): string | null {
  if (n.k === "choice") return n.letter.toUpperCase();
  return n.k === "sym" && /^[a-zA-Z]$/.test(n.name) ? n.name.toUpperCase() : null;
}

class Comparator {
  rule = "none";
  constructor(
    private readonly opts: CompareOptions,
    private readonly w: Work,
  ) {}

  private decide(rule: string, equal: boolean): boolean {
    this.rule = rule;
    return equal;
  }

  top(g: MathNode, p: MathNode): boolean {
    const sg = show(g);
    const sp = show(p);
    // Each comparison's own overhead (strings, canonical forms, probe set-up) grows with the size of what it compares.
    this.w.spend(2 * NODE_COST + 5 * (sg.length + sp.length));
    if (sg === sp) return this.decide("structural", true);
    if (g.k === "text" || p.k === "text") return this.decide("text", g.k === "text" && p.k === "text" && g.s === p.s);
    if (g.k === "choice" || p.k === "choice") {
      const gl = letterOf(g);
      return this.decide("choice", gl !== null && gl === letterOf(p));
    }
    // Relations (§1.3 rule 3).
    if (g.k !== "rel" && isEquationChain(p)) {
      const problem = this.claimProblem(p);
      if (problem) return this.decide(problem, false);
      return this.top(g, expand(p.items[p.items.length - 1]!));
    }
    if (isAssignment(g) && p.k !== "rel") return this.top(expand(g.items[1]!), p);
    if (g.k === "rel" && p.k === "rel") return this.relations(g, p);
    if (g.k === "rel") {
      const gi = asInterval(g);
      const pi = p.k === "tuple" ? asInterval(p) : null;
      if (gi && pi) return this.decide("relation-as-interval", this.intervals(gi, pi));
      if (gi && p.k === "union") return this.decide("relation-as-interval", false);
      return this.decide("relation-vs-value", false);
    }
    if (p.k === "rel") {
      const pi = asInterval(p);
      const allowed =
        this.opts.allowSetRelation === "always" ||
        (this.opts.allowSetRelation === "unambiguous" && unambiguousInterval(g));
      const gi = g.k === "tuple" ? asInterval(g) : null;
      if (pi && gi && allowed) return this.decide("interval-vs-relation", this.intervals(gi, pi));
      return this.decide("interval-vs-relation", false);
    }
    return this.containers(g, p);
  }

  /**
   * Why a prediction chain `L0 = L1 = … = Ln` may not be paid as its last side (null when it may). It is an answer
   * only when L0 names an unknown: it has a free symbol and is not constant in it (`x`, `a+2z`, `2x+z`; not `41`,
   * `1+1`, `\pi` or `0x+41`). Its closed sides (no free symbols) must all be equal: `x = 41 = 42` asserts a
   * falsehood. `\in` is paid only as `x \in S` with a bare variable.
   */
  private claimProblem(p: Extract<MathNode, { k: "rel" }>): string | null {
    const left = p.items[0]!;
    if (p.ops.includes("in") && (p.ops.length !== 1 || left.k !== "sym")) return "relation-claim";
    const syms = [...freeSymbols(left)];
    if (syms.length === 0) return "closed-relation";
    if (left.k !== "sym" && isConstantValued(left, syms, this.w)) return "closed-relation";
    const closed = p.items.slice(1).filter((it) => freeSymbols(it).size === 0);
    for (let i = 1; i < closed.length; i++) {
      if (!new Comparator(this.opts, this.w).top(closed[0]!, closed[i]!)) return "contradictory-relation";
    }
    return null;
  }

  private relations(g: Extract<MathNode, { k: "rel" }>, p: Extract<MathNode, { k: "rel" }>): boolean {
    if (isAssignment(g) && isAssignment(p)) {
      const same = (g.items[0] as { name: string }).name === (p.items[0] as { name: string }).name;
      return same ? this.top(expand(g.items[1]!), expand(p.items[1]!)) : this.decide("assignment-names", false);
    }
    const gi = asInterval(g);
    const pi = asInterval(p);
    if (gi && pi) return this.decide("inequality", gi.v === pi.v && this.intervals(gi, pi));
    if (g.ops.length === 1 && p.ops.length === 1 && g.ops[0] === "=" && p.ops[0] === "=")
      return this.proportional(g, p);
    // Same-shape chains, flipped if needed.
    let items = p.items;
    let ops = p.ops;
    if (ops.length === g.ops.length && ops.some((o, i) => o !== g.ops[i])) {
      items = [...items].reverse();
      ops = [...ops].reverse().map((o) => FLIP[o] ?? o);
    }
    if (ops.length !== g.ops.length || ops.some((o, i) => o !== g.ops[i])) return this.decide("relation-shape", false);
    return this.decide(
      "relation",
      g.items.every((it, i) => this.scalar(it, items[i]!)),
    );
  }

  /** Equations `a = b` and `c = d` agree when a−b and c−d are nonzero constant multiples (probed). */
  private proportional(g: Extract<MathNode, { k: "rel" }>, p: Extract<MathNode, { k: "rel" }>): boolean {
    const fg: MathNode = { k: "add", args: [g.items[0]!, { k: "neg", a: g.items[1]! }] };
    const fp: MathNode = { k: "add", args: [p.items[0]!, { k: "neg", a: p.items[1]! }] };
    const sg = [...freeSymbols(fg)].sort();
    const sp = [...freeSymbols(fp)].sort();
    if (sg.join() !== sp.join() || sg.length === 0) return this.decide("equation-symbols", false);
    let ratio: number | null = null;
    let valid = 0;
    for (const env of probeEnvs(sg)) {
      const a = evalFloat(fg, env, this.w);
      const b = evalFloat(fp, env, this.w);
      if (Number.isFinite(a) !== Number.isFinite(b)) return this.decide("equation-domain", false);
      if (!Number.isFinite(a)) continue;
      if (Math.abs(b) < 1e-12) {
        if (Math.abs(a) > 1e-9) return this.decide("equation", false);
        continue;
      }
      const r = a / b;
      if (ratio === null) ratio = r;
      else if (!close(r, ratio, 1e-9)) return this.decide("equation", false);
      valid++;
    }
    return this.decide("equation", valid >= 4 && ratio !== null && Math.abs(ratio) > 1e-12);
  }

  private intervals(a: Interval, b: Interval): boolean {
    return a.loOpen === b.loOpen && a.hiOpen === b.hiOpen && this.scalar(a.lo, b.lo) && this.scalar(a.hi, b.hi);
  }

  private containers(g: MathNode, p: MathNode): boolean {
    const gItems = g.k === "set" || g.k === "list" ? g.items : null;
    if (gItems) {
      const pItems = p.k === "set" || p.k === "list" ? p.items : gItems.length === 1 ? [p] : null;
      if (!pItems) return this.decide("set-vs-value", false);
      // Braces are a set: repeated elements collapse on both sides. A gold bare list stays a multiset.
      if (g.k === "set") return this.decide("set", this.multiset(this.distinct(gItems), this.distinct(pItems)));
      return this.decide("set", this.multiset(gItems, pItems));
    }
    if (g.k === "tuple") {
      if (g.items.length === 2 && unambiguousInterval(g)) {
        const pi = p.k === "tuple" ? asInterval(p) : null;
        return this.decide("interval", pi !== null && this.intervals(asInterval(g)!, pi));
      }
      const pItems =
        p.k === "tuple" && p.open === g.open && p.close === g.close ? p.items : p.k === "list" ? p.items : null;
      if (!pItems || pItems.length !== g.items.length) return this.decide("tuple", false);
      return this.decide(
        "tuple",
        g.items.every((it, i) => this.top(expand(it), expand(pItems[i]!))),
      );
    }
    if (g.k === "union") {
      if (p.k !== "union") return this.decide("union", false);
      return this.decide("union", this.multiset(g.parts, p.parts));
    }
    if (g.k === "matrix") {
      if (p.k !== "matrix" || p.rows.length !== g.rows.length || p.rows[0]!.length !== g.rows[0]!.length)
        return this.decide("matrix", false);
      return this.decide(
        "matrix",
        g.rows.every((r, i) => r.every((c, j) => this.scalar(c, p.rows[i]![j]!))),
      );
    }
    if (p.k === "set" || p.k === "list" || p.k === "tuple" || p.k === "union" || p.k === "matrix") {
      return this.decide("value-vs-set", false);
    }
    return this.scalar(g, p);
  }

  private multiset(gs: MathNode[], ps: MathNode[]): boolean {
    if (gs.length !== ps.length) return false;
    const used = new Array<boolean>(ps.length).fill(false);
    for (const g of gs) {
      const j = ps.findIndex((p, k) => !used[k] && new Comparator(this.opts, this.w).top(expand(g), expand(p)));
      if (j < 0) return false;
      used[j] = true;
    }
    return true;
  }

  /** The items with later repeats (equal by the comparison rules) removed. */
  private distinct(items: MathNode[]): MathNode[] {
    const out: MathNode[] = [];
    for (const it of items) {
      if (!out.some((o) => new Comparator(this.opts, this.w).top(expand(o), expand(it)))) out.push(it);
    }
    return out;
  }

  /**
   * Scalar expressions and percent signs (D-M5, issue 11). Two percent signs are compared as written (`20\%` is
   * never `0.2\%`). A sign on one side only gives two readings: the value (`20\%` = 0.2) and the spec's D-M5
   * reading for labels that drop the sign (`20\%` = 20). One side's sign is never read while the other's is dropped.
   */
  private scalar(g: MathNode, p: MathNode): boolean {
    if (g.k === "pct" && p.k === "pct") return this.value(g.a, p.a);
    if (g.k === "pct") return this.value(g, p) || this.value(g.a, p);
    if (p.k === "pct") return this.value(g, p) || this.value(g, p.a);
    return this.value(g, p);
  }

  private value(g: MathNode, p: MathNode): boolean {
    const sg = [...freeSymbols(g)].sort();
    const sp = [...freeSymbols(p)].sort();
    // A box that restates the problem (an integral, a limit, a determinant) is evaluated only when allowed.
    if (!this.opts.unsimplified && (needsCalculus(g) || needsCalculus(p))) return this.decide("unsimplified", false);
    const tol = isApproximate(g) || isApproximate(p) ? APPROX_TOLERANCE : 1e-9;
    if (sg.join() !== sp.join()) {
      // An unsimplified constant (`\sin^2 x+\cos^2 x` for 1) is probed, wide points included; two different
      // symbol sets are different answers (`2x` is not `2y`).
      if ((sg.length > 0 && sp.length > 0) || !this.opts.unsimplified) return this.decide("symbols", false);
      const r = probeEqual(g, p, sg.length ? sg : sp, this.w, { wide: true, tol });
      return this.decide("probe-constant", r === "equal");
    }
    if (sg.length === 0) return this.numeric(g, p);
    if (canon(g) === canon(p)) return this.decide("structural", true);
    const r = probeEqual(g, p, sg, this.w, { wide: false, tol });
    return this.decide(r === "domain" ? "probe-domain" : "probe", r === "equal");
  }

  private numeric(g: MathNode, p: MathNode): boolean {
    const ge = evalExact(g, this.w);
    const pe = evalExact(p, this.w);
    const dec = hasDecimal(g) || hasDecimal(p);
    if (!dec && ge && pe) return this.decide("exact", req(ge, pe));
    const gf = ge ? rtoNumber(ge) : evalFloat(g, {}, this.w);
    const pf = pe ? rtoNumber(pe) : evalFloat(p, {}, this.w);
    if (!Number.isFinite(gf) || !Number.isFinite(pf)) {
      const bothInf = Math.abs(gf) === Infinity && gf === pf && isInfinite(g) && isInfinite(p);
      return this.decide("non-finite", bothInf);
    }
    const tol = isApproximate(g) || isApproximate(p) ? APPROX_TOLERANCE : 1e-12;
    if (!dec) return this.decide("numeric", close(gf, pf, tol));
    if (gf !== 0 && Math.abs(gf) < 1e-4)
      return this.decide("significant-figures", Number(gf.toPrecision(6)) === Number(pf.toPrecision(6)));
    const places = this.opts.floatRounding;
    if (ge && pe) return this.decide("rounding", rroundScaled(ge, places) === rroundScaled(pe, places));
    if (Math.abs(gf) < 1e9 && Math.abs(pf) < 1e9) {
      const k = 10 ** places;
      return this.decide("rounding", Math.round(gf * k) === Math.round(pf * k));
    }
    return this.decide("rounding", close(gf, pf, 1e-12));
  }
}
