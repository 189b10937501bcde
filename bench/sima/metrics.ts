/**
 * The figures of `npm run bench:sima` from its jobs' evaluations (pure functions, tested in test/bench/sima.test.ts):
 * success per task kind from per-composition counts, the gains of an arm over the start at the start's best
 * decoding, and the table the bench prints.
 */
import { gainOverBest } from "../harness/index.js";
import type { SimaEval } from "./settings.js";

/** Greedy success per task kind (the part of a composition before ":"), as a fraction; kinds in first-seen order. */
export function successByKind(byComposition: SimaEval["byComposition"]): Record<string, number> {
  const sums: Record<string, { ok: number; n: number }> = {};
  for (const [c, r] of Object.entries(byComposition)) {
    const kind = c.split(":")[0]!;
    const s = (sums[kind] ??= { ok: 0, n: 0 });
    s.ok += r.ok;
    s.n += r.n;
  }
  return Object.fromEntries(Object.entries(sums).map(([k, s]) => [k, s.n ? s.ok / s.n : NaN]));
}

/** Greedy success over the compositions in `held` (held out of training), or NaN when none was evaluated. */
export function heldOutSuccess(byComposition: SimaEval["byComposition"], held: readonly string[]): number {
  let ok = 0,
    n = 0;
  for (const c of held) {
    ok += byComposition[c]?.ok ?? 0;
    n += byComposition[c]?.n ?? 0;
  }
  return n ? ok / n : NaN;
}

/** One seed's figures: each arm's gain over the start (at the start's best decoding) and the per-kind deltas. */
export function seedFigures(start: SimaEval, rl: SimaEval, control: SimaEval | null, unseenKind: string) {
  const g = gainOverBest(start.pass, rl.pass);
  const startKinds = successByKind(start.byComposition);
  const rlKinds = successByKind(rl.byComposition);
  return {
    decoding: g.decoding,
    rl: g.atStartBest,
    bestVsBest: g.bestVsBest,
    control: control ? gainOverBest(start.pass, control.pass).atStartBest : undefined,
    unseenKind: (rlKinds[unseenKind] ?? NaN) - (startKinds[unseenKind] ?? NaN),
    arithmetic: rl.arithmetic - start.arithmetic,
    kinds: Object.fromEntries(Object.keys({ ...startKinds, ...rlKinds }).map((k) => [k, [startKinds[k], rlKinds[k]]])),
  };
}

/** The per-kind table: one line per kind, start → RL greedy success (percent), marking the kinds SFT never saw. */
export function kindTable(kinds: Record<string, (number | undefined)[]>, sftKinds: readonly string[]): string[] {
  const pct = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? "  -  " : `${(100 * x).toFixed(1)}%`);
  return Object.entries(kinds).map(
    ([k, [a, b]]) =>
      `${k.padEnd(8)} ${pct(a).padStart(6)} → ${pct(b).padStart(6)}${sftKinds.includes(k) ? "" : "  (not in SFT)"}`,
  );
}
