/**
 * "optimisation": SIRL-style optimisation modelling (rewards spec §9). The prompt is a seeded LP/MILP word problem
 * (production planning, diet, transport, knapsack, assignment, staff scheduling, blending); the completion reasons in
 * <think>, states the model in <model>, and gives a JavaScript program in <code> that builds the model through the
 * sandbox's `Model` API (or a CPLEX-LP block). Rewards: `sirl-format` 0.5, `sirl-runs` 1, `sirl-objective` 2 and the
 * stage-2 `sirl-solution-hit` at weight 0 (logged only), after the paper's 0.5 / 1 / 2.
 *
 * With `prompt: "question"` the prompt is the word problem without the format instructions (for small models that
 * learn the format from SFT); problems, split and gold are the same.
 *
 * The ground truth is computed here: the gold program is run (trusted, in an isolate) and its model solved with HiGHS,
 * so the gold completion is checked by construction. This module loads the HiGHS WebAssembly module at import time
 * (top-level await), because `generate` is synchronous.
 */
import { z } from "zod";
import { runTrustedSync } from "../rewards/sandbox/run.js";
import { loadHighs, solveWith } from "../rewards/solver/highs.js";
import { lpModelSchema, PRELUDE, toLpText } from "../rewards/solver/lp-model.js";
import type { SirlGold } from "../rewards/solver/reward.js";
import "../rewards/solver/reward.js";
import type { Drawn } from "./generate.js";
import { drawProblem, FAMILIES, type DrawnProblem } from "./optimisation-problems.js";
import { defineTask } from "./define-task.js";
import type { TaskDefinition } from "./registry.js";
import type { RewardTerm, Task } from "./types.js";

const highs = await loadHighs();

/** Options of "optimisation". */
export const optimisationOptions = z
  .object({
    families: z
      .array(z.enum(FAMILIES))
      .min(1)
      .default([...FAMILIES])
      .describe("problem families to draw from"),
    solutionHitWeight: z.number().min(0).default(0).describe("weight of the stage-2 solution-hit term"),
    prompt: z
      .enum(["full", "question"])
      .default("full")
      .describe('"question": the word problem without the format instructions (small models learn them by SFT)'),
  })
  .strict();

/** Options after defaults. */
export type OptimisationOptions = z.infer<typeof optimisationOptions>;

/** The instructions every prompt ends with: the format and the model-building API. */
export const OPTIMISATION_INSTRUCTIONS = `Answer in three parts: <think>your reasoning</think>, <model>the mathematical model</model>, and <code> with one fenced \`\`\`js block.
The program builds the model and returns it: const m = new Model("maximize" | "minimize"); m.addVar(name, { lb, ub, type: "continuous" | "integer" | "binary" }) (undeclared variables are continuous, >= 0); m.addConstraint({ var: coef, ... }, "<=" | ">=" | "=", rhs, name); m.setObjective({ var: coef, ... }); return m;
A fenced \`\`\`lp block with a CPLEX-LP model is also accepted. The model is solved for you.`;

/** Solves a drawn problem's gold program; returns the gold or throws (a generator bug). */
export function solveDrawn(p: DrawnProblem): SirlGold {
  const value = runTrustedSync({ code: p.program, prelude: PRELUDE, timeoutMs: 2000, seed: 0 });
  const model = lpModelSchema.parse(value);
  const rendered = toLpText(model);
  const s = solveWith(highs, rendered.text, { timeLimitS: 10, mipRelGap: 1e-7 });
  if (!s.ok || s.status !== "Optimal" || s.objective === null || s.trivial) {
    throw new Error(
      `optimisation generator: ${p.family} problem did not solve to optimality (${s.ok ? s.status : s.error})`,
    );
  }
  return { objective: s.objective, status: "optimal", solution: s.values };
}

/** The gold completion of a drawn problem. */
export function goldCompletionOf(p: DrawnProblem): string {
  return `<think>${p.reasoning}</think>\n<model>${p.formulation}</model>\n<code>\n\`\`\`js\n${p.program}\n\`\`\`\n</code>`;
}

function draw(rng: import("../util/rng.js").Rng, o: OptimisationOptions): Drawn<SirlGold> {
  const family = rng.choice(o.families);
  const p = drawProblem(rng, family);
  // `gold` is a getter: generateExamples reads it only for problems it keeps, so draws that land in the other
  // split or repeat a problem are never run or solved.
  return {
    key: `${family}:${JSON.stringify(p.data)}`,
    prompt: o.prompt === "question" ? `${p.question}\n` : `${p.question}\n\n${OPTIMISATION_INSTRUCTIONS}`,
    get gold() {
      return solveDrawn(p);
    },
    goldCompletion: goldCompletionOf(p),
  };
}

const optimisation = defineTask<SirlGold, OptimisationOptions>({
  name: "optimisation",
  summary:
    "SIRL: write an optimisation model (JS model API or CPLEX LP) for a word problem; solved and checked with HiGHS",
  options: optimisationOptions,
  build: (o) => {
    const terms: RewardTerm[] = [
      { name: "format", reward: "sirl-format", weight: 0.5, options: {} },
      { name: "runs", reward: "sirl-runs", weight: 1, options: {} },
      { name: "objective", reward: "sirl-objective", weight: 2, options: {} },
      { name: "solutionHit", reward: "sirl-solution-hit", weight: o.solutionHitWeight, options: {} },
    ];
    return {
      description: `SIRL optimisation modelling (${o.families.join(", ")}); the model is solved with HiGHS`,
      terms,
      correctTerm: "objective",
      stop: ["</code>"],
      maxNewTokens: 1024,
      draw: (rng) => draw(rng, o),
    };
  },
});

/** Builds the "optimisation" task. */
export const createOptimisationTask: (options?: Partial<OptimisationOptions>) => Task<SirlGold> = optimisation.create;

/** Registry definition of "optimisation". */
export const optimisationTask: TaskDefinition<OptimisationOptions> = optimisation.definition;
