/**
 * The maths answer AST and exact rational arithmetic (BigInt). Answers parse into these nodes; comparison
 * (compare.ts) and evaluation (evaluate.ts) read them. Rationals keep exact values exact, so `\frac{1}{3}` and
 * `\frac{333333}{1000000}` stay different while `0.5` and `\frac12` are equal.
 */

/** An exact rational n/d with d > 0 and gcd(n, d) = 1. */
export interface Rational {
  n: bigint;
  d: bigint;
}

/** A parsed maths answer (expression, container or relation). */
export type MathNode =
  | { k: "num"; v: Rational; dec: boolean } // dec: written with a decimal point or exponent (rounding rule applies)
  | { k: "sym"; name: string } // x, pi, e, inf, i, alpha, x_1
  | { k: "add"; args: MathNode[] }
  | { k: "mul"; args: MathNode[] }
  | { k: "neg"; a: MathNode }
  | { k: "div"; a: MathNode; b: MathNode }
  | { k: "pow"; a: MathNode; b: MathNode }
  | { k: "fn"; name: string; args: MathNode[] } // sqrt, root, sin, ln, log, abs, floor, ceil, fact, binom, ...
  | { k: "pct"; a: MathNode }
  | { k: "pm"; a: MathNode | null; b: MathNode } // a ± b (a null: ±b)
  | { k: "tuple"; open: string; close: string; items: MathNode[] } // (a,b), [a,b), (a,b,c)
  | { k: "set"; items: MathNode[] }
  | { k: "union"; parts: MathNode[] }
  | { k: "rel"; items: MathNode[]; ops: string[] } // a < b <= c; ops in = < > <= >= != in
  | { k: "list"; items: MathNode[] } // bare top-level comma list
  | { k: "matrix"; rows: MathNode[][] }
  | { k: "int"; v: string; body: MathNode; lo: MathNode; hi: MathNode } // definite integral; v is bound
  | { k: "lim"; v: string; to: MathNode; side: "" | "+" | "-"; body: MathNode } // limit; v is bound
  | { k: "text"; s: string }
  | { k: "choice"; letter: string };

/** Thrown inside the parser and evaluator; callers turn it into "unparseable". */
export class MathParseFail extends Error {}

const ZERO = 0n;
const ONE = 1n;

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** Euclid's gcd; once both values fit in 53 bits it continues on doubles (V8's BigInt remainder is slow). */
function gcd(a: bigint, b: bigint): bigint {
  if (a < ZERO) a = -a;
  if (b < ZERO) b = -b;
  while (b !== ZERO) {
    if (a <= SAFE && b <= SAFE) {
      let x = Number(a);
      let y = Number(b);
      while (y !== 0) {
        const t = x % y;
        x = y;
        y = t;
      }
      return BigInt(x);
    }
    const t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/** Builds a normalised rational; throws on a zero denominator. */
export function rat(n: bigint, d: bigint = ONE): Rational {
  if (d === ZERO) throw new MathParseFail("division by zero");
  if (d < ZERO) {
    n = -n;
    d = -d;
  }
  const g = gcd(n, d);
  return g === ONE || g === ZERO ? { n, d } : { n: n / g, d: d / g };
}

/** The rational one. */
export const R1: Rational = { n: ONE, d: ONE };

/** Exact sum. */
export const radd = (a: Rational, b: Rational): Rational => rat(a.n * b.d + b.n * a.d, a.d * b.d);
/** Exact product. */
export const rmul = (a: Rational, b: Rational): Rational => rat(a.n * b.n, a.d * b.d);
/** Exact quotient (throws on /0). */
export const rdiv = (a: Rational, b: Rational): Rational => rat(a.n * b.d, a.d * b.n);
/** Exact equality. */
export const req = (a: Rational, b: Rational): boolean => a.n === b.n && a.d === b.d;
/** True when the value is an integer. */
export const risInt = (a: Rational): boolean => a.d === ONE;

/** Bit length of |x| rounded up to whole hex digits (4 bits), cheap enough for the power bound and the meter. */
export function bitLength(x: bigint): number {
  if (x < ZERO) x = -x;
  if (x === ZERO) return 0;
  if (x > SAFE) return x.toString(16).length * 4;
  // Below 2^53: count bits without building a string.
  const n = Number(x);
  const hi = Math.floor(n / 4_294_967_296);
  const bits = hi > 0 ? 64 - Math.clz32(hi) : 32 - Math.clz32(n);
  return Math.ceil(bits / 4) * 4;
}

/** Largest exact result we compute: about 10,000 decimal digits (D-M10). */
export const MAX_EXACT_BITS = 33_300;

/** Exact integer power with the D-M10 bound; returns null when the result would be too large. */
export function rpow(a: Rational, e: bigint): Rational | null {
  if (e > 10_000n || e < -10_000n) return a.n === a.d || a.n === ZERO ? a : null;
  const k = Number(e < ZERO ? -e : e);
  if ((bitLength(a.n) + bitLength(a.d)) * k > MAX_EXACT_BITS) return null;
  const r = rat(a.n ** BigInt(k), a.d ** BigInt(k));
  return e < ZERO ? rdiv(R1, r) : r;
}

/** Float value of a rational (may be ±Infinity or 0 for extreme values). */
export function rtoNumber(a: Rational): number {
  const n = Number(a.n);
  const d = Number(a.d);
  if (Number.isFinite(n) && Number.isFinite(d)) return n / d;
  // Scale both down to keep the ratio finite.
  const shift = BigInt(Math.max(bitLength(a.n), bitLength(a.d)) - 1000);
  return Number(a.n >> (shift > 0n ? shift : 0n)) / Number(a.d >> (shift > 0n ? shift : 0n));
}

/** Rounds a rational to `places` decimals (half away from zero), as a scaled integer. */
export function rroundScaled(a: Rational, places: number): bigint {
  const scaled = a.n * 10n ** BigInt(places);
  const q = scaled / a.d;
  const r = scaled - q * a.d;
  const twice = (r < ZERO ? -r : r) * 2n;
  if (twice >= a.d) return scaled < ZERO ? q - ONE : q + ONE;
  return q;
}

/** Readable form of a node for `info` (canonical enough to compare structurally). */
export function show(node: MathNode): string {
  switch (node.k) {
    case "num":
      return node.v.d === ONE ? node.v.n.toString() : `${node.v.n}/${node.v.d}`;
    case "sym":
      return node.name;
    case "add":
      return `(${node.args.map(show).join("+")})`;
    case "mul":
      return `(${node.args.map(show).join("*")})`;
    case "neg":
      return `-${show(node.a)}`;
    case "div":
      return `(${show(node.a)})/(${show(node.b)})`;
    case "pow":
      return `(${show(node.a)})^(${show(node.b)})`;
    case "fn":
      return `${node.name}(${node.args.map(show).join(",")})`;
    case "pct":
      return `${show(node.a)}%`;
    case "pm":
      return `${node.a ? show(node.a) : ""}±${show(node.b)}`;
    case "tuple":
      return `${node.open}${node.items.map(show).join(",")}${node.close}`;
    case "set":
      return `{${node.items.map(show).join(",")}}`;
    case "union":
      return node.parts.map(show).join("∪");
    case "rel":
      return node.items.map((it, i) => (i === 0 ? show(it) : `${node.ops[i - 1]}${show(it)}`)).join("");
    case "list":
      return node.items.map(show).join(", ");
    case "matrix":
      return `[${node.rows.map((r) => r.map(show).join(" & ")).join("; ")}]`;
    case "int":
      return `int(${show(node.body)},${node.v},${show(node.lo)},${show(node.hi)})`;
    case "lim":
      return `lim(${show(node.body)},${node.v},${show(node.to)}${node.side})`;
    case "text":
      return `text(${node.s})`;
    case "choice":
      return `choice(${node.letter})`;
  }
}
