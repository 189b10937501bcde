/**
 * Seeded optimisation word problems for the "optimisation" task (SIRL, rewards spec §9): production planning, diet,
 * transport, knapsack, assignment, staff scheduling and blending. Each draw gives the data, the question text, the
 * mathematical model in words, and an honest JavaScript program that builds the model through the sandbox's `Model`
 * API from the data (the gold program). Every family is feasible and bounded by construction; the ground truth is
 * computed by HiGHS in `optimisation.ts`.
 */
import type { Rng } from "../util/rng.js";

/** The problem families. */
export const FAMILIES = [
  "production",
  "diet",
  "transport",
  "knapsack",
  "assignment",
  "scheduling",
  "blending",
] as const;

/** One family name. */
export type Family = (typeof FAMILIES)[number];

/** One drawn problem, before solving. */
export interface DrawnProblem {
  family: Family;
  /** Canonical data (decides the split). */
  data: unknown;
  /** The question text. */
  question: string;
  /** The reasoning of the gold completion. */
  reasoning: string;
  /** The model in words (the <model> section). */
  formulation: string;
  /** The gold JavaScript program. */
  program: string;
  /** True for integer/binary models. */
  integer: boolean;
}

const pickDistinct = (rng: Rng, pool: readonly string[], n: number): string[] => rng.shuffle([...pool]).slice(0, n);
const ints = (rng: Rng, n: number, lo: number, hi: number): number[] =>
  Array.from({ length: n }, () => rng.intBetween(lo, hi));
const js = (x: unknown): string => JSON.stringify(x);
const list = (xs: readonly (string | number)[]): string =>
  xs.length < 2 ? xs.join("") : `${xs.slice(0, -1).join(", ")} and ${xs.at(-1)}`;

function production(rng: Rng): DrawnProblem {
  const products = pickDistinct(
    rng,
    ["chairs", "tables", "desks", "shelves", "stools", "cabinets"],
    rng.intBetween(2, 4),
  );
  const resources = pickDistinct(
    rng,
    ["labour hours", "wood (kg)", "machine hours", "paint (l)"],
    rng.intBetween(2, 3),
  );
  const profit = ints(rng, products.length, 5, 40);
  const usage = resources.map(() => ints(rng, products.length, 1, 9));
  const capacity = ints(rng, resources.length, 40, 200);
  const integer = rng.random() < 0.5;
  const lines = resources.map(
    (r, j) =>
      `- ${r}: ${products.map((p, i) => `${usage[j]![i]} per ${p.replace(/s$/, "")}`).join(", ")}; ${capacity[j]} available.`,
  );
  return {
    family: "production",
    data: { products, resources, profit, usage, capacity, integer },
    integer,
    question:
      `A workshop makes ${list(products)}. The profit per unit is ${list(products.map((p, i) => `${profit[i]} for ${p}`))}.\n` +
      `Each unit uses these resources:\n${lines.join("\n")}\n` +
      `${integer ? "Only whole units can be made. " : "Fractional units are allowed. "}How much of each should it make to maximise profit? What is the maximum profit?`,
    reasoning: `One variable per product (units made${integer ? ", integer" : ""}). Profit is linear; each resource gives one capacity constraint.`,
    formulation: `max Σ_i profit_i x_i s.t. Σ_i usage_ri x_i <= capacity_r for each resource r; x_i >= 0${integer ? ", integer" : ""}.`,
    program: `const products = ${js(products)};
const profit = ${js(profit)};
const resources = ${js(resources)};
const usage = ${js(usage)};
const capacity = ${js(capacity)};
const m = new Model("maximize");
for (const p of products) m.addVar(p, { lb: 0, type: ${js(integer ? "integer" : "continuous")} });
const objective = {};
products.forEach((p, i) => { objective[p] = profit[i]; });
m.setObjective(objective);
resources.forEach((r, j) => {
  const terms = {};
  products.forEach((p, i) => { terms[p] = usage[j][i]; });
  m.addConstraint(terms, "<=", capacity[j], r);
});
return m;`,
  };
}

function diet(rng: Rng): DrawnProblem {
  const foods = pickDistinct(rng, ["oats", "rice", "beans", "milk", "eggs", "bread", "lentils"], rng.intBetween(3, 5));
  const nutrients = pickDistinct(
    rng,
    ["protein (g)", "fibre (g)", "calcium (mg/10)", "iron (mg)"],
    rng.intBetween(2, 3),
  );
  const cost = ints(rng, foods.length, 2, 12).map((c) => c / 4);
  const content = nutrients.map(() => ints(rng, foods.length, 0, 10));
  // Make every nutrient reachable: each has at least one food with positive content.
  content.forEach((row) => {
    if (!row.some((v) => v > 0)) row[rng.int(row.length)] = rng.intBetween(1, 10);
  });
  const need = ints(rng, nutrients.length, 20, 80);
  const lines = nutrients.map(
    (n, j) =>
      `- ${n}: ${foods.map((f, i) => `${content[j]![i]} per serving of ${f}`).join(", ")}; at least ${need[j]} needed.`,
  );
  return {
    family: "diet",
    data: { foods, nutrients, cost, content, need },
    integer: false,
    question:
      `A canteen plans a daily diet from ${list(foods)}, costing ${list(foods.map((f, i) => `$${cost[i]} per serving of ${f}`))}.\n` +
      `Nutrient contents and daily needs:\n${lines.join("\n")}\n` +
      `Servings may be fractional. What is the minimum daily cost that meets every need?`,
    reasoning:
      "One continuous variable per food (servings). Cost is linear; each nutrient gives one minimum constraint.",
    formulation: "min Σ_f cost_f x_f s.t. Σ_f content_nf x_f >= need_n for each nutrient n; x_f >= 0.",
    program: `const foods = ${js(foods)};
const cost = ${js(cost)};
const nutrients = ${js(nutrients)};
const content = ${js(content)};
const need = ${js(need)};
const m = new Model("minimize");
const objective = {};
foods.forEach((f, i) => { objective[f] = cost[i]; });
m.setObjective(objective);
nutrients.forEach((n, j) => {
  const terms = {};
  foods.forEach((f, i) => { terms[f] = content[j][i]; });
  m.addConstraint(terms, ">=", need[j], n);
});
return m;`,
  };
}

function transport(rng: Rng): DrawnProblem {
  const plants = pickDistinct(rng, ["Leeds", "Bristol", "Glasgow", "Cardiff"], rng.intBetween(2, 3));
  const stores = pickDistinct(rng, ["Oxford", "York", "Bath", "Derby", "Hull", "Crewe"], rng.intBetween(2, 4));
  const demand = ints(rng, stores.length, 10, 60);
  const total = demand.reduce((a, b) => a + b, 0);
  const supply = plants.map(() => Math.ceil((total * (1 + rng.random())) / plants.length));
  const cost = plants.map(() => ints(rng, stores.length, 1, 20));
  const lines = plants.map((p, i) => `- from ${p}: ${stores.map((s, j) => `${cost[i]![j]} to ${s}`).join(", ")}.`);
  return {
    family: "transport",
    data: { plants, stores, supply, demand, cost },
    integer: false,
    question:
      `Plants ${list(plants)} can ship at most ${list(supply)} units respectively. Stores ${list(stores)} need exactly ${list(demand)} units.\n` +
      `Shipping cost per unit:\n${lines.join("\n")}\nWhat is the minimum total shipping cost?`,
    reasoning:
      "One continuous variable per plant-store route. Supply limits each plant's shipments; each store's demand must be met exactly.",
    formulation: "min Σ_ij cost_ij x_ij s.t. Σ_j x_ij <= supply_i; Σ_i x_ij = demand_j; x_ij >= 0.",
    program: `const plants = ${js(plants)};
const stores = ${js(stores)};
const supply = ${js(supply)};
const demand = ${js(demand)};
const cost = ${js(cost)};
const m = new Model("minimize");
const route = (i, j) => plants[i] + "->" + stores[j];
const objective = {};
plants.forEach((_, i) => stores.forEach((_, j) => { objective[route(i, j)] = cost[i][j]; }));
m.setObjective(objective);
plants.forEach((p, i) => {
  const terms = {};
  stores.forEach((_, j) => { terms[route(i, j)] = 1; });
  m.addConstraint(terms, "<=", supply[i], "supply " + p);
});
stores.forEach((s, j) => {
  const terms = {};
  plants.forEach((_, i) => { terms[route(i, j)] = 1; });
  m.addConstraint(terms, "=", demand[j], "demand " + s);
});
return m;`,
  };
}

function knapsack(rng: Rng): DrawnProblem {
  const items = pickDistinct(
    rng,
    ["tent", "stove", "rope", "lamp", "radio", "camera", "map", "knife", "jacket", "water filter"],
    rng.intBetween(5, 8),
  );
  const value = ints(rng, items.length, 3, 30);
  const weight = ints(rng, items.length, 1, 12);
  const capacity = Math.max(...weight, Math.floor(weight.reduce((a, b) => a + b, 0) / 2));
  return {
    family: "knapsack",
    data: { items, value, weight, capacity },
    integer: true,
    question:
      `A hiker can carry at most ${capacity} kg. The items (value, weight in kg) are: ${list(items.map((it, i) => `${it} (${value[i]}, ${weight[i]})`))}.\n` +
      `Each item is taken whole or left behind. What is the largest total value the hiker can carry?`,
    reasoning: "A 0/1 knapsack: one binary variable per item, one weight constraint, maximise total value.",
    formulation: "max Σ_i value_i x_i s.t. Σ_i weight_i x_i <= capacity; x_i ∈ {0, 1}.",
    program: `const items = ${js(items)};
const value = ${js(value)};
const weight = ${js(weight)};
const capacity = ${capacity};
const m = new Model("maximize");
const objective = {};
const load = {};
items.forEach((it, i) => {
  m.addVar(it, { type: "binary" });
  objective[it] = value[i];
  load[it] = weight[i];
});
m.setObjective(objective);
m.addConstraint(load, "<=", capacity, "weight");
return m;`,
  };
}

function assignment(rng: Rng): DrawnProblem {
  const n = rng.intBetween(3, 4);
  const workers = pickDistinct(rng, ["Ada", "Ben", "Cai", "Dee", "Eli", "Fay"], n);
  const jobs = pickDistinct(rng, ["wiring", "plumbing", "painting", "tiling", "roofing"], n);
  const cost = workers.map(() => ints(rng, n, 2, 20));
  const lines = workers.map((w, i) => `- ${w}: ${jobs.map((j, k) => `${j} ${cost[i]![k]}`).join(", ")}.`);
  return {
    family: "assignment",
    data: { workers, jobs, cost },
    integer: true,
    question:
      `Assign each of ${list(workers)} to exactly one of the jobs ${list(jobs)}, one person per job. The hours each person needs:\n` +
      `${lines.join("\n")}\nWhat is the minimum total number of hours?`,
    reasoning:
      "An assignment problem: a binary variable per person-job pair; each person does one job and each job gets one person.",
    formulation:
      "min Σ_ij hours_ij x_ij s.t. Σ_j x_ij = 1 for each person i; Σ_i x_ij = 1 for each job j; x_ij ∈ {0, 1}.",
    program: `const workers = ${js(workers)};
const jobs = ${js(jobs)};
const hours = ${js(cost)};
const m = new Model("minimize");
const pair = (i, j) => workers[i] + ":" + jobs[j];
const objective = {};
workers.forEach((_, i) => jobs.forEach((_, j) => {
  m.addVar(pair(i, j), { type: "binary" });
  objective[pair(i, j)] = hours[i][j];
}));
m.setObjective(objective);
workers.forEach((w, i) => {
  const terms = {};
  jobs.forEach((_, j) => { terms[pair(i, j)] = 1; });
  m.addConstraint(terms, "=", 1, "person " + w);
});
jobs.forEach((job, j) => {
  const terms = {};
  workers.forEach((_, i) => { terms[pair(i, j)] = 1; });
  m.addConstraint(terms, "=", 1, "job " + job);
});
return m;`,
  };
}

function scheduling(rng: Rng): DrawnProblem {
  const periods = rng.intBetween(4, 6);
  const length = rng.intBetween(2, 3);
  const need = ints(rng, periods, 2, 12);
  const wage = ints(rng, periods, 8, 15);
  const names = Array.from({ length: periods }, (_, t) => `period ${t + 1}`);
  return {
    family: "scheduling",
    data: { periods, length, need, wage },
    integer: true,
    question:
      `A help desk runs ${periods} periods a day in a cycle (after period ${periods} comes period 1). A shift starts at the beginning of a period and covers ${length} consecutive periods.\n` +
      `Staff needed: ${list(names.map((p, t) => `${need[t]} in ${p}`))}. A shift starting in period t costs ${list(wage.map((w, t) => `${w} (t=${t + 1})`))}.\n` +
      `How many whole shifts should start in each period to cover every need at minimum cost? What is that cost?`,
    reasoning:
      "An integer covering model: one variable per shift start; period t is covered by the shifts that started in the last few periods.",
    formulation: `min Σ_s wage_s x_s s.t. Σ_{s covering t} x_s >= need_t for each period t; x_s >= 0 integer (a shift covers ${length} periods, cyclically).`,
    program: `const periods = ${periods};
const length = ${length};
const need = ${js(need)};
const wage = ${js(wage)};
const m = new Model("minimize");
const objective = {};
for (let s = 0; s < periods; s++) {
  m.addVar("start" + s, { lb: 0, type: "integer" });
  objective["start" + s] = wage[s];
}
m.setObjective(objective);
for (let t = 0; t < periods; t++) {
  const terms = {};
  for (let d = 0; d < length; d++) terms["start" + ((t - d + periods) % periods)] = 1;
  m.addConstraint(terms, ">=", need[t], "cover " + t);
}
return m;`,
  };
}

function blending(rng: Rng): DrawnProblem {
  const raws = pickDistinct(rng, ["ore A", "ore B", "ore C", "scrap", "alloy"], rng.intBetween(3, 4));
  const cost = ints(rng, raws.length, 20, 90);
  const grade = ints(rng, raws.length, 5, 60);
  const total = rng.intBetween(50, 150);
  // A feasible mix first; the grade window and the stock limits are set around it.
  const share = raws.map(() => rng.random() + 0.1);
  const sum = share.reduce((a, b) => a + b, 0);
  const mix = share.map((s) => (s / sum) * total);
  const avail = mix.map((x) => Math.ceil(x * (1.2 + rng.random())));
  const mixGrade = mix.reduce((a, x, i) => a + x * grade[i]!, 0) / total;
  const lo = Math.floor(mixGrade - rng.intBetween(1, 5));
  const hi = Math.ceil(mixGrade + rng.intBetween(1, 5));
  return {
    family: "blending",
    data: { raws, cost, grade, total, avail, lo, hi },
    integer: false,
    question:
      `A foundry blends exactly ${total} t of metal from ${list(raws)}, costing ${list(cost)} per tonne and with grades ${list(grade)} (% metal) respectively.\n` +
      `At most ${list(avail)} t of each is in stock. The blend's average grade must be between ${lo}% and ${hi}%. What is the minimum cost of the blend?`,
    reasoning:
      "One continuous variable per raw material (tonnes). The total is fixed; the average-grade window becomes two linear constraints after multiplying by the total.",
    formulation:
      "min Σ_i cost_i x_i s.t. Σ_i x_i = total; Σ_i grade_i x_i >= lo·total; Σ_i grade_i x_i <= hi·total; 0 <= x_i <= stock_i.",
    program: `const raws = ${js(raws)};
const cost = ${js(cost)};
const grade = ${js(grade)};
const stock = ${js(avail)};
const total = ${total}, lo = ${lo}, hi = ${hi};
const m = new Model("minimize");
const objective = {}, amount = {}, metal = {};
raws.forEach((r, i) => {
  m.addVar(r, { lb: 0, ub: stock[i] });
  objective[r] = cost[i];
  amount[r] = 1;
  metal[r] = grade[i];
});
m.setObjective(objective);
m.addConstraint(amount, "=", total, "total");
m.addConstraint(metal, ">=", lo * total, "grade low");
m.addConstraint(metal, "<=", hi * total, "grade high");
return m;`,
  };
}

const DRAW: Record<Family, (rng: Rng) => DrawnProblem> = {
  production,
  diet,
  transport,
  knapsack,
  assignment,
  scheduling,
  blending,
};

/** Draws one problem of `family`. */
export function drawProblem(rng: Rng, family: Family): DrawnProblem {
  return DRAW[family](rng);
}
