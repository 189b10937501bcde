/**
 * Periodic cubic interpolating spline on a uniform parameter grid (closed curves: the racing line is a closed
 * spline through the optimised points, so its heading and curvature are continuous).
 *
 * Second derivatives solve the cyclic tridiagonal system M_{i-1} + 4 M_i + M_{i+1} = 6 (y_{i+1} − 2 y_i + y_{i-1}) / h²,
 * by Gauss–Seidel: the matrix is strictly diagonally dominant (4 against 1 + 1), so the error halves per sweep and
 * 80 sweeps reach machine precision. A fixed sweep count keeps the result deterministic.
 */

/** A periodic cubic spline through `values` at t = i·h, i = 0..M−1, with period M·h. */
export class PeriodicSpline {
  readonly count: number;
  readonly h: number;
  private readonly y: Float64Array;
  private readonly m: Float64Array;

  constructor(values: ArrayLike<number>, h: number) {
    const M = values.length;
    if (M < 4) throw new RangeError(`PeriodicSpline: need at least 4 points, got ${M}`);
    if (!(h > 0)) throw new RangeError(`PeriodicSpline: spacing h must be > 0, got ${h}`);
    this.count = M;
    this.h = h;
    this.y = Float64Array.from(values);
    const rhs = new Float64Array(M);
    for (let i = 0; i < M; i++) {
      const prev = this.y[(i - 1 + M) % M]!;
      const next = this.y[(i + 1) % M]!;
      rhs[i] = (6 * (next - 2 * this.y[i]! + prev)) / (h * h);
    }
    const m = new Float64Array(M);
    for (let sweep = 0; sweep < 80; sweep++) {
      for (let i = 0; i < M; i++) m[i] = (rhs[i]! - m[(i - 1 + M) % M]! - m[(i + 1) % M]!) / 4;
    }
    this.m = m;
  }

  /** Period of the parameter. */
  get period(): number {
    return this.count * this.h;
  }

  /** Value, first and second derivative at parameter t (wrapped into one period). */
  eval(t: number): [number, number, number] {
    const M = this.count;
    const h = this.h;
    let tt = t % this.period;
    if (tt < 0) tt += this.period;
    let i = Math.floor(tt / h);
    if (i >= M) i = M - 1;
    const j = (i + 1) % M;
    const a = (tt - i * h) / h; // 0..1 within the segment
    const b = 1 - a;
    const yi = this.y[i]!;
    const yj = this.y[j]!;
    const mi = this.m[i]!;
    const mj = this.m[j]!;
    const value = b * yi + a * yj + (((b * b * b - b) * mi + (a * a * a - a) * mj) * (h * h)) / 6;
    const d1 = (yj - yi) / h + ((-(3 * b * b - 1) * mi + (3 * a * a - 1) * mj) * h) / 6;
    const d2 = b * mi + a * mj;
    return [value, d1, d2];
  }
}
