/**
 * The compact completions the SIRL bench's SFT start is taught (bench/seeds/sirl.ts), for the knapsack family of the
 * optimisation task. The task's own gold program (~650 characters) copies the data into three separate arrays
 * (values, weights, names), which a char-level model must gather from interleaved text; the compact program keeps
 * the prompt's order, `[[value, weight], ...]`, and is ~350 characters, so that copying is in order and a sequence
 * fits a small model. It keeps the three sections `<think>`, `<model>` and `<code>` (partial KL needs them) and the
 * sandbox's `Model` API, and solves to the task's gold objective (test/bench/seeds-sirl.test.ts).
 *
 * Departure: the paper's SFT-free start writes varied Python; ours is taught one template per family.
 */

/** A knapsack problem read back from its prompt. */
export interface KnapsackData {
  capacity: number;
  /** [value, weight] per item, in prompt order. */
  items: [number, number][];
}

/** Reads capacity and (value, weight) pairs from a knapsack prompt; throws when the prompt is not one. */
export function parseKnapsack(prompt: string): KnapsackData {
  const cap = /carry at most (\d+) kg/.exec(prompt);
  const list = /are: (.*)\.\n/.exec(prompt);
  if (!cap || !list) throw new Error(`parseKnapsack: not a knapsack prompt: ${JSON.stringify(prompt.slice(0, 80))}`);
  const items = [...list[1]!.matchAll(/\((\d+), (\d+)\)/g)].map(
    (m) => [Number(m[1]), Number(m[2])] as [number, number],
  );
  if (items.length === 0) throw new Error("parseKnapsack: no (value, weight) pairs");
  return { capacity: Number(cap[1]), items };
}

/** The compact completion of a knapsack problem. */
export function compactKnapsackCompletion(d: KnapsackData): string {
  const items = d.items.map(([v, w]) => `[${v},${w}]`).join(",");
  return `<think>0/1 knapsack: one binary per item.</think>
<model>max sum v_i x_i; sum w_i x_i <= cap; x binary</model>
<code>
\`\`\`js
const it = [${items}];
const m = new Model("maximize"), o = {}, l = {};
it.forEach(([v, w], i) => { m.addVar("x" + i, { type: "binary" }); o["x" + i] = v; l["x" + i] = w; });
m.setObjective(o);
m.addConstraint(l, "<=", ${d.capacity}, "weight");
return m;
\`\`\`
</code>`;
}
