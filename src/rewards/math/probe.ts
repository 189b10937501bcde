/**
 * Seeded numeric probing of symbolic answers (spec D-M8): both sides are evaluated at fixed points and must agree at
 * every point where they are defined. Two refinements (issue 11):
 * - a removable singularity is not a domain difference: where only one side is defined, the point is moved by
 *   1e-3·(1+|v|) in every symbol and tried again, so `\frac{x^2-4}{x-2}` equals `x+2` even when 2 is a probe point,
 *   while `\ln x^2` and `2\ln x` (different on a whole half-line) still differ;
 * - `wide` adds four points of magnitude 10 to 10^4, used when one side has no free symbols and the other does
 *   (`\sin^2 x+\cos^2 x` against 1): a claimed constant must hold far from the origin too, which defeats answers
 *   such as `3+\lfloor x^2/1000\rfloor` that are constant only near it.
 * Every evaluation is charged to the comparison's Work meter.
 */
import { Rng } from "../../util/index.js";
import type { MathNode } from "./ast.js";
import { NODE_COST, type Work } from "./budget.js";
import { evalFloat } from "./evaluate.js";

const PROBES = 8;
const WIDE = 4;
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
/** Wide probe values per slot: ± 10^(1..4) times a seeded factor in [1, 2). */
const WIDE_TABLE: number[][] = (() => {
  const rng = new Rng(20_261_201);
  return Array.from({ length: 16 }, () =>
    Array.from({ length: WIDE }, (_, j) => (j % 2 === 0 ? 1 : -1) * 10 ** (j + 1) * (1 + rng.random())),
  );
})();

/** The probe environments for a list of symbols (same symbols, same values, every call). */
export function probeEnvs(symbols: string[], wide = false): Record<string, number>[] {
  const envs = Array.from({ length: PROBES }, (_, j) => {
    const env: Record<string, number> = {};
    symbols.forEach((s, k) => (env[s] = PROBE_TABLE[k % 16]![(j + Math.floor(k / 16)) % PROBES]!));
    return env;
  });
  if (!wide) return envs;
  for (let j = 0; j < WIDE; j++) {
    const env: Record<string, number> = {};
    symbols.forEach((s, k) => (env[s] = WIDE_TABLE[k % 16]![(j + Math.floor(k / 16)) % WIDE]!));
    envs.push(env);
  }
  return envs;
}

/** Relative closeness used for irrational values and probes. */
export function close(a: number, b: number, rel: number): boolean {
  return Math.abs(a - b) <= rel * Math.max(1, Math.abs(a), Math.abs(b));
}

/** Outcome of probing: equal, different values, or defined on different domains. */
export type ProbeOutcome = "equal" | "differ" | "domain" | "too-few";

/** Options of one probe comparison. */
export interface ProbeOptions {
  /** Add the wide points (one side is a constant). */
  wide: boolean;
  /** Relative tolerance at each point. */
  tol: number;
}

function shifted(env: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(env)) out[k] = v + 1e-3 * (1 + Math.abs(v));
  return out;
}

/** Probes `g` and `p` over `symbols`; "equal" needs every defined point to agree and at least half of them defined. */
export function probeEqual(g: MathNode, p: MathNode, symbols: string[], w: Work, o: ProbeOptions): ProbeOutcome {
  const envs = probeEnvs(symbols, o.wide);
  w.spend(NODE_COST * envs.length * (1 + symbols.length));
  let valid = 0;
  for (const env0 of envs) {
    let env = env0;
    let a = evalFloat(g, env, w);
    let b = evalFloat(p, env, w);
    if (Number.isFinite(a) !== Number.isFinite(b)) {
      // A removable singularity (a hole at one point) is moved off; a real domain difference persists.
      env = shifted(env0);
      a = evalFloat(g, env, w);
      b = evalFloat(p, env, w);
      if (Number.isFinite(a) !== Number.isFinite(b)) return "domain";
    }
    if (!Number.isFinite(a)) continue;
    if (!close(a, b, o.tol)) return "differ";
    valid++;
  }
  return valid >= envs.length / 2 ? "equal" : "too-few";
}

/** True when `node` (with free symbols) takes one and the same finite value at every probe point: a constant. */
export function isConstantValued(node: MathNode, symbols: string[], w: Work): boolean {
  let first: number | null = null;
  let valid = 0;
  for (const env of probeEnvs(symbols, true)) {
    const v = evalFloat(node, env, w);
    if (!Number.isFinite(v)) continue;
    if (first === null) first = v;
    else if (!close(v, first, 1e-12)) return false;
    valid++;
  }
  return valid >= PROBES / 2;
}
