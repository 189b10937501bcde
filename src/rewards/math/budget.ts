/**
 * The work budget of one maths comparison (D-M10, issue 11). Every evaluation step spends units from one meter, so
 * a hostile answer (a huge binomial, a factorial tower, a long chain of big-number products, a nested integral) ends
 * in a defined outcome after bounded work, never after a timer: the same input always takes the same path, on a busy
 * machine or a quiet one. A unit is about 10 ns of one core here (calibrated on 2026-12-01): a node visit costs
 * NODE_COST; an integer BigInt operation costs the product of its operands' sizes in 64-bit limbs; a fractional one
 * also normalises by gcd, which V8 does in roughly 12 µs·L² for L limbs, so it is charged RAT_BASE + RAT_SQUARE·L².
 * The counter is exposed (`info.work` of `checkMath`) so tests bound work instead of time.
 */
import { bitLength, MathParseFail, type Rational } from "./ast.js";

/** Units one check may spend (about 0.1 s of one core). */
export const MATH_WORK_LIMIT = 10_000_000;
/** Units charged per node visited by an evaluator. */
export const NODE_COST = 50;
const RAT_BASE = 500;
const RAT_SQUARE = 1_500;

/** Thrown when a comparison has spent its budget; the comparison then decides "not equal" (rule `work-limit`). */
export class WorkLimitExceeded extends MathParseFail {}

/** 64-bit limbs of |x| (at least 1). */
export function limbs(x: bigint): number {
  return Math.max(1, Math.ceil(bitLength(x) / 64));
}

/** Limbs of a rational's numerator and denominator together. */
export function ratLimbs(a: Rational): number {
  return limbs(a.n) + limbs(a.d);
}

/** A work meter. `spend` throws WorkLimitExceeded once `used` passes `limit`. */
export class Work {
  used = 0;
  constructor(readonly limit: number = MATH_WORK_LIMIT) {}

  /** Spends `units`; throws past the limit. */
  spend(units: number): void {
    this.used += units;
    if (this.used > this.limit) throw new WorkLimitExceeded(`work budget of ${this.limit} units exceeded`);
  }

  /** Charges one exact rational operation on `a` and `b` (product, then gcd normalisation unless both are integers). */
  rational(a: Rational, b: Rational): void {
    if (a.d === 1n && b.d === 1n) {
      this.spend(NODE_COST + limbs(a.n) * limbs(b.n));
      return;
    }
    const l = Math.max(ratLimbs(a), ratLimbs(b));
    this.spend(RAT_BASE + RAT_SQUARE * l * l);
  }

  /** Charges one step of a BigInt loop (factorial, binomial) on a running value `r`. */
  step(r: bigint): void {
    this.spend(50 + 25 * limbs(r));
  }

  /** Units left. */
  get left(): number {
    return Math.max(0, this.limit - this.used);
  }
}
