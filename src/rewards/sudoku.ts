/**
 * wd1 sudoku cell score ("sudoku-cells", spec §6): the fraction of originally empty cells that the grid in the single
 * `<answer>` block fills correctly, for any N×N grid (cells 1..N written as 1-9 then A-Z). Departures from
 * `xiaohangt/wd1` `sudoku_reward_func`: exactly N² cells or 0 (the reference keeps the digits and pads/cuts to 16;
 * `padTruncate` restores it); a changed given cell scores 0 (`requireGivens`); a puzzle with no empty cell is null;
 * two answer blocks score 0 (G5; the reference grades the last, which pays `4444…` followed by the solution:
 * `answerBlocks: "last"` restores it).
 */
import { z } from "zod";
import type { RewardResult, RewardSpec } from "./types.js";
import { answerBlock } from "./text/region.js";

const ALPHABET = "123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";

/** Options of the sudoku reward. */
export const sudokuOptions = z.object({
  requireGivens: z.boolean().default(true).describe("a grid that changes a given cell scores 0"),
  padTruncate: z
    .boolean()
    .default(false)
    .describe("reference behaviour: keep only cell characters, pad with 0 or cut to N²"),
  answerBlocks: z
    .enum(["single", "last"])
    .default("single")
    .describe("single: two <answer> blocks score 0 (G5); last: the reference grades the last block (hackable)"),
});
/** Parsed sudoku options. */
export type SudokuOptions = z.output<typeof sudokuOptions>;

/** Gold of the sudoku reward: puzzle and solution as N² characters, `0` or `.` for empty puzzle cells. */
export interface SudokuGold {
  puzzle: string;
  solution: string;
  size?: number;
}

/** The grid cells of an answer (whitespace and `| , - + /` removed), or null when it is not exactly N² cells. */
export function parseGrid(answer: string, n: number, padTruncate = false): string | null {
  if (answer.length > 20_000) return null;
  const symbols = ALPHABET.slice(0, n);
  const cells = answer
    .toUpperCase()
    .replace(/[\s|,\-+/]/g, "")
    .replace(/\./g, "0");
  if (padTruncate) {
    const kept = [...cells].filter((c) => c === "0" || symbols.includes(c)).join("");
    return kept.length === 0 ? null : kept.slice(0, n * n).padEnd(n * n, "0");
  }
  if (cells.length !== n * n) return null;
  for (const c of cells) if (c !== "0" && !symbols.includes(c)) return null;
  return cells;
}

/** Cell score of a grid against the puzzle and solution; null when the data are invalid. */
export function sudokuScore(
  grid: string | null,
  gold: SudokuGold,
  o: SudokuOptions,
): { cells: number } | { error: string } {
  const n = gold.size ?? Math.round(Math.sqrt(gold.puzzle.length));
  const puzzle = gold.puzzle.toUpperCase().replace(/\./g, "0");
  const solution = gold.solution.toUpperCase();
  if (n < 1 || n > ALPHABET.length || puzzle.length !== n * n || solution.length !== n * n)
    return { error: "puzzle/solution are not N² cells" };
  const empty = [...puzzle].map((c, i) => (c === "0" ? i : -1)).filter((i) => i >= 0);
  if (empty.length === 0) return { error: "puzzle has no empty cell" };
  if (grid === null) return { cells: 0 };
  if (o.requireGivens && [...puzzle].some((c, i) => c !== "0" && grid[i] !== c)) return { cells: 0 };
  return { cells: empty.filter((i) => grid[i] === solution[i]).length / empty.length };
}

/** "sudoku-cells": fraction of the originally empty cells filled correctly. */
export const sudokuReward: RewardSpec<SudokuOptions, SudokuGold> = {
  name: "sudoku-cells",
  description: "wd1 sudoku: share of the empty cells solved, from exactly N² cells in the single <answer> block",
  options: sudokuOptions,
  exampleGold: { puzzle: "1004301001004000", solution: "1234341221434321" }, // unique (countSolutions = 1)
  maxScore: 1,
  score({ completion, gold }, o): RewardResult {
    const n = gold.size ?? Math.round(Math.sqrt(gold.puzzle.length));
    const block = answerBlock(completion, { blocks: o.answerBlocks });
    const grid = block.text === null ? null : parseGrid(block.text, n, o.padTruncate);
    const res = sudokuScore(grid, gold, o);
    if ("error" in res) return { score: null, terms: {}, info: { reason: res.error } };
    const info = { parsed: grid !== null, ...(block.text === null ? { reason: block.reason } : {}) };
    return { score: res.cells, terms: { cells: res.cells }, info };
  },
  goldCompletion: (g) => {
    const n = g.size ?? Math.round(Math.sqrt(g.puzzle.length));
    const rows = Array.from({ length: n }, (_, r) => g.solution.slice(r * n, r * n + n));
    return `<think>\nFill the grid.\n</think>\n<answer>\n${rows.join("\n")}\n</answer>`;
  },
};
