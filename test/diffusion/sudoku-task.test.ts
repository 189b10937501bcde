/** The 4×4 sudoku task (src/tasks/sudoku.ts): unique solutions, difficulty by givens, scoring, determinism. */
import { describe, expect, it } from "vitest";
import { countSolutions, createSudokuTask, getTask, makePuzzle, randomGrid } from "../../src/tasks/index.js";
import { Rng } from "../../src/util/index.js";
import "../../src/rewards/index.js"; // registers sudoku-cells

describe("sudoku task", () => {
  it("draws valid grids: every row, column and box holds 1-4", () => {
    const rng = new Rng(1);
    const seen = new Set<string>();
    for (let k = 0; k < 400; k++) {
      const g = randomGrid(rng);
      seen.add(g);
      const groups = [0, 1, 2, 3].flatMap((i) => [
        [0, 1, 2, 3].map((j) => g[i * 4 + j]),
        [0, 1, 2, 3].map((j) => g[j * 4 + i]),
        [0, 1, 2, 3].map((j) => g[(2 * Math.floor(i / 2) + Math.floor(j / 2)) * 4 + 2 * (i % 2) + (j % 2)]),
      ]);
      for (const grp of groups) expect([...grp].sort().join("")).toBe("1234");
    }
    expect(seen.size).toBeGreaterThan(150); // 288 grids exist in two symmetry classes (96 + 192): both are reached
  });

  it("counts solutions: a full grid 1, an empty one at least 2, a known unique puzzle 1", () => {
    expect(countSolutions("1234341221434321")).toBe(1);
    expect(countSolutions("0".repeat(16))).toBe(2);
    expect(countSolutions("1030020001000001")).toBe(2); // an old example puzzle, not unique
    expect(countSolutions("1030020001000001", 5)).toBe(2);
    expect(countSolutions("0".repeat(16), 1000)).toBe(288);
    expect(countSolutions("0234341221434320")).toBe(1);
    expect(countSolutions("1000000000000000")).toBe(2);
  });

  it.each([4, 8, 12])("makes puzzles with %i givens and one solution, the drawn grid", (givens) => {
    const task = createSudokuTask({ givens });
    for (const ex of task.generate("train", 20, 3)) {
      const { puzzle, solution } = ex.gold;
      expect([...puzzle].filter((c) => c !== "0")).toHaveLength(givens);
      expect(countSolutions(puzzle)).toBe(1);
      expect([...puzzle].every((c, i) => c === "0" || c === solution[i])).toBe(true);
      expect(ex.prompt).toBe(`Sudoku ${puzzle} =`);
    }
    expect(makePuzzle("1432324121434321", 3, new Rng(0))).toBeNull();
  });

  it("scores the gold 1 (solved), half a grid right about half, changed givens 0", async () => {
    const task = getTask("sudoku", { givens: 8 });
    const [ex] = task.generate("test", 1, 0);
    const { puzzle, solution } = ex!.gold;
    expect((await task.score(ex!, ex!.goldCompletion)).score).toBe(1);
    const empty = [...puzzle].map((c, i) => (c === "0" ? i : -1)).filter((i) => i >= 0);
    const half = [...solution].map((c, i) => (empty.indexOf(i) >= 4 ? String((Number(c) % 4) + 1) : c)).join("");
    const r = await task.score(ex!, `<answer>${half}</answer>`);
    expect(r.score).toBeCloseTo(0.5, 9);
    const wrongGiven = [...solution].map((c, i) => (puzzle[i] !== "0" && i === puzzle.search(/[1-4]/) ? "0" : c));
    expect((await task.score(ex!, `<answer>${wrongGiven.join("")}</answer>`)).score).toBe(0);
    expect(task.correctTerm).toBe("cells");
  });

  it("is deterministic and keeps train and test apart", () => {
    const task = createSudokuTask();
    expect(task.generate("train", 30, 5)).toEqual(task.generate("train", 30, 5));
    const train = new Set(task.generate("train", 200, 5).map((e) => e.gold.puzzle));
    expect(task.generate("test", 50, 5).some((e) => train.has(e.gold.puzzle))).toBe(false);
  });
});
