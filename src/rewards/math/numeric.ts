/**
 * Numeric procedures behind unsimplified answers (issue 11): determinants (exact by fraction-free elimination on
 * rationals, or floating point with partial pivoting), definite integrals (adaptive Gauss–Kronrod 7–15, QUADPACK's
 * qk15 rule, with infinite ends mapped onto a finite interval) and limits (Neville extrapolation of f at a + h·2^-k
 * towards h = 0). Each charges the caller's Work meter per function evaluation and has a fixed evaluation cap, so it
 * ends after bounded work. When the result is not trustworthy (no convergence, the two sides of a limit disagree)
 * the value is NaN, which compares equal to nothing: a missed match, never a false one.
 */
import { type Rational, R1, radd, rdiv, rmul } from "./ast.js";
import { NODE_COST, type Work } from "./budget.js";

/** Largest determinant computed (rows). */
export const MAX_DET_SIZE = 12;
/** Most subintervals one integral may split into (15 evaluations each). */
const MAX_PANELS = 200;
/** Relative accuracy an integral or limit must reach to count as a value. */
export const APPROX_ACCURACY = 1e-10;

/** Exact determinant of a square rational matrix (null when it is too large). */
export function detExact(m: Rational[][], w: Work): Rational | null {
  const n = m.length;
  if (n === 0 || n > MAX_DET_SIZE || m.some((r) => r.length !== n)) return null;
  const a = m.map((r) => [...r]);
  let det: Rational = R1;
  for (let c = 0; c < n; c++) {
    const p = a.findIndex((r, i) => i >= c && r[c]!.n !== 0n);
    if (p < 0) return { n: 0n, d: 1n };
    if (p !== c) {
      [a[p], a[c]] = [a[c]!, a[p]!];
      det = { n: -det.n, d: det.d };
    }
    const piv = a[c]![c]!;
    w.rational(det, piv);
    det = rmul(det, piv);
    for (let r = c + 1; r < n; r++) {
      if (a[r]![c]!.n === 0n) continue;
      w.rational(a[r]![c]!, piv);
      const f = rdiv(a[r]![c]!, piv);
      for (let k = c; k < n; k++) {
        w.rational(f, a[c]![k]!);
        a[r]![k] = radd(a[r]![k]!, rmul({ n: -f.n, d: f.d }, a[c]![k]!));
      }
    }
  }
  return det;
}

/** Floating-point determinant with partial pivoting (NaN for a non-square or too large matrix). */
export function detFloat(m: number[][], w: Work): number {
  const n = m.length;
  if (n === 0 || n > MAX_DET_SIZE || m.some((r) => r.length !== n)) return NaN;
  const a = m.map((r) => [...r]);
  let det = 1;
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(a[r]![c]!) > Math.abs(a[p]![c]!)) p = r;
    if (a[p]![c] === 0) return 0;
    if (p !== c) {
      [a[p], a[c]] = [a[c]!, a[p]!];
      det = -det;
    }
    det *= a[c]![c]!;
    for (let r = c + 1; r < n; r++) {
      const f = a[r]![c]! / a[c]![c]!;
      w.spend(n - c);
      for (let k = c; k < n; k++) a[r]![k]! -= f * a[c]![k]!;
    }
  }
  return det;
}

// QUADPACK qk15: Kronrod abscissae (descending, the last is 0) and weights; Gauss 7-point weights for xgk[1,3,5,7].
const XGK = [
  0.991455371120812639206854697526329, 0.949107912342758524526189684047851, 0.864864423359769072789712788640926,
  0.741531185599394439863864773280788, 0.586087235467691130294144845693013, 0.405845151377397166906606412076961,
  0.207784955007898467600689403773245, 0,
];
const WGK = [
  0.02293532201052922496373200805897, 0.063092092629978553290700663189204, 0.104790010322250183839876322541518,
  0.140653259715525918745189590510238, 0.16900472663926790282658342659855, 0.190350578064785409913256402421014,
  0.204432940075298892414161999234649, 0.209482141084727828012999174891714,
];
const WG = [
  0.129484966168869693270611432679082, 0.27970539148927666790146777142378, 0.381830050505118944950369775488975,
  0.417959183673469387755102040816327,
];

interface Panel {
  a: number;
  b: number;
  value: number;
  err: number;
}

function kronrod(f: (x: number) => number, a: number, b: number, w: Work): Panel {
  const c = (a + b) / 2;
  const h = (b - a) / 2;
  const fc = f(c);
  let k = fc * WGK[7]!;
  let g = fc * WG[3]!;
  for (let j = 0; j < 7; j++) {
    const x = h * XGK[j]!;
    const s = f(c - x) + f(c + x);
    k += WGK[j]! * s;
    if (j % 2 === 1) g += WG[(j - 1) / 2]! * s;
  }
  w.spend(15 * NODE_COST);
  return { a, b, value: k * h, err: Math.abs((k - g) * h) };
}

/** ∫ f over [lo, hi] (either end may be ±Infinity); NaN when it does not converge within the panel cap. */
export function integrate(f: (x: number) => number, lo: number, hi: number, w: Work): number {
  if (Number.isNaN(lo) || Number.isNaN(hi)) return NaN;
  if (lo === hi) return 0;
  if (lo > hi) return -integrate(f, hi, lo, w);
  if (lo === -Infinity && hi === Infinity) return integrate(f, -Infinity, 0, w) + integrate(f, 0, hi, w);
  // Infinite ends: x = lo + t/(1-t) on [lo, ∞), x = hi - (1-t)/t on (-∞, hi]; t in (0, 1).
  let g = f;
  let a = lo;
  let b = hi;
  if (hi === Infinity) {
    g = (t) => (t >= 1 ? 0 : f(lo + t / (1 - t)) / ((1 - t) * (1 - t)));
    [a, b] = [0, 1];
  } else if (lo === -Infinity) {
    g = (t) => (t <= 0 ? 0 : f(hi - (1 - t) / t) / (t * t));
    [a, b] = [0, 1];
  }
  const panels: Panel[] = [kronrod(g, a, b, w)];
  for (;;) {
    let total = 0;
    let err = 0;
    let worst = 0;
    for (let i = 0; i < panels.length; i++) {
      total += panels[i]!.value;
      err += panels[i]!.err;
      if (panels[i]!.err > panels[worst]!.err) worst = i;
    }
    if (!Number.isFinite(total)) return NaN;
    if (err <= APPROX_ACCURACY * Math.max(1, Math.abs(total)) * 0.01) return total;
    if (panels.length >= MAX_PANELS) return NaN;
    const p = panels[worst]!;
    const m = (p.a + p.b) / 2;
    panels.splice(worst, 1, kronrod(g, p.a, m, w), kronrod(g, m, p.b, w));
  }
}

/** One-sided limit of f(a + s·h) (or f(s/h) for an infinite a) as h → 0+, by Neville extrapolation; NaN if unsure. */
function oneSided(f: (x: number) => number, a: number, s: 1 | -1, w: Work): number {
  const scale = Math.max(1, Math.abs(a));
  const at = (h: number): number => (Number.isFinite(a) ? f(a + s * h * scale) : f(Math.sign(a) / h));
  const hs: number[] = [];
  const table: number[] = [];
  let best = NaN;
  let bestErr = Infinity;
  let prev = NaN;
  for (let k = 0; k < 14; k++) {
    const h = 0.25 * 2 ** -k;
    const v = at(h);
    w.spend(NODE_COST);
    if (!Number.isFinite(v)) return NaN;
    hs.push(h);
    table.push(v);
    // Neville: table[j] becomes the value at h = 0 of the polynomial through points j..k.
    for (let j = k - 1; j >= 0; j--) {
      table[j] = table[j + 1]! + ((table[j + 1]! - table[j]!) * hs[k]!) / (hs[j]! - hs[k]!);
    }
    const est = table[0]!;
    if (k > 0) {
      const e = Math.abs(est - prev);
      if (e < bestErr) [best, bestErr] = [est, e];
    }
    prev = est;
  }
  return bestErr <= APPROX_ACCURACY * Math.max(1, Math.abs(best)) ? best : NaN;
}

/** lim f(x) as x → a from `side` ("" two-sided: both sides must agree); NaN when it cannot be trusted. */
export function limit(f: (x: number) => number, a: number, side: "" | "+" | "-", w: Work): number {
  if (Number.isNaN(a)) return NaN;
  if (a === Infinity) return oneSided(f, a, 1, w);
  if (a === -Infinity) return oneSided(f, a, -1, w);
  if (side === "+") return oneSided(f, a, 1, w);
  if (side === "-") return oneSided(f, a, -1, w);
  const r = oneSided(f, a, 1, w);
  const l = oneSided(f, a, -1, w);
  return Math.abs(r - l) <= 1e-9 * Math.max(1, Math.abs(r)) ? (r + l) / 2 : NaN;
}
