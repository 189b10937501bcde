/** Sudoku cell score (spec §6), SAKE knowledge-graph answers (§7) and the Conductor plan reward (§8). */
import { describe, expect, it } from "vitest";
import { exactMatch, normalizeAnswerText, parseGrid, parsePlan, rewards } from "../../src/rewards/text-rewards.js";

const PUZZLE = "1030020001000001"; // 4×4, 11 empty cells
const SOLUTION = "1432324121434321";
const sudoku = (answer: string, o: object = {}, gold: object = { puzzle: PUZZLE, solution: SOLUTION }) =>
  rewards.score("sudoku-cells", { completion: `<think>\nsolve\n</think>\n<answer>${answer}</answer>`, gold }, o);

describe("sudoku-cells (§6)", () => {
  it.each([
    ["1432324121434321", 1, "solved"],
    ["1432\n3241\n2143\n4321", 1, "rows on lines"],
    ["1 4 3 2 | 3 2 4 1 | 2 1 4 3 | 4 3 2 1", 1, "separators removed"],
    ["1.3.\n.2..\n.1..\n...1", 0, "puzzle copied back with dots: blanks score 0"],
    ["1432324121434331", 10 / 11, "one wrong empty cell of eleven"],
  ] as [string, number, string][])("%j → %d (%s)", async (a, v) => expect((await sudoku(a)).score).toBeCloseTo(v, 12));
  it("9×9 grid works (any size)", async () => {
    const sol = "534678912672195348198342567859761423426853791713924856961537284287419635345286179";
    const puz = sol
      .split("")
      .map((c, i) => (i % 3 === 0 ? "0" : c))
      .join("");
    expect((await sudoku(sol, {}, { puzzle: puz, solution: sol })).score).toBe(1);
  });
  it("no empty cell → null; malformed data → null", async () => {
    expect((await sudoku(SOLUTION, {}, { puzzle: SOLUTION, solution: SOLUTION })).score).toBeNull();
    expect((await sudoku(SOLUTION, {}, { puzzle: "10", solution: "12" })).score).toBeNull();
  });
  describe("adversarial", () => {
    it("1. the puzzle copied back → 0", async () => expect((await sudoku(PUZZLE)).score).toBe(0));
    it("2. right digits in the empty cells but a given changed → 0 (requireGivens)", async () => {
      const changed = "2432324121434321"; // cell 0 is a given
      expect((await sudoku(changed)).score).toBe(0);
      expect((await sudoku(changed, { requireGivens: false })).score).toBe(1);
    });
    it("3. two grids back to back → wrong count → 0 (the reference grades the first 16)", async () => {
      expect((await sudoku(SOLUTION + SOLUTION)).score).toBe(0);
      expect((await sudoku(SOLUTION + SOLUTION, { padTruncate: true })).score).toBe(1);
    });
    it("4. a grid only in the reasoning → 0", async () => {
      const r = await rewards.score("sudoku-cells", {
        completion: `<think>${SOLUTION}</think><answer>done</answer>`,
        gold: { puzzle: PUZZLE, solution: SOLUTION },
      });
      expect(r.score).toBe(0);
    });
    it("5. digits wrapped in prose → 0", async () =>
      expect((await sudoku("row 1: 1432 row 2: 3241 row 3: 2143 row 4: 4321")).score).toBe(0));
    it("6. 9999… → 0", async () => expect((await sudoku("9".repeat(16))).score).toBe(0));
  });
  it("parseGrid keeps exactly N² cells", () => {
    expect(parseGrid("12 21", 2)).toBe("1221");
    expect(parseGrid("12 34", 2)).toBeNull(); // 3 and 4 are not cells of a 2×2 grid
    expect(parseGrid("123", 2)).toBeNull();
  });
});

const turns = (answer: string): string[] => [
  "<entities>\naspirin\n</entities>",
  "<groups>\nNSAIDs\n</groups>",
  `<think>\nIt is aspirin.\n</think>\n<answer>${answer}</answer>`,
];
const kg = (t: string[] | string, o: object = {}, answers = ["Aspirin"]) =>
  rewards.score(
    "kg-answer",
    typeof t === "string" ? { completion: t, gold: { answers } } : { completion: t[2]!, turns: t, gold: { answers } },
    o,
  );

describe("kg-answer (§7)", () => {
  it.each([
    ["aspirin", "aspirin"],
    ["The Aspirin.", "aspirin"],
    ["\uff21spirin", "aspirin"],
    ["a\u200bspirin", "aspirin"],
    ["  an   apple ", "apple"],
  ])("normalises %j → %j (Search-R1 + NFKC + zero-width)", (a, b) => expect(normalizeAnswerText(a)).toBe(b));
  it("weights 0.3/0.7 by default, 0.2/0.8 with sake7b, overridable", async () => {
    expect((await kg(turns("aspirin"))).score).toBeCloseTo(1, 12);
    expect((await kg(turns("ibuprofen"))).score).toBeCloseTo(0.3, 12);
    expect((await kg(turns("ibuprofen"), { preset: "sake7b" })).score).toBeCloseTo(0.2, 12);
    expect((await kg(turns("aspirin"), { formatWeight: 0, answerWeight: 1 })).score).toBe(1);
  });
  it("aliases; without turns the tags must appear in order in one text", async () => {
    expect((await kg(turns("acetylsalicylic acid"), {}, ["Aspirin", "acetylsalicylic acid"])).terms.em).toBe(1);
    expect((await kg(turns("aspirin").join("\n"))).terms).toEqual({ format: 1, em: 1 });
  });
  it("gold normalising to empty → null; configurable tag names; choice matcher", async () => {
    expect((await kg(turns("the"), {}, ["The"])).score).toBeNull();
    const t = ["<e>x</e>", "<g>y</g>", "<think>z</think><ans>aspirin</ans>"];
    expect((await kg(t, { tags: { entities: "e", groups: "g", think: "think", answer: "ans" } })).score).toBeCloseTo(
      1,
      12,
    );
    const r = await rewards.score(
      "kg-answer",
      { completion: turns("B")[2]!, turns: turns("B"), gold: { answers: ["B"], options: ["x", "y"] } },
      { answerMatcher: "choice" },
    );
    expect(r.terms.em).toBe(1);
  });
  describe("adversarial", () => {
    it("1. a list of candidates → 0", async () => expect((await kg(turns("aspirin, ibuprofen"))).terms.em).toBe(0));
    it("2. two answer blocks → 0", async () => {
      const t = turns("aspirin");
      t[2] += "<answer>ibuprofen</answer>";
      expect((await kg(t)).terms).toEqual({ format: 0, em: 0 });
    });
    it("3. pasted triplets → 0", async () =>
      expect((await kg(turns("(aspirin, treats, pain); (ibuprofen, treats, pain)"))).terms.em).toBe(0));
    it("4. the gold only in turn 1 (or a tool output) → not read → 0", async () => {
      const t = turns("unknown");
      expect((await kg(t)).terms.em).toBe(0);
    });
    it("5. 'not aspirin' → 0", async () => expect((await kg(turns("not aspirin"))).terms.em).toBe(0));
    it("6. a Cyrillic look-alike stays unequal", async () =>
      expect((await kg(turns("\u0430spirin"))).terms.em).toBe(0));
    it("7. all tags with empty content → format 0, em 0", async () => {
      const r = await kg(["<entities></entities>", "<groups></groups>", "<think></think><answer></answer>"]);
      expect(r.terms).toEqual({ format: 0, em: 0 });
    });
    it("a giant answer is not normalised at all", () =>
      expect(exactMatch("aspirin ".repeat(10_000), ["aspirin"])).toBe(0));
  });
});

const PLAN = `model_id = [2, 0, 1]\nsubtasks = ["Extract the constraints", "Solve", "Check and state the final answer"]\naccess_list = [[], [0], [0, 1]]`;
const plan = (text: string, chain?: object, pool: string[] | number = 3) =>
  rewards.score("conductor-plan", {
    completion: `<think>\nplan it\n</think>\n${text}`,
    gold: { pool, ...(chain ? { chain } : {}) },
  });

describe("conductor-plan (§8)", () => {
  it("1 / 0.5 / 0 and null on worker infrastructure failure", async () => {
    expect((await plan(PLAN, { correct: true })).score).toBe(1);
    expect((await plan(PLAN, { correct: false })).score).toBe(0.5);
    expect((await plan("model_id = [0]", { correct: true })).score).toBe(0);
    expect((await plan(PLAN, { correct: false, infraFailure: true })).score).toBeNull();
  });
  it("parses single quotes, escapes, trailing commas and code fences; info.steps is logged", async () => {
    const p = parsePlan("```python\nmodel_id = [0,]\nsubtasks = ['say \\'hi\\'']\naccess_list = [[]]\n```", 1);
    expect(p).toEqual({ plan: { modelIds: [0], subtasks: ["say 'hi'"], accessList: [[]] } });
    expect((await plan(PLAN, { correct: true })).info?.steps).toBe(3);
  });
  describe("adversarial", () => {
    it("1. unequal lengths → 0", async () =>
      expect((await plan(PLAN.replace("[2, 0, 1]", "[2, 0]"), { correct: true })).score).toBe(0));
    it("2. worker id −1, 1.5 or len(pool) → 0", async () => {
      for (const id of ["-1", "1.5", "3"])
        expect((await plan(PLAN.replace("[2, 0, 1]", `[2, 0, ${id}]`), { correct: true })).score).toBe(0);
    });
    it("3. access to the step itself or a later step, or duplicates → 0", async () => {
      for (const a of ["[[], [1], [0, 1]]", "[[], [0], [0, 2]]", "[[], [0], [0, 0]]"])
        expect((await plan(PLAN.replace("[[], [0], [0, 1]]", a), { correct: true })).score).toBe(0);
    });
    it("4. call syntax is not a literal → 0", async () => {
      for (const v of ["__import__('os').system('x')", "[0] + [1, 2]", "list(range(3))"])
        expect((await plan(PLAN.replace("[2, 0, 1]", v), { correct: true })).score).toBe(0);
    });
    it("5. 1,000 steps → over maxSteps → 0", async () => {
      const n = 1000;
      const big = `model_id = [${Array(n).fill(0).join(",")}]\nsubtasks = [${Array(n).fill('"x"').join(",")}]\naccess_list = [${Array(n).fill("[]").join(",")}]`;
      expect((await plan(big, { correct: true })).score).toBe(0);
    });
    it("6. two model_id assignments (hedged plans) → 0", async () =>
      expect((await plan(`${PLAN}\nmodel_id = [0, 0, 0]`, { correct: true })).score).toBe(0));
    it("7. the right answer only in the planner's reasoning with a wrong chain → 0.5", async () => {
      const r = await rewards.score("conductor-plan", {
        completion: `<think>the answer is 42</think>\n${PLAN}`,
        gold: { pool: 3, chain: { correct: false } },
      });
      expect(r.score).toBe(0.5);
    });
    it("a plan written only inside <think> → 0", async () => {
      const r = await rewards.score("conductor-plan", {
        completion: `<think>${PLAN}</think> done`,
        gold: { pool: 3, chain: { correct: true } },
      });
      expect(r.score).toBe(0);
    });
    it("reasoning opened and never closed commits to nothing → 0 (G3, the shared answerRegion)", async () => {
      const r = await rewards.score("conductor-plan", {
        completion: `<think>let me plan\n${PLAN}`,
        gold: { pool: 3, chain: { correct: true } },
      });
      expect(r.score).toBe(0);
      const open = await rewards.score("conductor-plan", {
        completion: PLAN,
        gold: { pool: 3, chain: { correct: true } },
      });
      expect(open.score).toBe(1); // no think tags at all: the whole completion is the region
    });
    it("empty subtasks or empty lists → 0", async () => {
      expect((await plan(PLAN.replace('"Solve"', '"  "'), { correct: true })).score).toBe(0);
      expect((await plan("model_id = []\nsubtasks = []\naccess_list = []", { correct: true })).score).toBe(0);
    });
  });
});
