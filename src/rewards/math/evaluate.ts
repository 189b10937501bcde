/**
 * Evaluation of maths nodes: exact (rational, BigInt) where the value is rational, floating point otherwise, and
 * seeded numeric probing for expressions with free symbols (D-M8). Departure from the spec: "high precision" is
 * IEEE double (about 16 digits) rather than 30 digits; the acceptance tolerance (1e-12 relative) is well above it.
 * Work is bounded: exact powers by D-M10 (ast.ts), factorials to 1,000 exactly and 170 in floating point.
 */
import { Rng } from "../../util/index.js";
import { type MathNode, type Rational, R1, radd, rdiv, rmul, rpow, rat, risInt, rtoNumber } from "./ast.js";

/** Symbols that are constants, not free variables. */
const CONSTANTS = new Set(["pi", "e", "inf"]);

/** Free symbols of a node (constants excluded), sorted. */
export function freeSymbols(node: MathNode, out = new Set<string>()): Set<string> {
  switch (node.k) {
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
    default:
      return false;
  }
}

/** Exact rational value, or null when the value is not rational or is too large to compute exactly. */
export function evalExact(node: MathNode): Rational | null {
  switch (node.k) {
    case "num":
      return node.v;
    case "add": {
      let acc: Rational = { n: 0n, d: 1n };
      for (const a of node.args) {
        const v = evalExact(a);
        if (!v) return null;
        acc = radd(acc, v);
      }
      return acc;
    }
    case "mul": {
      let acc: Rational = R1;
      for (const a of node.args) {
        const v = evalExact(a);
        if (!v) return null;
        acc = rmul(acc, v);
      }
      return acc;
    }
    case "neg": {
      const v = evalExact(node.a);
      return v && { n: -v.n, d: v.d };
    }
    case "pct": {
      const v = evalExact(node.a);
      return v && rdiv(v, { n: 100n, d: 1n });
    }
    case "div": {
      const a = evalExact(node.a);
      const b = evalExact(node.b);
      return a && b && b.n !== 0n ? rdiv(a, b) : null;
    }
    case "pow": {
      const a = evalExact(node.a);
      const b = evalExact(node.b);
      if (!a || !b) return null;
      if (risInt(b)) return a.n === 0n && b.n < 0n ? null : rpow(a, b.n);
      if (b.d === 2n && a.n >= 0n) {
        const r = exactSqrt(a);
        return r && rpow(r, b.n);
      }
      return null;
    }
    case "fn":
      return exactFn(node.name, node.args);
    default:
      return null;
  }
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

function exactFn(name: string, args: MathNode[]): Rational | null {
  const vs = args.map(evalExact);
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
      if (x.n % x.d !== 0n && (x.n < 0n) === (name === "floor")) q += name === "floor" ? -1n : 1n;
      return rat(q);
    }
    case "fact": {
      if (!risInt(x) || x.n < 0n || x.n > 1000n) return null;
      let r = 1n;
      for (let k = 2n; k <= x.n; k++) r *= k;
      return rat(r);
    }
    case "binom": {
      const k = vs[1]!;
      if (!risInt(x) || !risInt(k) || x.n < 0n || k.n < 0n || x.n > 100_000n) return null;
      if (k.n > x.n) return rat(0n);
      const kk = k.n < x.n - k.n ? k.n : x.n - k.n;
      if (kk > 2_000n) return null;
      let r = 1n;
      for (let j = 1n; j <= kk; j++) r = (r * (x.n - kk + j)) / j;
      return rat(r);
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

/** Floating-point value under an assignment of the free symbols; NaN where undefined (real domain). */
export function evalFloat(node: MathNode, env: Record<string, number>): number {
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
      for (const a of node.args) s += evalFloat(a, env);
      return s;
    }
    case "mul": {
      let p = 1;
      for (const a of node.args) p *= evalFloat(a, env);
      return p;
    }
    case "neg":
      return -evalFloat(node.a, env);
    case "pct":
      return evalFloat(node.a, env) / 100;
    case "div":
      return evalFloat(node.a, env) / evalFloat(node.b, env);
    case "pow": {
      const a = evalFloat(node.a, env);
      const b = evalFloat(node.b, env);
      if (a < 0 && !Number.isInteger(b)) {
        // Odd roots of negatives are real: (-8)^(1/3) = -2.
        const inv = 1 / b;
        if (Number.isInteger(Math.round(inv)) && Math.abs(inv - Math.round(inv)) < 1e-12 && Math.round(inv) % 2 !== 0) return -Math.pow(-a, b);
        return NaN;
      }
      return Math.pow(a, b);
    }
    case "fn":
      return floatFn(node.name, node.args.map((a) => evalFloat(a, env)));
    default:
      return NaN;
  }
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
    case "sin": return Math.sin(x);
    case "cos": return Math.cos(x);
    case "tan": return Math.tan(x);
    case "sec": return 1 / Math.cos(x);
    case "csc": return 1 / Math.sin(x);
    case "cot": return 1 / Math.tan(x);
    case "arcsin": return Math.asin(x);
    case "arccos": return Math.acos(x);
    case "arctan": return Math.atan(x);
    case "sinh": return Math.sinh(x);
    case "cosh": return Math.cosh(x);
    case "tanh": return Math.tanh(x);
    case "exp": return Math.exp(x);
    case "ln": return x > 0 ? Math.log(x) : NaN;
    case "log": return v.length > 1 ? (x > 0 && v[1]! > 0 && v[1] !== 1 ? Math.log(x) / Math.log(v[1]!) : NaN) : x > 0 ? Math.log(x) : NaN;
    case "abs": return Math.abs(x);
    case "floor": return Math.floor(x);
    case "ceil": return Math.ceil(x);
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
      let r = 1;
      const kk = Math.min(k, x - k);
      for (let j = 1; j <= kk; j++) r = (r * (x - kk + j)) / j;
      return r;
    }
    default:
      return NaN;
  }
}

const PROBES = 8;
/** Fixed probe values per symbol slot (D-M8): integers in [-5,5]\{0}, reals in (-3,3), reals in (0,1). */
const PROBE_TABLE: number[][] = (() => {
  const rng = new Rng(20_260_101);
  const ints = [-5, -4, -3, -2, -1, 1, 2, 3, 4, 5];
  return Array.from({ length: 16 }, () =>
    Array.from({ length: PROBES }, (_, j) =>
      j < 3 ? ints[Math.floor(rng.random() * ints.length)]! : j < 6 ? rng.random() * 6 - 3 : 0.05 + rng.random() * 0.9,
    ),
  );
})();

/** The probe environments for a list of symbols (same symbols, same values, every call). */
export function probeEnvs(symbols: string[]): Record<string, number>[] {
  return Array.from({ length: PROBES }, (_, j) => {
    const env: Record<string, number> = {};
    symbols.forEach((s, k) => (env[s] = PROBE_TABLE[k % 16]![(j + Math.floor(k / 16)) % PROBES]!));
    return env;
  });
}

/** Relative closeness used for irrational values and probes. */
export function close(a: number, b: number, rel: number): boolean {
  return Math.abs(a - b) <= rel * Math.max(1, Math.abs(a), Math.abs(b));
}
