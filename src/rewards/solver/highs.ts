/**
 * Solving a CPLEX-LP model with HiGHS (npm `highs`, WebAssembly) under the SIRL reward's rules (spec §9.3):
 * size caps (D-S7), the trivial-model screen (D-S3), `time_limit` and a `mip_rel_gap` below the reward tolerance
 * (D-S6). The solve is synchronous, so the reward calls this only inside a pool worker; after any exception the
 * module instance is dropped and a fresh one is loaded for the next solve (an aborted WASM instance may be broken).
 */
import * as highsModule from "highs";
import type { Highs } from "highs";

// The package's types describe a CommonJS module, but Node loads its ESM build ("import" condition), whose default
// export is the loader; TypeScript (NodeNext) cannot see that, hence the cast.
const highsLoader = (highsModule as unknown as { default: () => Promise<Highs> }).default;

/** Solver settings. */
export interface SolveOptions {
  /** HiGHS `time_limit` (s); default 10. */
  timeLimitS?: number;
  /** HiGHS `mip_rel_gap`; default 1e-7, below the reward's 1e-6 tolerance. */
  mipRelGap?: number;
  /** Caps (D-S7). */
  maxChars?: number;
  maxVariables?: number;
  maxConstraints?: number;
}

/** What one solve established. */
export type SolveResult =
  | {
      ok: true;
      /** HiGHS model status, e.g. "Optimal", "Infeasible", "Unbounded", "Time limit reached". */
      status: string;
      /** Objective value (meaningful only when status is "Optimal"). */
      objective: number | null;
      /** Column values in column order (only when status is "Optimal"). */
      values: number[];
      columnNames: string[];
      modelSize: { variables: number; constraints: number; integers: number };
      /** Why the model is trivial under D-S3, or null. */
      trivial: string | null;
    }
  | { ok: false; error: string };

const STATUS: Record<number, string> = {
  0: "Not set",
  1: "Load error",
  2: "Model error",
  3: "Presolve error",
  4: "Solve error",
  5: "Postsolve error",
  6: "Empty",
  7: "Optimal",
  8: "Infeasible",
  9: "Primal infeasible or unbounded",
  10: "Unbounded",
  11: "Bound on objective reached",
  12: "Target for objective reached",
  13: "Time limit reached",
  14: "Iteration limit reached",
  15: "Unknown",
  16: "Solution limit reached",
  17: "Interrupted",
};

let instance: Promise<Highs> | null = null;

/** The current HiGHS module instance (loaded on first use). */
export function loadHighs(): Promise<Highs> {
  if (!instance) instance = highsLoader();
  return instance;
}

/** Drops the module instance, so the next solve loads a fresh one. */
export function resetHighs(): void {
  instance = null;
}

/** D-S3: the objective has a variable with a nonzero coefficient, there is a constraint, and no constant offset. */
function trivialReason(numRows: number, colCost: Float64Array, offset: number): string | null {
  if (numRows < 1) return "the model has no constraints";
  if (!colCost.some((c) => c !== 0)) return "the objective has no variable with a nonzero coefficient";
  if (offset !== 0) return `the objective has a constant offset (${offset})`;
  return null;
}

/** Solves LP text with a given module instance; throws only on HiGHS exceptions (e.g. an unreadable model). */
export function solveWith(highs: Highs, text: string, opts: SolveOptions = {}): SolveResult {
  const maxChars = opts.maxChars ?? 1_000_000;
  if (text.length > maxChars) return { ok: false, error: `LP text is ${text.length} chars > cap ${maxChars}` };
  const model = highs.createModel({ format: "lp", data: text });
  try {
    const lp = model.getLp();
    const maxVars = opts.maxVariables ?? 10_000;
    const maxRows = opts.maxConstraints ?? 10_000;
    if (lp.numCols > maxVars) return { ok: false, error: `${lp.numCols} variables > cap ${maxVars}` };
    if (lp.numRows > maxRows) return { ok: false, error: `${lp.numRows} constraints > cap ${maxRows}` };
    if (lp.numCols === 0) return { ok: false, error: "the model has no variables" };
    model.options.set({
      time_limit: opts.timeLimitS ?? 10,
      mip_rel_gap: opts.mipRelGap ?? 1e-7,
      output_flag: false,
    });
    model.run();
    const status = STATUS[model.getModelStatus()] ?? `status ${model.getModelStatus()}`;
    const optimal = status === "Optimal";
    const columnNames = Array.from({ length: lp.numCols }, (_, i) => model.getColName(i));
    return {
      ok: true,
      status,
      objective: optimal ? model.getObjectiveValue() : null,
      values: optimal ? Array.from(model.getSolution().colValue) : [],
      columnNames,
      modelSize: {
        variables: lp.numCols,
        constraints: lp.numRows,
        integers: lp.integrality.filter((t: number) => t !== 0).length,
      },
      trivial: trivialReason(lp.numRows, lp.colCost, lp.offset),
    };
  } finally {
    model.dispose();
  }
}

/** Solves LP text with the shared instance; a HiGHS exception becomes `{ ok: false }` and resets the instance. */
export async function solveLp(text: string, opts: SolveOptions = {}): Promise<SolveResult> {
  const highs = await loadHighs();
  try {
    return solveWith(highs, text, opts);
  } catch (err) {
    resetHighs();
    return { ok: false, error: `HiGHS rejected the model: ${err instanceof Error ? err.message : String(err)}` };
  }
}
