/**
 * "sudoku": 4×4 sudoku (2×2 boxes) with a unique solution, the puzzle task of wd1 and d1 (arXiv 2507.08838 §4,
 * arXiv 2504.12216 §4; their 4×4 set), e.g. `Sudoku 1004301001004000 =` → `<answer>1234341221434321</answer>`.
 * Scored by the `sudoku-cells` reward (share of the empty cells filled correctly); correct (pass@k) = solved.
 *
 * A solution is a random backtracking fill (every one of the 288 4×4 grids can come out; symmetries of one base
 * grid would reach only its class of 96, as 4×4 grids fall into two classes). Cells are then emptied in a random order, an emptying
 * kept only while the puzzle keeps exactly one solution (a backtracking count that stops at two), until `givens`
 * cells remain; a grid that cannot get that low (4 givens is the 4×4 minimum) is drawn again. Difficulty is the
 * number of givens. Departure from wd1/d1: their puzzles come from a fixed file; these are generated, so the splits
 * are as large as asked, and the prompt is one line of 16 cells (0 = empty) to keep character-level models fast.
 */
import { z } from "zod";
import type { Rng } from "../util/rng.js";
import type { SudokuGold } from "../rewards/sudoku.js";
import type { Drawn } from "./generate.js";
import { defineTask } from "./define-task.js";
import type { TaskDefinition } from "./registry.js";
import type { Task } from "./types.js";

const N = 4;
const BOX = 2;

/** Difficulty knobs of "sudoku". */
export const sudokuTaskOptions = z
  .object({
    givens: z
      .number()
      .int()
      .min(4)
      .max(15)
      .default(8)
      .describe("filled cells of the 16 (4 is the unique-puzzle minimum)"),
  })
  .strict();

/** Options of "sudoku" after defaults. */
export type SudokuTaskOptions = z.infer<typeof sudokuTaskOptions>;

/** Whether digit `d` may go in cell `i` of grid `g` (0 = empty): not yet in its row, column or box. */
function allowed(g: readonly number[], i: number, d: number): boolean {
  const r = Math.floor(i / N);
  const c = i % N;
  const br = r - (r % BOX);
  const bc = c - (c % BOX);
  for (let k = 0; k < N; k++) {
    if (g[r * N + k] === d || g[k * N + c] === d) return false;
    if (g[(br + Math.floor(k / BOX)) * N + bc + (k % BOX)] === d) return false;
  }
  return true;
}

/** Solutions of a 4×4 puzzle (16 cells, 0 = empty; the givens must not clash), counted up to `limit`. */
export function countSolutions(puzzle: string, limit = 2): number {
  const g = [...puzzle].map(Number);
  const solve = (): number => {
    const i = g.indexOf(0);
    if (i < 0) return 1;
    let n = 0;
    for (let d = 1; d <= N && n < limit; d++) {
      if (!allowed(g, i, d)) continue;
      g[i] = d;
      n += solve();
      g[i] = 0;
    }
    return n;
  };
  return solve();
}

/** A random valid 4×4 grid: a backtracking fill trying digits in a fresh random order at every cell. */
export function randomGrid(rng: Rng): string {
  const g = new Array<number>(N * N).fill(0);
  const fill = (i: number): boolean => {
    if (i === N * N) return true;
    for (const d of rng.shuffle([1, 2, 3, 4])) {
      if (!allowed(g, i, d)) continue;
      g[i] = d;
      if (fill(i + 1)) return true;
      g[i] = 0;
    }
    g[i] = 0;
    return false;
  };
  fill(0);
  return g.join("");
}

/** Empties cells of `solution` in a random order while the puzzle stays unique; null if `givens` is not reached. */
export function makePuzzle(solution: string, givens: number, rng: Rng): string | null {
  const cells = [...solution];
  let filled = N * N;
  for (const i of rng.shuffle(Array.from({ length: N * N }, (_, k) => k))) {
    if (filled === givens) break;
    const keep = cells[i]!;
    cells[i] = "0";
    if (countSolutions(cells.join("")) === 1) filled--;
    else cells[i] = keep;
  }
  return filled === givens ? cells.join("") : null;
}

/** The compact gold completion: the 16 cells in one answer block. */
export function sudokuCompletion(solution: string): string {
  return `<answer>${solution}</answer>`;
}

function drawPuzzle(rng: Rng, o: SudokuTaskOptions): Drawn<SudokuGold> {
  for (;;) {
    const solution = randomGrid(rng);
    const puzzle = makePuzzle(solution, o.givens, rng);
    if (puzzle === null) continue;
    return {
      key: puzzle,
      prompt: `Sudoku ${puzzle} =`,
      gold: { puzzle, solution, size: N },
      goldCompletion: sudokuCompletion(solution),
    };
  }
}

const sudoku = defineTask<SudokuGold, SudokuTaskOptions>({
  name: "sudoku",
  summary: "4×4 sudoku with a unique solution (Sudoku 1004301001004000 =); answer the 16 cells in <answer>",
  options: sudokuTaskOptions,
  build: (o) => ({
    description: `4×4 sudoku with ${o.givens} givens; scored by the share of empty cells solved`,
    terms: [{ name: "cells", reward: "sudoku-cells", weight: 1 }],
    correctTerm: "cells",
    stop: ["</answer>"],
    maxNewTokens: sudokuCompletion("0".repeat(N * N)).length + 1,
    draw: (rng) => drawPuzzle(rng, o),
  }),
});

/** Builds the "sudoku" task for the given difficulty. */
export const createSudokuTask: (options?: Partial<SudokuTaskOptions>) => Task<SudokuGold> = sudoku.create;

/** Registry definition of "sudoku". */
export const sudokuTask: TaskDefinition<SudokuTaskOptions> = sudoku.definition;
