/**
 * The SIRL task's gold objectives, checked independently of the gold programs and of HiGHS. For a sample of each
 * family, the problem is rebuilt from its data (what the question states), and its optimum is found by a method
 * that shares nothing with the solver path: exhaustive search for the integer families (knapsack subsets,
 * assignment permutations, shift counts, integer production plans) and vertex enumeration for the linear programs
 * (every basic solution of the constraint system, solved by Gaussian elimination, the best feasible one kept).
 */
import { describe, expect, it } from "vitest";
import { drawProblem, FAMILIES, type DrawnProblem, type Family } from "../../src/tasks/optimisation-problems.js";
import { solveDrawn } from "../../src/tasks/optimisation.js";
import { Rng } from "../../src/util/index.js";

/** max c·x s.t. rows (a·x <= b, or = b), x >= 0 and x <= ub where given; brute force over the vertices. */
interface Lp {
  c: number[];
  le: [number[], number][];
  eq: [number[], number][];
  ub?: (number | null)[];
}

/** Solves the square system M x = r by Gaussian elimination with partial pivoting; null when singular. */
function solveSquare(m: number[][], r: number[]): number[] | null {
  const n = r.length;
  const a = m.map((row, i) => [...row, r[i]!]);
  for (let col = 0; col < n; col++) {
    let p = col;
    for (let i = col + 1; i < n; i++) if (Math.abs(a[i]![col]!) > Math.abs(a[p]![col]!)) p = i;
    if (Math.abs(a[p]![col]!) < 1e-9) return null;
    [a[col], a[p]] = [a[p]!, a[col]!];
    for (let i = 0; i < n; i++) {
      if (i === col) continue;
      const f = a[i]![col]! / a[col]![col]!;
      for (let k = col; k <= n; k++) a[i]![k]! -= f * a[col]![k]!;
    }
  }
  return a.map((row, i) => row[n]! / row[i]!);
}

/** The best objective over all basic feasible solutions (every equality active, n − |eq| inequalities active). */
function vertexMax(lp: Lp): number {
  const n = lp.c.length;
  const unit = (i: number, s: number) => Array.from({ length: n }, (_, k) => (k === i ? s : 0));
  const ineq: [number[], number][] = [
    ...lp.le,
    ...lp.c.map((_, i): [number[], number] => [unit(i, -1), 0]), // x_i >= 0
    ...(lp.ub ?? []).flatMap((u, i): [number[], number][] => (u === null ? [] : [[unit(i, 1), u]])),
  ];
  const need = n - lp.eq.length;
  let best = -Infinity;
  const choose = (start: number, picked: number[]): void => {
    if (picked.length === need) {
      const rows = [...lp.eq, ...picked.map((i) => ineq[i]!)];
      const x = solveSquare(
        rows.map((r) => r[0]),
        rows.map((r) => r[1]),
      );
      if (!x) return;
      const tol = 1e-7;
      const feasible =
        ineq.every(([a, b]) => a.reduce((s, v, k) => s + v * x[k]!, 0) <= b + tol * (1 + Math.abs(b))) &&
        lp.eq.every(([a, b]) => Math.abs(a.reduce((s, v, k) => s + v * x[k]!, 0) - b) <= tol * (1 + Math.abs(b)));
      if (feasible)
        best = Math.max(
          best,
          lp.c.reduce((s, v, k) => s + v * x[k]!, 0),
        );
      return;
    }
    for (let i = start; i <= ineq.length - (need - picked.length); i++) choose(i + 1, [...picked, i]);
  };
  choose(0, []);
  return best;
}

/** Exhaustive integer search: every x with 0 <= x_i <= ub_i; returns the best objective of the feasible ones. */
function integerSearch(
  ub: number[],
  objective: (x: number[]) => number,
  feasible: (x: number[]) => boolean,
  sense: 1 | -1,
): number {
  let best = -Infinity;
  const x = ub.map(() => 0);
  const walk = (i: number): void => {
    if (i === ub.length) {
      if (feasible(x)) best = Math.max(best, sense * objective(x));
      return;
    }
    for (let v = 0; v <= ub[i]!; v++) {
      x[i] = v;
      walk(i + 1);
    }
    x[i] = 0;
  };
  walk(0);
  return sense * best;
}

const dot = (a: readonly number[], b: readonly number[]) => a.reduce((s, v, i) => s + v * b[i]!, 0);

/** The optimum of a drawn problem, from its data alone; null when too large to enumerate here. */
function independentOptimum(p: DrawnProblem): number | null {
  const d = p.data as Record<string, any>;
  switch (p.family as Family) {
    case "knapsack": {
      const n = d.value.length as number;
      let best = 0;
      for (let mask = 0; mask < 1 << n; mask++) {
        let v = 0,
          w = 0;
        for (let i = 0; i < n; i++) if (mask & (1 << i)) ((v += d.value[i]), (w += d.weight[i]));
        if (w <= d.capacity) best = Math.max(best, v);
      }
      return best;
    }
    case "assignment": {
      const n = d.cost.length as number;
      let best = Infinity;
      const perm = (rest: number[], i: number, acc: number): void => {
        if (i === n) return void (best = Math.min(best, acc));
        rest.forEach((j, k) => perm([...rest.slice(0, k), ...rest.slice(k + 1)], i + 1, acc + d.cost[i][j]));
      };
      perm(
        Array.from({ length: n }, (_, j) => j),
        0,
        0,
      );
      return best;
    }
    case "scheduling": {
      const covers = (s: number, t: number) => (t - s + d.periods) % d.periods < d.length;
      const ub = Array.from({ length: d.periods }, () => Math.max(...d.need));
      const ok = (x: number[]) =>
        d.need.every((nt: number, t: number) => x.reduce((a, v, s) => a + (covers(s, t) ? v : 0), 0) >= nt);
      return integerSearch(ub, (x) => dot(x, d.wage), ok, -1);
    }
    case "production": {
      const le: [number[], number][] = d.usage.map((row: number[], j: number) => [row, d.capacity[j]]);
      if (!d.integer) return vertexMax({ c: d.profit, le, eq: [] });
      const ub = d.profit.map((_: number, i: number) =>
        Math.min(...d.usage.map((row: number[], j: number) => Math.floor(d.capacity[j] / row[i]!))),
      );
      if (ub.reduce((a: number, u: number) => a * (u + 1), 1) > 3e6) return null;
      return integerSearch(
        ub,
        (x) => dot(x, d.profit),
        (x) => le.every(([a, b]) => dot(a, x) <= b),
        1,
      );
    }
    case "diet": // min cost·x s.t. content·x >= need  ⇔  max −cost·x s.t. −content·x <= −need
      return -vertexMax({
        c: d.cost.map((v: number) => -v),
        le: d.content.map((row: number[], j: number) => [row.map((v) => -v), -d.need[j]]),
        eq: [],
      });
    case "transport": {
      const P = d.plants.length as number,
        S = d.stores.length as number;
      const row = (f: (k: number) => number) => Array.from({ length: P * S }, (_, k) => f(k));
      const le = d.supply.map((s: number, i: number) => [row((k) => (Math.floor(k / S) === i ? 1 : 0)), s]);
      const eq = d.demand.map((q: number, j: number) => [row((k) => (k % S === j ? 1 : 0)), q]);
      const c = row((k) => -d.cost[Math.floor(k / S)][k % S]); // variable k ships plant ⌊k/S⌋ → store k mod S
      return -vertexMax({ c, le, eq });
    }
    case "blending": {
      const T = d.total as number;
      return -vertexMax({
        c: d.cost.map((v: number) => -v),
        eq: [[d.cost.map(() => 1), T]],
        le: [
          [d.grade.map((g: number) => -g), -d.lo * T],
          [d.grade, d.hi * T],
        ],
        ub: d.avail,
      });
    }
  }
}

describe("SIRL gold objectives, independently", () => {
  it.each([...FAMILIES])(
    "%s: the gold objective is the optimum found by exhaustive search or vertex enumeration",
    (family) => {
      const rng = new Rng(2024).split(family);
      let checked = 0;
      for (let draw = 0; draw < 40 && checked < 4; draw++) {
        const p = drawProblem(rng, family);
        const want = independentOptimum(p);
        if (want === null) continue;
        const gold = solveDrawn(p).objective;
        expect(gold, `${family} draw ${draw}: ${JSON.stringify(p.data)}`).toBeCloseTo(want, 6);
        checked++;
      }
      expect(checked).toBe(4);
    },
  );

  it("the vertex enumerator is right on a hand-solved LP", () => {
    // max 3x + 2y s.t. x + y <= 4, x + 3y <= 6, x <= 3: vertices (0,0) (3,0) (3,1) (0,2) → best 3·3 + 2·1 = 11.
    expect(
      vertexMax({
        c: [3, 2],
        le: [
          [[1, 1], 4],
          [[1, 3], 6],
        ],
        eq: [],
        ub: [3, null],
      }),
    ).toBeCloseTo(11, 12);
  });
});
