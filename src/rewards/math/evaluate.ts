/**
 * Evaluation of maths nodes: exact (rational, BigInt) where the value is rational, floating point otherwise (under
 * an assignment of the free symbols, which probe.ts uses for D-M8). Departure from the spec: "high precision" is
 * IEEE double (about 16 digits) rather than 30 digits; the acceptance tolerance (1e-12 relative) is well above it.
 * Work is bounded twice (D-M10, issue 11): by size (exact results stop at MAX_EXACT_BITS, about 10,000 digits, and
 * fall back to floating point; factorials to 1,000 exactly and 170 in floating point; a float binomial C(n, k) with
 * min(k, n-k) ≥ 1,024 is at least 2^1024, so it is +Infinity without a loop) and by work: every node visit and every
 * BigInt operation spends units from one Work meter (budget.ts), which throws past its limit.
 */
import {
  bitLength,
  MAX_EXACT_BITS,
  type MathNode,
  type Rational,
  R1,
  radd,
  rdiv,
  rmul,
  rpow,
  rat,
  risInt,
  rtoNumber,
} from "./ast.js";
import { NODE_COST, Work } from "./budget.js";
import { detExact, detFloat, integrate, limit } from "./numeric.js";

/** Symbols that are constants, not free variables. */
const CONSTANTS = new Set(["pi", "e", "inf"]);

/** Free symbols of a node (constants and bound variables of integrals and limits excluded). */
export function freeSymbols(node: MathNode, out = new Set<string>()): Set<string> {
  switch (node.k) {
    case "int":
    case "lim": {
      const inner = freeSymbols(node.body);
      inner.delete(node.v);
      for (const x of inner) out.add(x);
      for (const b of node.k === "int" ? [node.lo, node.hi] : [node.to]) freeSymbols(b, out);
      break;
    }
    case "sym":
      if (!CONSTANTS.has(node.name)) out.add(node.name);
      break;
    case "num":
    case "text":
    case "choice":
      break;
    case "add":
    case "mul":
    case "fn":
      for (const a of node.args) freeSymbols(a, out);
      break;
    case "neg":
    case "pct":
      freeSymbols(node.a, out);
      break;
    case "div":
    case "pow":
      freeSymbols(node.a, out);
      freeSymbols(node.b, out);
      break;
    case "pm":
      if (node.a) freeSymbols(node.a, out);
      freeSymbols(node.b, out);
      break;
    case "tuple":
    case "set":
    case "list":
      for (const a of node.items) freeSymbols(a, out);
      break;
    case "rel":
      for (const a of node.items) freeSymbols(a, out);
      break;
    case "union":
      for (const a of node.parts) freeSymbols(a, out);
      break;
    case "matrix":
      for (const r of node.rows) for (const a of r) freeSymbols(a, out);
      break;
  }
  return out;
}

/** True when any number literal in the node was written as a decimal (the rounding rule applies). */
export function hasDecimal(node: MathNode): boolean {
  switch (node.k) {
    case "num":
      return node.dec;
    case "add":
    case "mul":
    case "fn":
      return node.args.some(hasDecimal);
    case "neg":
    case "pct":
      return hasDecimal(node.a);
    case "div":
    case "pow":
      return hasDecimal(node.a) || hasDecimal(node.b);
    case "int":
      return hasDecimal(node.body) || hasDecimal(node.lo) || hasDecimal(node.hi);
    case "lim":
      return hasDecimal(node.body) || hasDecimal(node.to);
    default:
      return false;
  }
}

/** True when some node of the tree passes `test` (numbers, operators and functions are searched; containers are not). */
function anyNode(node: MathNode, test: (n: MathNode) => boolean): boolean {
  if (test(node)) return true;
  switch (node.k) {
    case "add":
    case "mul":
    case "fn":
      return node.args.some((a) => anyNode(a, test));
    case "neg":
    case "pct":
      return anyNode(node.a, test);
    case "div":
    case "pow":
      return anyNode(node.a, test) || anyNode(node.b, test);
    default:
      return false;
  }
}

/** True when the value comes from quadrature or a limit (compared at APPROX_TOLERANCE, not 1e-12). */
export const isApproximate = (node: MathNode): boolean => anyNode(node, (n) => n.k === "int" || n.k === "lim");

/** True when the value needs calculus or a determinant: a restated problem unless `unsimplified` allows it. */
export const needsCalculus = (node: MathNode): boolean =>
  anyNode(node, (n) => n.k === "int" || n.k === "lim" || (n.k === "fn" && n.name === "det"));

/** Relative tolerance for values computed by quadrature or extrapolation (their own accuracy is 1e-10). */
export const APPROX_TOLERANCE = 1e-9;

/** A rational within the digit budget, or null (the caller falls back to floating point). */
const sized = (r: Rational): Rational | null => (bitLength(r.n) + bitLength(r.d) > MAX_EXACT_BITS ? null : r);

/**
 * Exact rational value, or null when the value is not rational or is too large to compute exactly (D-M10). Every
 * node and BigInt operation is charged to `w`, which throws WorkLimitExceeded when spent.
 */
export function evalExact(node: MathNode, w: Work = new Work()): Rational | null {
  w.spend(NODE_COST);
  switch (node.k) {
    case "num":
      return node.v;
    case "add":
    case "mul": {
      let acc: Rational = node.k === "add" ? { n: 0n, d: 1n } : R1;
      for (const a of node.args) {
        const v = evalExact(a, w);
        if (!v) return null;
        w.rational(acc, v);
        const r = sized(node.k === "add" ? radd(acc, v) : rmul(acc, v));
        if (!r) return null;
        acc = r;
      }
      return acc;
    }
    case "neg": {
      const v = evalExact(node.a, w);
      return v && { n: -v.n, d: v.d };
    }
    case "pct": {
      const v = evalExact(node.a, w);
      return v && rdiv(v, { n: 100n, d: 1n });
    }
    case "div": {
      const a = evalExact(node.a, w);
      const b = a && evalExact(node.b, w);
      if (!a || !b || b.n === 0n) return null;
      w.rational(a, b);
      return sized(rdiv(a, b));
    }
    case "pow": {
      const a = evalExact(node.a, w);
      const b = a && evalExact(node.b, w);
      if (!a || !b) return null;
      let r: Rational | null = null;
      if (risInt(b)) r = a.n === 0n && b.n < 0n ? null : rpow(a, b.n);
      else if (b.d === 2n && a.n >= 0n) {
        const root = exactSqrt(a);
        r = root && rpow(root, b.n);
      }
      if (r) w.rational({ n: r.n * r.d, d: 1n }, { n: r.n * r.d, d: 1n }); // the last squaring; rpow bounds r's size
      return r;
    }
    case "fn":
      if (node.name === "det") return exactDet(node.args[0]!, w);
      return exactFn(node.name, node.args, w);
    default:
      return null;
  }
}

function exactDet(m: MathNode, w: Work): Rational | null {
  if (m.k !== "matrix") return null;
  const rows: Rational[][] = [];
  for (const r of m.rows) {
    const row: Rational[] = [];
    for (const c of r) {
      const v = evalExact(c, w);
      if (!v) return null;
      row.push(v);
    }
    rows.push(row);
  }
  const d = detExact(rows, w);
  return d && sized(d);
}

function isqrt(n: bigint): bigint | null {
  if (n < 0n) return null;
  if (n < 2n ** 52n) {
    const r = BigInt(Math.round(Math.sqrt(Number(n))));
    return r * r === n ? r : null;
  }
  return null;
}

function exactSqrt(a: Rational): Rational | null {
  const n = isqrt(a.n);
  const d = isqrt(a.d);
  return n !== null && d !== null ? rat(n, d) : null;
}

function exactFn(name: string, args: MathNode[], w: Work): Rational | null {
  const vs = args.map((a) => evalExact(a, w));
  const x = vs[0];
  if (!x || vs.some((v) => v === null)) return null;
  switch (name) {
    case "sqrt":
      return exactSqrt(x);
    case "abs":
      return { n: x.n < 0n ? -x.n : x.n, d: x.d };
    case "floor":
    case "ceil": {
      let q = x.n / x.d;
      if (x.n % x.d !== 0n && x.n < 0n === (name === "floor")) q += name === "floor" ? -1n : 1n;
      return rat(q);
    }
    case "fact": {
      if (!risInt(x) || x.n < 0n || x.n > 1000n) return null;
      let r = 1n;
      for (let k = 2n; k <= x.n; k++) {
        w.step(r);
        r *= k;
      }
      return sized(rat(r));
    }
    case "binom": {
      const k = vs[1]!;
      if (!risInt(x) || !risInt(k) || x.n < 0n || k.n < 0n || x.n > 100_000n) return null;
      if (k.n > x.n) return rat(0n);
      const kk = k.n < x.n - k.n ? k.n : x.n - k.n;
      if (kk > 2_000n) return null;
      let r = 1n;
      for (let j = 1n; j <= kk; j++) {
        w.step(r);
        r = (r * (x.n - kk + j)) / j;
      }
      return sized(rat(r));
    }
    case "root": {
      const n = vs[1]!;
      if (!risInt(n) || n.n < 2n || n.n > 64n) return null;
      const f = Math.round(Math.pow(Math.abs(rtoNumber(x)), 1 / Number(n.n)));
      const cand = rat(BigInt(x.n < 0n ? -f : f));
      const back = rpow(cand, n.n);
      return back && back.n === x.n && back.d === x.d && (x.n >= 0n || n.n % 2n === 1n) ? cand : null;
    }
    default:
      return null;
  }
}

/** Floating-point value under an assignment of the free symbols; NaN where undefined (real domain). Charged to w. */
export function evalFloat(node: MathNode, env: Record<string, number>, w: Work = new Work()): number {
  w.spend(NODE_COST);
  switch (node.k) {
    case "num":
      return rtoNumber(node.v);
    case "sym":
      if (node.name in env) return env[node.name]!;
      if (node.name === "pi") return Math.PI;
      if (node.name === "e") return Math.E;
      if (node.name === "inf") return Infinity;
      return NaN;
    case "add": {
      let s = 0;
      for (const a of node.args) s += evalFloat(a, env, w);
      return s;
    }
    case "mul": {
      let p = 1;
      for (const a of node.args) p *= evalFloat(a, env, w);
      return p;
    }
    case "neg":
      return -evalFloat(node.a, env, w);
    case "pct":
      return evalFloat(node.a, env, w) / 100;
    case "div":
      return evalFloat(node.a, env, w) / evalFloat(node.b, env, w);
    case "pow": {
      const a = evalFloat(node.a, env, w);
      const b = evalFloat(node.b, env, w);
      if (a < 0 && !Number.isInteger(b)) {
        // Odd roots of negatives are real: (-8)^(1/3) = -2.
        const inv = 1 / b;
        if (Number.isInteger(Math.round(inv)) && Math.abs(inv - Math.round(inv)) < 1e-12 && Math.round(inv) % 2 !== 0)
          return -Math.pow(-a, b);
        return NaN;
      }
      return Math.pow(a, b);
    }
    case "fn":
      if (node.name === "det") {
        const m = node.args[0]!;
        return m.k === "matrix"
          ? detFloat(
              m.rows.map((r) => r.map((c) => evalFloat(c, env, w))),
              w,
            )
          : NaN;
      }
      return floatFn(
        node.name,
        node.args.map((a) => evalFloat(a, env, w)),
      );
    case "int":
      return integrate(bound(node.body, node.v, env, w), evalFloat(node.lo, env, w), evalFloat(node.hi, env, w), w);
    case "lim":
      return limit(bound(node.body, node.v, env, w), evalFloat(node.to, env, w), node.side, w);
    default:
      return NaN;
  }
}

/** The body as a function of its bound variable (one env object, rebound per call, not copied). */
function bound(body: MathNode, v: string, env: Record<string, number>, w: Work): (x: number) => number {
  const inner: Record<string, number> = { ...env };
  return (x) => {
    inner[v] = x;
    return evalFloat(body, inner, w);
  };
}

function floatFn(name: string, v: number[]): number {
  const x = v[0]!;
  switch (name) {
    case "sqrt":
      return Math.sqrt(x);
    case "root": {
      const n = v[1]!;
      if (!Number.isInteger(n) || n < 2) return NaN;
      return x < 0 ? (n % 2 === 1 ? -Math.pow(-x, 1 / n) : NaN) : Math.pow(x, 1 / n);
    }
    case "sin":
      return Math.sin(x);
    case "cos":
      return Math.cos(x);
    case "tan":
      return Math.tan(x);
    case "sec":
      return 1 / Math.cos(x);
    case "csc":
      return 1 / Math.sin(x);
    case "cot":
      return 1 / Math.tan(x);
    case "arcsin":
      return Math.asin(x);
    case "arccos":
      return Math.acos(x);
    case "arctan":
      return Math.atan(x);
    case "sinh":
      return Math.sinh(x);
    case "cosh":
      return Math.cosh(x);
    case "tanh":
      return Math.tanh(x);
    case "exp":
      return Math.exp(x);
    case "ln":
      return x > 0 ? Math.log(x) : NaN;
    case "log":
      return v.length > 1
        ? x > 0 && v[1]! > 0 && v[1] !== 1
          ? Math.log(x) / Math.log(v[1]!)
          : NaN
        : x > 0
          ? Math.log(x)
          : NaN;
    case "abs":
      return Math.abs(x);
    case "floor":
      return Math.floor(x);
    case "ceil":
      return Math.ceil(x);
    case "fact": {
      if (!Number.isInteger(x) || x < 0) return NaN;
      if (x > 170) return Infinity;
      let r = 1;
      for (let k = 2; k <= x; k++) r *= k;
      return r;
    }
    case "binom": {
      const k = v[1]!;
      if (!Number.isInteger(x) || !Number.isInteger(k) || k < 0 || x < 0) return NaN;
      if (k > x) return 0;
      const kk = Math.min(k, x - k);
      // C(n, kk) >= 2^kk when n >= 2kk, so from kk = 1,024 on the double is +Infinity: no loop (D-M10).
      if (kk >= 1_024) return Infinity;
      let r = 1;
      for (let j = 1; j <= kk; j++) r = (r * (x - kk + j)) / j;
      return r;
    }
    default:
      return NaN;
  }
}
