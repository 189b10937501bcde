/**
 * The SIRL check that runs inside a pool worker: run the program in the sandbox (for a `js` block) to get its model,
 * render it as CPLEX-LP, and solve it with HiGHS (rewards spec §9.1). The objective always comes from our solve of the
 * model the completion defines; anything the program prints is never read.
 *
 * Each phase has its own deadline in the pool (deadline.ts): the program its `timeoutMs` (set by `runInIsolate`),
 * the solve HiGHS's `timeLimitS` plus `SOLVE_GRACE_MS`. A phase that overruns has its worker process killed.
 */
import { setJobDeadline } from "../sandbox/deadline.js";
import { runInIsolate } from "../sandbox/run.js";
import { solveLp, type SolveOptions, type SolveResult } from "./highs.js";
import { lpModelSchema, PRELUDE, toLpText } from "./lp-model.js";

/** Arguments of one check. */
export interface SirlCheckArgs {
  lang: "lp" | "js";
  source: string;
  seed: number;
  timeoutMs: number;
  memoryMb: number;
  solve: SolveOptions;
}

/** Outcome of one check. `stage` says how far it got. */
export interface SirlCheck {
  /** "program": the program failed; "model": its value is not a model; "solve": HiGHS rejected it; "solved". */
  stage: "program" | "model" | "solve" | "solved";
  error?: string;
  /** Set when stage is "solved". */
  solve?: Extract<SolveResult, { ok: true }>;
  /** The program's CPU time (ms), for `js` blocks. */
  cpuMs?: number;
}

/** Time past HiGHS's own `time_limit` before the solve's worker is killed (HiGHS checks its limit between steps). */
export const SOLVE_GRACE_MS = 2000;

/** Turns a program's return value into LP text, or says why it cannot. */
function modelText(value: unknown): { text: string } | { error: string } {
  if (typeof value === "string") return { text: value };
  const parsed = lpModelSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      error: `the program returned neither LP text nor a model: ${issue?.path.join(".") || "(value)"}: ${issue?.message}`,
    };
  }
  try {
    return { text: toLpText(parsed.data).text };
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
}

/** Runs (for js) and solves one completion's model. */
export async function checkSirlCode(args: SirlCheckArgs): Promise<SirlCheck> {
  let text = args.source;
  let cpuMs: number | undefined;
  if (args.lang === "js") {
    const run = await runInIsolate({
      code: args.source,
      prelude: PRELUDE,
      timeoutMs: args.timeoutMs,
      memoryMb: args.memoryMb,
      seed: args.seed,
    });
    if (!run.ok) return { stage: "program", error: `${run.kind}: ${run.error}` };
    cpuMs = run.cpuMs;
    const m = modelText(run.value);
    if ("error" in m) return { stage: "model", error: m.error, cpuMs };
    text = m.text;
  }
  setJobDeadline((args.solve.timeLimitS ?? 10) * 1000 + SOLVE_GRACE_MS);
  const solved = await solveLp(text, args.solve);
  if (!solved.ok) return { stage: "solve", error: solved.error, cpuMs };
  return { stage: "solved", solve: solved, cpuMs };
}
