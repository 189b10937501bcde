/**
 * The JSON optimisation model that SIRL programs build (rewards spec §9.1), its validation, its CPLEX-LP rendering,
 * and the small model-building API (`PRELUDE`) that runs in the sandbox before the program.
 *
 * The API, as a program sees it:
 * ```js
 * const m = new Model("maximize");              // or "minimize"
 * m.addVar("x", { lb: 0, ub: 10, type: "integer" }); // type: continuous (default) | integer | binary; lb null = free
 * m.addConstraint({ x: 3, y: 2 }, "<=", 40, "labour");
 * m.setObjective({ x: 5, y: 4 });
 * return m;                                      // or return m.toJSON(), or a CPLEX-LP string
 * ```
 * Undeclared variables are continuous with bounds [0, +inf), as in LP format. The rendered LP text names columns
 * v0, v1, ... and rows c0, c1, ..., so any variable name the model picks is safe; `columnNames` maps them back.
 */
import { z } from "zod";

const num = z.number().finite();
const name = z.string().min(1).max(200);

/** A linear expression: variable name → coefficient. */
const linear = z.record(name, num);

/** Schema of the JSON model a program may return. */
export const lpModelSchema = z
  .object({
    sense: z.enum(["maximize", "minimize"]),
    objective: linear,
    constraints: z
      .array(
        z.object({
          name: name.optional(),
          terms: linear,
          op: z.enum(["<=", ">=", "="]),
          rhs: num,
        }),
      )
      .max(10_000),
    variables: z
      .record(
        name,
        z.object({
          lb: num.nullable().optional(),
          ub: num.nullable().optional(),
          type: z.enum(["continuous", "integer", "binary"]).optional(),
        }),
      )
      .optional(),
  })
  .strict();

/** A validated JSON model. */
export type LpModel = z.infer<typeof lpModelSchema>;

/** CPLEX-LP text plus the original variable names of its columns v0, v1, .... */
export interface RenderedLp {
  text: string;
  columnNames: string[];
}

function fmt(x: number): string {
  // Full precision, in a form the LP reader accepts (no "Infinity", exponent allowed).
  return Number.isInteger(x) ? String(x) : x.toPrecision(17);
}

function expr(terms: Record<string, number>, col: (n: string) => string): string {
  const parts = Object.entries(terms)
    .filter(([, c]) => c !== 0)
    .map(([v, c], i) => `${c < 0 ? "-" : i === 0 ? "" : "+"} ${fmt(Math.abs(c))} ${col(v)}`);
  return parts.length ? parts.join(" ") : "0 " + col(Object.keys(terms)[0] ?? "");
}

/** Renders a validated model as CPLEX-LP text. */
export function toLpText(model: LpModel): RenderedLp {
  const index = new Map<string, number>();
  const col = (n: string): string => {
    if (!index.has(n)) index.set(n, index.size);
    return `v${index.get(n)}`;
  };
  for (const v of Object.keys(model.variables ?? {})) col(v);
  for (const v of Object.keys(model.objective)) col(v);
  for (const c of model.constraints) for (const v of Object.keys(c.terms)) col(v);
  if (index.size === 0) throw new Error("the model has no variables");
  const lines = [model.sense === "maximize" ? "Maximize" : "Minimize"];
  // An empty objective renders as "0 v0", which the D-S3 check then rejects as trivial.
  lines.push(
    ` obj: ${Object.keys(model.objective).length ? expr(model.objective, col) : `0 ${col([...index.keys()][0]!)}`}`,
  );
  lines.push("Subject To");
  model.constraints.forEach((c, i) => {
    if (Object.keys(c.terms).length === 0) throw new Error(`constraint ${c.name ?? i} has no terms`);
    lines.push(` c${i}: ${expr(c.terms, col)} ${c.op} ${fmt(c.rhs)}`);
  });
  const bounds: string[] = [];
  const generals: string[] = [];
  const binaries: string[] = [];
  for (const [v, spec] of Object.entries(model.variables ?? {})) {
    const c = col(v);
    if (spec.type === "binary") {
      binaries.push(c);
      continue;
    }
    if (spec.type === "integer") generals.push(c);
    const lb = spec.lb === undefined ? 0 : spec.lb;
    const ub = spec.ub === undefined ? null : spec.ub;
    if (lb === null && ub === null) bounds.push(` ${c} free`);
    else bounds.push(` ${lb === null ? "-inf" : fmt(lb)} <= ${c} <= ${ub === null ? "+inf" : fmt(ub)}`);
  }
  if (bounds.length) lines.push("Bounds", ...bounds);
  if (generals.length) lines.push("General", ` ${generals.join(" ")}`);
  if (binaries.length) lines.push("Binary", ` ${binaries.join(" ")}`);
  lines.push("End");
  return { text: lines.join("\n") + "\n", columnNames: [...index.keys()] };
}

/**
 * Trusted source run in the sandbox before a SIRL program: defines `Model` and a finish hook that turns a returned
 * `Model` into its JSON form. It holds no solver; the host solves what the program returns.
 */
export const PRELUDE = String.raw`
class Model {
  constructor(sense) {
    if (sense !== "maximize" && sense !== "minimize") throw new TypeError('Model(sense): sense must be "maximize" or "minimize"');
    this.sense = sense; this.objective = {}; this.constraints = []; this.variables = {};
  }
  addVar(name, opts) {
    if (typeof name !== "string" || name.length === 0) throw new TypeError("addVar(name): name must be a non-empty string");
    if (name in this.variables) throw new Error('addVar: variable "' + name + '" already exists');
    const o = opts || {};
    this.variables[name] = { lb: o.lb === undefined ? 0 : o.lb, ub: o.ub === undefined ? null : o.ub, type: o.type || "continuous" };
    return name;
  }
  addConstraint(terms, op, rhs, name) {
    if (op !== "<=" && op !== ">=" && op !== "=") throw new TypeError('addConstraint: op must be "<=", ">=" or "="');
    const c = { terms: Object.assign({}, terms), op, rhs };
    if (name !== undefined) c.name = String(name);
    this.constraints.push(c);
    return this.constraints.length - 1;
  }
  setObjective(terms) { this.objective = Object.assign({}, terms); }
  toJSON() { return { sense: this.sense, objective: this.objective, constraints: this.constraints, variables: this.variables }; }
}
globalThis.__sandboxFinish = (v) => (v instanceof Model ? v.toJSON() : v);
`;
