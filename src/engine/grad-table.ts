/**
 * The gradient table: one rule per op, typed `{ [K in OpName]: GradRule<K> }`, so an op without a gradient
 * does not compile. Rules live beside their forward functions in ./ops/; this file only gathers them.
 */
import { elementwiseRules } from "./ops/elementwise.js";
import { matmulRules } from "./ops/matmul.js";
import { nnRules } from "./ops/nn.js";
import type { GradRule, OpName } from "./ops/op-set.js";
import { reduceRules } from "./ops/reduce.js";
import { shapeRules } from "./ops/shape.js";

type GradTable = { [K in OpName]: GradRule<K> };

let table: GradTable | null = null;

/** Builds the table on first use (after every op module has loaded, whatever the import order). */
function build(): GradTable {
  return { ...elementwiseRules, ...reduceRules, ...shapeRules, ...matmulRules, ...nnRules };
}

/** The gradient rule of op K. */
export function gradRule<K extends OpName>(op: K): GradRule<K> {
  table ??= build();
  return table[op];
}

/** Every op name, in table order (for tests that cover the whole op set). */
export function allOps(): OpName[] {
  table ??= build();
  return Object.keys(table) as OpName[];
}
