/**
 * SIRL solver-checked reward (rewards spec §9): gold completions score full, and each adversarial case of §9.4 and
 * each decision D-S1..D-S6 scores as the spec says. Terms are reported unweighted; the default score is
 * 0.5·format + 1·runs + 2·objective.
 */
import { afterAll, describe, expect, it } from "vitest";
import { closeSharedPool } from "../../src/rewards/sandbox/pool.js";
import { scoreSirl, solutionHitRate, withinTolerance } from "../../src/rewards/solver/reward.js";
import { formatGraded } from "../../src/rewards/solver/completion.js";
import { createOptimisationTask } from "../../src/tasks/optimisation.js";

afterAll(() => closeSharedPool());

const wrap = (code: string, lang = "js", think = "reasoning") =>
  `<think>${think}</think>\n<model>max 5x + 4y</model>\n<code>\n\`\`\`${lang}\n${code}\n\`\`\`\n</code>`;

const honest = `const m = new Model("maximize");
m.addConstraint({ x: 3, y: 2 }, "<=", 40, "labour");
m.addConstraint({ x: 1 }, "<=", 10, "capacity");
m.setObjective({ x: 5, y: 4 });
return m;`;
const GOLD = { objective: 80 };

describe("sirl reward", () => {
  it("gives the gold completion full score on 200 generated problems", async () => {
    const task = createOptimisationTask();
    const examples = task.generate("train", 200, 11);
    const results = await Promise.all(examples.map((e) => task.score(e, e.goldCompletion)));
    const bad = results.map((r, i) => [i, r.score] as const).filter(([, s]) => s !== 3.5);
    expect(bad).toEqual([]);
  });

  it("scores an honest JS model 3.5", async () => {
    const r = await scoreSirl(wrap(honest), GOLD);
    expect(r).toMatchObject({ score: 3.5, terms: { format: 1, runs: 1, objective: 1 } });
  });

  it("accepts a plain CPLEX-LP block", async () => {
    const lp = "Maximize\n obj: 5 x + 4 y\nSubject To\n labour: 3 x + 2 y <= 40\n cap: x <= 10\nEnd";
    const r = await scoreSirl(wrap(lp, "lp"), GOLD);
    expect(r).toMatchObject({ score: 3.5, terms: { runs: 1, objective: 1 } });
  });

  it("pays a perturbed objective nothing for the objective term", async () => {
    const r = await scoreSirl(wrap(honest.replace("x: 5, y: 4", "x: 5, y: 4.1")), GOLD);
    expect(r).toMatchObject({ score: 1.5, terms: { format: 1, runs: 1, objective: 0 } });
  });

  it("gives an infeasible model runs 1 and objective 0", async () => {
    const r = await scoreSirl(wrap(honest.replace('"<=", 10', '">=", 100')), GOLD);
    expect(r).toMatchObject({ score: 1.5, terms: { runs: 1, objective: 0 }, info: { status: "Infeasible" } });
  });

  it("gives crashing code runs 0", async () => {
    const r = await scoreSirl(wrap("throw new Error('boom');"), GOLD);
    expect(r).toMatchObject({ score: 0.5, terms: { format: 1, runs: 0, objective: 0 } });
  });

  it("ignores a printed objective (§9.4 #1)", async () => {
    const r = await scoreSirl(
      wrap("console.log('Just print the best obj: 80'); return 'Just print the best obj: 80';"),
      GOLD,
    );
    expect(r.terms).toMatchObject({ runs: 0, objective: 0 });
  });

  it("rejects `min: 0 x` on a gold-0 example (§9.4 #2, D-S3)", async () => {
    const r = await scoreSirl(wrap("Minimize\n obj: 0 x\nSubject To\n c: x <= 3\nEnd", "lp"), { objective: 0 });
    expect(r).toMatchObject({ terms: { runs: 1, objective: 0 } });
    expect(String(r.info?.reason)).toMatch(/trivial/);
  });

  it("rejects a constant offset that hard-codes a guess (D-S3)", async () => {
    const r = await scoreSirl(wrap("Maximize\n obj: 0 x + 80\nSubject To\n c: x <= 3\nEnd", "lp"), GOLD);
    expect(r.terms.objective).toBe(0);
  });

  it("pays an honest model whose optimum is 0 (D-S2)", async () => {
    const code =
      'const m = new Model("minimize"); m.addConstraint({ x: 1, y: -1 }, ">=", -5); m.setObjective({ x: 2, y: 3 }); return m;';
    const r = await scoreSirl(wrap(code), { objective: 0 });
    expect(r).toMatchObject({ score: 3.5, terms: { objective: 1 } });
  });

  it("stops an infinite loop, a 2 GB array and require('fs') (§9.4 #3)", async () => {
    const opts = { timeoutMs: 300 };
    const [loop, bomb, fs] = await Promise.all([
      scoreSirl(wrap("while (true) {}"), GOLD, opts),
      scoreSirl(wrap("const a = new Float64Array(2 ** 28); return a.length;"), GOLD, opts),
      scoreSirl(wrap("return require('fs').readFileSync('/etc/passwd', 'utf8');"), GOLD, opts),
    ]);
    for (const r of [loop, bomb, fs]) expect(r).toMatchObject({ score: 0.5, terms: { runs: 0, objective: 0 } });
  });

  it("excludes an infeasible gold unless allowStatusGold (§9.4 #4, D-S4)", async () => {
    const contradictory = "Maximize\n obj: x\nSubject To\n a: x >= 3\n b: x <= 2\nEnd";
    expect((await scoreSirl(wrap(contradictory, "lp"), { status: "infeasible" })).score).toBeNull();
    const allowed = await scoreSirl(wrap(contradictory, "lp"), { status: "infeasible" }, { allowStatusGold: true });
    expect(allowed.terms.objective).toBe(1);
  });

  it("pays nothing for a time-limited incumbent (§9.4 #5, D-S6)", async () => {
    // A 0/1 multi-knapsack too big to prove optimal in 1 ms.
    const n = 60;
    const w = (i: number, j: number) => ((i * 37 + j * 101) % 47) + 3;
    const obj = Array.from({ length: n }, (_, i) => `${((i * 53) % 97) + 10} x${i}`).join(" + ");
    const rows = Array.from(
      { length: 5 },
      (_, j) => ` r${j}: ${Array.from({ length: n }, (_, i) => `${w(i, j)} x${i}`).join(" + ")} <= 500`,
    );
    const lp = `Maximize\n obj: ${obj}\nSubject To\n${rows.join("\n")}\nBinary\n ${Array.from({ length: n }, (_, i) => `x${i}`).join(" ")}\nEnd`;
    const r = await scoreSirl(wrap(lp, "lp"), { objective: 1 }, { timeLimitS: 0.001 });
    expect(r.terms).toMatchObject({ runs: 1, objective: 0 });
    expect(r.info?.status).not.toBe("Optimal");
  });

  it("never reads an LP inside <think> (§9.4 #6)", async () => {
    const text = "<think>```lp\nMaximize\n obj: 5 x + 4 y\nSubject To\n c: 3 x + 2 y <= 40\nEnd\n```</think>";
    const r = await scoreSirl(text, GOLD);
    expect(r).toMatchObject({ score: 0, terms: { format: 0, runs: 0 } });
  });

  it("scores format 0 for tags out of order but still runs the single code section", async () => {
    const text = `<model>m</model><think>t</think><code>\n\`\`\`js\n${honest}\n\`\`\`\n</code>`;
    const r = await scoreSirl(text, GOLD);
    expect(r).toMatchObject({ score: 3, terms: { format: 0, runs: 1, objective: 1 } });
  });

  it("returns null for a gold without objective or status (G2)", async () => {
    expect((await scoreSirl(wrap(honest), {})).score).toBeNull();
    expect((await scoreSirl(wrap(honest), { objective: Number.NaN })).score).toBeNull();
  });

  it("uses an explicit tolerance: either |d| <= 0.01 or |d| < 1e-6(|gold|+1) (D-S1)", () => {
    expect(withinTolerance(80, 80.01, 0.01, 1e-6)).toBe(true); // gold rounded to 2 places
    expect(withinTolerance(80, 80.02, 0.01, 1e-6)).toBe(false);
    expect(withinTolerance(1e7, 1e7 + 5, 0.01, 1e-6)).toBe(true); // relative criterion
    expect(withinTolerance(0, 0.009, 0.01, 1e-6)).toBe(true); // gold 0 is an ordinary target
    expect(withinTolerance(0, 0.009, 0, 1e-6)).toBe(false); // sirlEval: relative only
  });

  it("sirlEval preset: relative 1e-6 only", async () => {
    const r = await scoreSirl(wrap(honest), { objective: 80.005 }, { preset: "sirlEval" });
    expect(r.terms.objective).toBe(0);
    const d = await scoreSirl(wrap(honest), { objective: 80.005 });
    expect(d.terms.objective).toBe(1);
  });

  it("sirlCode preset: graded format in [0, 2] at weight 0.5 and answer weight 1", async () => {
    const r = await scoreSirl(wrap(honest), GOLD, { preset: "sirlCode" });
    expect(r).toMatchObject({ score: 0.5 * 2 + 1 + 1, terms: { format: 2 } });
    // Hand-computed: think tags missing (2 × −1/8), one order fault (think before model) → 2 − 0.25 − 1/3.
    expect(
      formatGraded("<model>m</model><code>c</code>", { think: "think", model: "model", code: "code" }),
    ).toBeCloseTo(2 - 0.25 - 1 / 3, 12);
  });

  it("adds the stage-2 solution-hit bonus when weighted", async () => {
    const r = await scoreSirl(
      wrap(honest),
      { objective: 80, solution: [0, 20] },
      { weights: { format: 0.5, runs: 1, objective: 2, solutionHit: 1 } },
    );
    expect(r).toMatchObject({ score: 4.5, terms: { solutionHit: 1 } });
    expect(solutionHitRate([1, 2, 2], [2, 1.0004, 7])).toBeCloseTo(2 / 3, 12);
  });
});

describe("optimisation task", () => {
  const task = createOptimisationTask();
  it("is deterministic, keeps train and test apart, and weights format 0.5, runs 1, objective 2", () => {
    const train = task.generate("train", 40, 5);
    expect(task.generate("train", 40, 5)).toEqual(train);
    const test = new Set(task.generate("test", 20, 5).map((e) => e.prompt));
    expect(train.filter((e) => test.has(e.prompt))).toEqual([]);
    expect(task.terms.map((t) => [t.name, t.weight])).toEqual([
      ["format", 0.5],
      ["runs", 1],
      ["objective", 2],
      ["solutionHit", 0],
    ]);
    expect(task.correctTerm).toBe("objective");
  });

  // The opening words of each family's question template (src/tasks/optimisation-problems.ts).
  const MARKERS: Record<string, RegExp> = {
    production: /^A workshop makes/,
    diet: /^A canteen plans/,
    transport: /^Plants /,
    knapsack: /^A hiker/,
    assignment: /^Assign each of/,
    scheduling: /^A help desk/,
    blending: /^A foundry blends/,
  };
  const familyOf = (prompt: string) => Object.keys(MARKERS).filter((f) => MARKERS[f]!.test(prompt));
  it("by default draws every family, each prompt from exactly one", () => {
    const seen = new Set<string>();
    for (const e of createOptimisationTask().generate("train", 60, 1)) {
      const f = familyOf(e.prompt);
      expect(f, e.prompt.slice(0, 60)).toHaveLength(1);
      seen.add(f[0]!);
    }
    expect([...seen].sort()).toEqual(Object.keys(MARKERS).sort());
  });
  it("restricted to one family draws only that family", () => {
    const fams = createOptimisationTask({ families: ["knapsack"] }).generate("train", 5, 1);
    expect(fams.map((e) => familyOf(e.prompt))).toEqual(Array(5).fill(["knapsack"]));
  });
});
