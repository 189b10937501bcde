/**
 * SIRL solver-checked reward (rewards spec §9, after `Cardinal-Operations/SIRL` stage-1/stage-2 rewards).
 *
 * Terms (unweighted): `format` (tags in order; 0/1, or the reference's graded 0..2 in preset `sirlCode`), `runs`
 * (the program finished inside its limits and HiGHS accepted the model), `objective` (HiGHS says Optimal and the
 * objective is within tolerance of the gold), `solutionHit` (stage 2: share of the gold solution values, as a
 * multiset rounded to 3 places, found among the model's column values; paid only when `objective` is 1, since a fixed
 * program that ignores the problem hits common values such as 0 by chance). Default weights 0.5 / 1 / 2 / 0.
 * Departures from the reference, each a spec decision: the objective comes from our solve, never from printed text
 * (§9.1); gold 0 is an ordinary target (D-S2; the reference's truthiness test never pays it); trivial models are
 * rejected (D-S3); status golds are unscorable unless `allowStatusGold` (D-S4); only `Optimal` counts (D-S6).
 *
 * `sirl` returns the weighted score; `sirl-format`, `sirl-runs`, `sirl-objective` and `sirl-solution-hit` return one
 * term each for tasks that weight terms themselves. They share one memoised check per (completion, gold, options),
 * so a task that scores all four runs the program and the solver once.
 */
import { z } from "zod";
import { memoizeReward } from "../memo.js";
import { rewards } from "../registry.js";
import type { RewardResult, RewardSpec } from "../types.js";
import { jobFault, moduleUrl, SANDBOX_SETUP_MS, sharedPool } from "../sandbox/pool.js";
import { SOLVE_GRACE_MS, type SirlCheck, type SirlCheckArgs } from "./check-job.js";
import { codeBlock, DEFAULT_TAGS, formatGraded, formatStrict } from "./completion.js";

/** Gold of one optimisation problem. */
export interface SirlGold {
  /** Optimal objective; null/absent when the gold is a status. */
  objective?: number | null;
  /** Status gold (D-S4): scorable only with `allowStatusGold`. */
  status?: "optimal" | "infeasible" | "unbounded";
  /** Optimal variable values, for the stage-2 `solutionHit` term. */
  solution?: number[];
}

const weightsSchema = z
  .object({
    format: z.number().default(0.5),
    runs: z.number().default(1),
    objective: z.number().default(2),
    solutionHit: z.number().default(0).describe("stage-2 bonus weight"),
  })
  .strict();

/** Options of the SIRL rewards; defaults are the spec's. */
export const sirlOptions = z
  .object({
    preset: z
      .enum(["default", "sirlCode", "sirlEval"])
      .default("default")
      .describe("sirlCode: reference code; sirlEval: published evaluation"),
    tags: z.object({ think: z.string(), model: z.string(), code: z.string() }).strict().default(DEFAULT_TAGS),
    weights: weightsSchema.default({ format: 0.5, runs: 1, objective: 2, solutionHit: 0 }),
    absTolerance: z.number().min(0).default(0.01).describe("pass if |pred-gold| <= absTolerance (D-S1)"),
    relTolerance: z.number().min(0).default(1e-6).describe("... or <= relTolerance*(|gold|+1)"),
    allowStatusGold: z.boolean().default(false).describe("score infeasible/unbounded golds (D-S4)"),
    timeoutMs: z.number().int().positive().default(5000).describe("program CPU limit (SIRL executor: 5 s)"),
    memoryMb: z.number().int().min(8).default(128),
    timeLimitS: z.number().positive().default(10).describe("HiGHS time_limit"),
    mipRelGap: z.number().min(0).default(1e-7).describe("HiGHS mip_rel_gap, below the tolerance"),
    seed: z.number().int().default(0),
  })
  .strict();

/** Options after defaults. */
export type SirlOptions = z.infer<typeof sirlOptions>;

/** Applies a named preset over the options (G7). */
function resolve(o: SirlOptions): SirlOptions {
  if (o.preset === "sirlCode")
    return {
      ...o,
      absTolerance: 0,
      weights: { format: 0.5, runs: 1, objective: 1, solutionHit: o.weights.solutionHit },
    };
  if (o.preset === "sirlEval") return { ...o, absTolerance: 0 };
  return o;
}

/** True when `pred` is within tolerance of `gold` (D-S1: either criterion passes). */
export function withinTolerance(gold: number, pred: number, abs: number, rel: number): boolean {
  const d = Math.abs(pred - gold);
  // The reference's relative test is strict (<); the absolute one from the paper is inclusive.
  // The absolute bound gets a 1e-9 slack so that a gold rounded to 2 places (80.01 vs 80) passes despite binary floats.
  return d < rel * (Math.abs(gold) + 1) || d <= abs * (1 + 1e-9);
}

/** Share of the gold values (rounded to 3 places, as a multiset) found among `values`. */
export function solutionHitRate(gold: readonly number[], values: readonly number[]): number {
  if (gold.length === 0) return 0;
  const key = (x: number) => (Math.round(x * 1000) / 1000 + 0).toFixed(3);
  const pool = new Map<string, number>();
  for (const v of values) pool.set(key(v), (pool.get(key(v)) ?? 0) + 1);
  let hits = 0;
  for (const g of gold) {
    const n = pool.get(key(g)) ?? 0;
    if (n > 0) {
      hits++;
      pool.set(key(g), n - 1);
    }
  }
  return hits / gold.length;
}

const memoEvaluate = memoizeReward(256, evaluate);

/** Scores one completion; every term unweighted in `terms`, the weighted sum in `score`. */
export function scoreSirl(
  completion: string,
  gold: SirlGold,
  options: Partial<SirlOptions> = {},
): Promise<RewardResult> {
  const o = resolve(sirlOptions.parse(options));
  return memoEvaluate(completion, gold, o);
}

async function evaluate(completion: string, gold: SirlGold, o: SirlOptions): Promise<RewardResult> {
  const hasObjective = typeof gold.objective === "number" && Number.isFinite(gold.objective);
  const statusGold = gold.status && gold.status !== "optimal" ? gold.status : null;
  if (!hasObjective && !statusGold)
    return { score: null, terms: {}, info: { reason: "gold has neither an objective nor a status" } };
  if (statusGold && !o.allowStatusGold)
    return { score: null, terms: {}, info: { reason: `status gold "${statusGold}" is excluded (D-S4)` } };

  const text = completion.length > 20_000 ? "" : completion; // G8 cap on the graded region
  const format = o.preset === "sirlCode" ? formatGraded(text, o.tags) : formatStrict(text, o.tags);
  const terms = { format, runs: 0, objective: 0, solutionHit: 0 };
  const info: Record<string, unknown> = {};
  const done = (): RewardResult => {
    const w = o.weights;
    const score =
      w.format * terms.format + w.runs * terms.runs + w.objective * terms.objective + w.solutionHit * terms.solutionHit;
    return { score, terms, info };
  };
  if (completion.length > 20_000) info.reason = "completion over the 20,000-char cap";

  const block = codeBlock(text, o.tags);
  if (!block.ok) {
    info.reason ??= block.reason;
    return done();
  }
  const args: SirlCheckArgs = {
    lang: block.lang,
    source: block.source,
    seed: o.seed,
    timeoutMs: o.timeoutMs,
    memoryMb: o.memoryMb,
    solve: { timeLimitS: o.timeLimitS, mipRelGap: o.mipRelGap },
  };
  const out = await sharedPool().run<SirlCheck>({
    module: moduleUrl("../solver/check-job"),
    fn: "checkSirlCode",
    args,
    // The first phase's deadline; the job re-arms it for the program and the solve (check-job.ts).
    wallMs: SANDBOX_SETUP_MS + o.timeoutMs + o.timeLimitS * 1000 + SOLVE_GRACE_MS,
  });
  if (!out.ok) {
    // Overrunning, going over memory or crashing the worker process is the prediction's fault: it earns the failure
    // score (and the pool counts it). A worker that died before the job started is an infrastructure failure.
    if (jobFault(out)) {
      info.reason = out.error;
      return done();
    }
    return { score: null, terms: {}, info: { reason: `infrastructure: ${out.error}` } };
  }
  const check = out.value;
  info.stage = check.stage;
  if (check.error) info.reason = check.error;
  if (check.stage !== "solved" || !check.solve) return done();
  const s = check.solve;
  terms.runs = 1;
  info.status = s.status;
  info.modelSize = s.modelSize;
  info.objective = s.objective;
  if (s.trivial) {
    info.reason = `trivial model (D-S3): ${s.trivial}`;
    return done();
  }
  if (statusGold) {
    const want = statusGold === "infeasible" ? "Infeasible" : "Unbounded";
    terms.objective = s.status === want ? 1 : 0;
    return done();
  }
  if (s.status !== "Optimal" || s.objective === null) {
    info.reason = `HiGHS status "${s.status}" is not Optimal (D-S6)`;
    return done();
  }
  terms.objective = withinTolerance(gold.objective!, s.objective, o.absTolerance, o.relTolerance) ? 1 : 0;
  // Stage 2 pays the solution only with the right objective: values alone are matched as a multiset, so a fixed
  // model whose columns are 0 or round numbers would otherwise collect the bonus on problems it never read.
  if (terms.objective === 1 && gold.solution?.length) terms.solutionHit = solutionHitRate(gold.solution, s.values);
  return done();
}

const EXAMPLE_GOLD: SirlGold = { objective: 80, solution: [0, 20] };

function goldCompletion(): string {
  return [
    "<think>Maximise profit 5x + 4y with labour 3x + 2y <= 40 and x <= 10.</think>",
    "<model>max 5x + 4y s.t. 3x + 2y <= 40, x <= 10, x, y >= 0</model>",
    '<code>\n```js\nconst m = new Model("maximize");\nm.addConstraint({ x: 3, y: 2 }, "<=", 40, "labour");\nm.addConstraint({ x: 1 }, "<=", 10, "capacity");\nm.setObjective({ x: 5, y: 4 });\nreturn m;\n```\n</code>',
  ].join("\n");
}

function termSpec(
  name: string,
  term: "format" | "runs" | "objective" | "solutionHit",
  what: string,
): RewardSpec<SirlOptions, SirlGold> {
  return {
    name,
    description: `SIRL: ${what}`,
    options: sirlOptions,
    async score({ completion, gold }, o) {
      const r = await scoreSirl(completion, gold, o);
      return {
        score: r.score === null ? null : (r.terms[term] ?? 0),
        terms: r.terms,
        ...(r.info ? { info: r.info } : {}),
      };
    },
    exampleGold: EXAMPLE_GOLD,
    maxScore: 1,
    goldCompletion,
  };
}

/** The combined SIRL reward: weighted sum of the four terms. */
export const sirlReward: RewardSpec<SirlOptions, SirlGold> = {
  name: "sirl",
  description:
    "SIRL: run the completion's optimisation model (JS model API or LP) with HiGHS; format, runs, objective terms",
  options: sirlOptions,
  score: ({ completion, gold }, o) => scoreSirl(completion, gold, o),
  goldCompletion,
  exampleGold: EXAMPLE_GOLD,
  maxScore: 3.5,
};

/** Single-term SIRL rewards, for tasks that weight the terms. */
export const sirlTermRewards = [
  termSpec("sirl-format", "format", "think → model → code tags, each once and non-empty"),
  termSpec("sirl-runs", "runs", "the program ran inside its limits and HiGHS accepted its model"),
  termSpec("sirl-objective", "objective", "HiGHS Optimal and the objective within tolerance of the gold"),
  termSpec(
    "sirl-solution-hit",
    "solutionHit",
    "stage 2: share of the gold solution values found in the solution, paid only with the right objective",
  ),
];

for (const spec of [sirlReward, ...sirlTermRewards]) if (!rewards.has(spec.name)) rewards.register(spec);
