/**
 * The stage-2 bonus `sirl-solution-hit` (docs/solver-and-kernel.md "Stage-2 solution hit"): it matches solution
 * values as a multiset, so a fixed program that ignores the problem hits values such as 0 and round numbers by
 * chance. It pays only when the objective matches. Several fixed programs over generated problems: the old rule
 * (the hit rate alone) would have paid some of them, and none is paid now; an honest model still is.
 */
import { afterAll, describe, expect, it } from "vitest";
import { rewards } from "../../src/rewards/registry.js";
import { closeSharedPool } from "../../src/rewards/sandbox/pool.js";
import { checkSirlCode } from "../../src/rewards/solver/check-job.js";
import { scoreSirl, solutionHitRate, type SirlGold } from "../../src/rewards/solver/reward.js";
import { createOptimisationTask } from "../../src/tasks/optimisation.js";

afterAll(() => closeSharedPool());

const wrap = (code: string, lang = "js") =>
  `<think>t</think>\n<model>m</model>\n<code>\n\`\`\`${lang}\n${code}\n\`\`\`\n</code>`;

/** Programs that never read the problem: their columns take values common in small textbook optima. */
const FIXED: [string, string, string][] = [
  [
    "all columns 0 but one",
    "js",
    `const m = new Model("maximize"); m.addConstraint({ a: 1 }, "<=", 10, "c");
    for (const v of ["b", "c", "d", "e", "f"]) m.addConstraint({ [v]: 1 }, "<=", 0, v);
    m.setObjective({ a: 1, b: 1, c: 1, d: 1, e: 1, f: 1 }); return m;`,
  ],
  [
    "round numbers",
    "js",
    `const m = new Model("maximize");
    [0, 0, 0, 5, 10, 20, 25, 50, 100].forEach((v, i) => m.addConstraint({ ["x" + i]: 1 }, "<=", v, "c" + i));
    const o = {}; for (let i = 0; i < 9; i++) o["x" + i] = 1; m.setObjective(o); return m;`,
  ],
  [
    "small integers",
    "js",
    `const m = new Model("maximize");
    for (let i = 0; i < 12; i++) m.addConstraint({ ["y" + i]: 1 }, "<=", i % 6, "c" + i);
    const o = {}; for (let i = 0; i < 12; i++) o["y" + i] = 1; m.setObjective(o); return m;`,
  ],
  [
    "an LP with zeros and ones",
    "lp",
    "Maximize\n obj: p + q + r + s\nSubject To\n c1: p <= 1\n c2: q <= 0\n" + " c3: r <= 0\n c4: s <= 2\nEnd",
  ],
  [
    "a minimisation at the origin plus one",
    "js",
    `const m = new Model("minimize");
    m.addConstraint({ u: 1 }, ">=", 1, "c"); m.addConstraint({ v: 1, w: 1 }, ">=", 0, "d");
    m.setObjective({ u: 1, v: 1, w: 1 }); return m;`,
  ],
];

const WEIGHTS = { format: 0.5, runs: 1, objective: 2, solutionHit: 1 };

describe("sirl-solution-hit needs the objective", () => {
  it("pays no fixed program on any of 8 generated problems, though the hit rate alone would have", async () => {
    const task = createOptimisationTask();
    const examples = task.generate("train", 8, 5);
    let oldRulePaid = 0;
    for (const [name, lang, code] of FIXED) {
      // The values the fixed model takes are the same on every problem: solve it once, in this process.
      const args = { source: code, seed: 0, timeoutMs: 5000, memoryMb: 64, solve: { timeLimitS: 10 } };
      const check = await checkSirlCode({ ...args, lang: lang as "js" | "lp" });
      expect(check.stage, name).toBe("solved");
      for (const e of examples) {
        const gold = e.gold as SirlGold;
        const r = await scoreSirl(wrap(code, lang), gold, { weights: WEIGHTS });
        expect(r.terms.runs, name).toBe(1);
        if (r.terms.objective === 1) continue; // a fixed model that happens to be right is paid, rightly
        if (solutionHitRate(gold.solution!, check.solve!.values) > 0) oldRulePaid++;
        expect(r.terms.solutionHit, `${name} on ${e.id}`).toBe(0);
        const input = { completion: wrap(code, lang), gold };
        const single = await rewards.score("sirl-solution-hit", input, { weights: WEIGHTS });
        expect(single.score, `${name} on ${e.id}`).toBe(0);
      }
    }
    // The test bites: under the old rule some of these fixed programs collected the bonus.
    expect(oldRulePaid).toBeGreaterThan(0);
  });

  it("still pays an honest model with the right objective", async () => {
    const task = createOptimisationTask();
    for (const e of task.generate("train", 4, 6)) {
      const r = await scoreSirl(e.goldCompletion, e.gold as SirlGold, { weights: WEIGHTS });
      expect(r.terms).toMatchObject({ objective: 1, solutionHit: 1 });
    }
  });

  it("pays nothing for the right values with the wrong objective", async () => {
    // Same optimal point (0, 20) as the gold, but the objective coefficients are wrong: 80 is expected, 40 is found.
    const code = `const m = new Model("maximize"); m.addConstraint({ x: 3, y: 2 }, "<=", 40, "l");
      m.addConstraint({ x: 1 }, "<=", 10, "c"); m.setObjective({ x: 1, y: 2 }); return m;`;
    const r = await scoreSirl(wrap(code), { objective: 80, solution: [0, 20] }, { weights: WEIGHTS });
    expect(r).toMatchObject({ terms: { runs: 1, objective: 0, solutionHit: 0 }, info: { objective: 40 } });
  });
});
