/**
 * The Conductor's plan executor (issue 13; arXiv 2512.04388 §3.1, app. E): runs a parsed plan's steps over a worker
 * pool. Step i's prompt holds its subtask and the outputs of exactly the steps in `access_list[i]`, nothing else
 * (not the question: the planner writes what a worker needs into its subtask). A step starts as soon as the steps it
 * may see are done, so independent steps run concurrently. Each call has a timeout; a worker that throws, hangs or
 * answers nothing fails its step, and a step that may see a failed step is skipped; both are recorded in the chain.
 * A failure of the infrastructure (a WorkerInfraError: transport, HTTP status, malformed server reply; or a
 * timeout) is marked `infra` on its step and `infraFailure` on the chain, which the task scores as not scorable.
 * The chain's final answer is the last step's output (null when that step did not succeed).
 *
 * Self-calls (the paper's recursive Conductor, §4.4): with `self`, the id after the pool's last is the planner
 * itself. Its call writes a plan for the step's prompt, which is executed one level deeper; past `maxDepth` the
 * step fails with the depth limit. The sub-chain is kept on the step.
 *
 * An invalid plan (unequal lists, unknown worker ids, access to a later step or itself, too many steps, empty
 * subtasks) is never executed: `executePlan` returns a failed chain with the reason and calls no worker.
 */
import type { Plan } from "../../rewards/plan.js";
import { stepPrompt } from "../../tasks/conductor-skills.js";
import { WorkerInfraError, type WorkerPool, type WorkerReply } from "./pool.js";

/** One executed step. */
export interface ChainStep {
  index: number;
  /** The worker's id ("self" for a self-call). */
  worker: string;
  workerIndex: number;
  subtask: string;
  access: number[];
  /** The prompt the worker got. */
  prompt: string;
  output: string | null;
  /** Output tokens the call spent (a self-call: its plan plus its sub-chain's worker tokens). */
  tokens: number;
  ms: number;
  status: "ok" | "error" | "skipped";
  error?: string;
  /** The step failed for the infrastructure's reasons: a WorkerInfraError or a timeout (rewards spec §8). */
  infra?: boolean;
  /** A self-call's executed sub-chain. */
  sub?: Chain;
}

/** An executed chain: stored with the rollout (`rewardInfo.chain`) and shown in samples.jsonl. */
export interface Chain {
  steps: ChainStep[];
  /** The last step's output; null when it failed, was skipped, or the plan was invalid. */
  answer: string | null;
  failed: boolean;
  /** A step (or a sub-chain's step) failed for the infrastructure's reasons. */
  infraFailure: boolean;
  /** Why the plan was not executed (invalid plan). */
  invalid?: string;
  workerTokens: number;
  /** Σ tokens × cost / 1000 over the steps. */
  cost: number;
  /** Recursion depth (0 = the planner's own plan). */
  depth: number;
}

/** The planner as a worker of its own plans. */
export interface SelfCall {
  /** Writes a plan for a sub-question (the planner's prompt, built by the caller). */
  plan(question: string, signal: AbortSignal): Promise<WorkerReply>;
  /** Parses the plan text (conductor-plan's grammar, over the pool plus self). */
  parse(text: string): { plan: Plan } | { error: string };
  /** Deepest level a self-call may run at (1 = the planner's plan may call itself once, not deeper). */
  maxDepth: number;
}

/** How to execute. */
export interface ExecuteOptions {
  /** Milliseconds per worker call. */
  timeoutMs: number;
  /** Most steps a plan may have (default 16). */
  maxSteps?: number;
  /** Let the plan call the planner (worker id = pool size). */
  self?: SelfCall;
  /** Current recursion depth (default 0). */
  depth?: number;
}

/** Why a plan cannot run over `workers` worker ids with at most `maxSteps` steps, or null when it can. */
export function checkPlan(plan: Plan, workers: number, maxSteps: number): string | null {
  const L = plan.modelIds.length;
  if (L === 0) return "the plan has no steps";
  if (plan.subtasks.length !== L || plan.accessList.length !== L) return "the three lists differ in length";
  if (L > maxSteps) return `the plan has ${L} steps, more than ${maxSteps}`;
  for (let i = 0; i < L; i++) {
    const id = plan.modelIds[i]!;
    if (!Number.isInteger(id) || id < 0 || id >= workers) return `step ${i}: unknown worker id ${id}`;
    const s = plan.subtasks[i];
    if (typeof s !== "string" || s.trim() === "") return `step ${i}: empty subtask`;
    const a = plan.accessList[i]!;
    if (!a.every((j) => Number.isInteger(j) && j >= 0 && j < i) || new Set(a).size !== a.length)
      return `step ${i}: access list must name distinct earlier steps`;
  }
  return null;
}

/** A step's prompt: the visible steps' outputs (labelled by step index), then the subtask. */
export { stepPrompt };

/** Runs `plan` over `pool`; never throws for a worker's failure or an invalid plan (see the file comment). */
export async function executePlan(plan: Plan, pool: WorkerPool, opts: ExecuteOptions): Promise<Chain> {
  const depth = opts.depth ?? 0;
  const workers = pool.size + (opts.self ? 1 : 0);
  const invalid = checkPlan(plan, workers, opts.maxSteps ?? 16);
  if (invalid !== null)
    return { steps: [], answer: null, failed: true, infraFailure: false, invalid, workerTokens: 0, cost: 0, depth };

  const steps: ChainStep[] = [];
  const done: Promise<ChainStep>[] = [];
  for (let i = 0; i < plan.modelIds.length; i++) {
    done.push(
      Promise.all(plan.accessList[i]!.map((j) => done[j]!)).then((seen) => runStep(i, seen, plan, pool, opts, depth)),
    );
  }
  steps.push(...(await Promise.all(done)));
  const last = steps[steps.length - 1]!;
  const answer = last.status === "ok" ? last.output : null;
  const cost = steps.reduce(
    (s, st) => s + (st.sub ? st.sub.cost : (st.tokens * costOf(pool, st.workerIndex)) / 1000),
    0,
  );
  return {
    steps,
    answer,
    failed: answer === null,
    infraFailure: steps.some((st) => st.infra === true || st.sub?.infraFailure === true),
    workerTokens: steps.reduce((s, st) => s + st.tokens, 0),
    cost,
    depth,
  };
}

const costOf = (pool: WorkerPool, i: number) => pool.workers[i]?.cost ?? 0;

/** Runs one step once the steps it may see are done. */
async function runStep(
  i: number,
  seen: readonly ChainStep[],
  plan: Plan,
  pool: WorkerPool,
  opts: ExecuteOptions,
  depth: number,
): Promise<ChainStep> {
  const workerIndex = plan.modelIds[i]!;
  const isSelf = workerIndex === pool.size;
  const subtask = plan.subtasks[i]!;
  const access = [...plan.accessList[i]!];
  const context = seen.map((s) => s.output ?? "");
  const prompt = stepPrompt(
    subtask,
    seen.map((s) => ({ index: s.index, output: s.output ?? "" })),
  );
  const step: ChainStep = {
    index: i,
    worker: isSelf ? "self" : pool.workers[workerIndex]!.id,
    workerIndex,
    subtask,
    access,
    prompt,
    output: null,
    tokens: 0,
    ms: 0,
    status: "skipped",
  };
  const failed = seen.find((s) => s.status !== "ok");
  if (failed) {
    step.error = `skipped: step ${failed.index} ${failed.status === "error" ? "failed" : "was skipped"}`;
    return step;
  }
  const t0 = performance.now();
  try {
    if (isSelf) await selfCall(step, opts, pool, depth);
    else {
      const w = pool.workers[workerIndex]!;
      const reply = await withTimeout((signal) => w.generate({ prompt, subtask, context, signal }), opts.timeoutMs);
      checkReply(reply);
      step.output = reply.text;
      step.tokens = reply.tokens;
    }
    step.status = "ok";
  } catch (err) {
    step.status = "error";
    step.error = `${step.worker}: ${err instanceof Error ? err.message : String(err)}`;
    if (err instanceof WorkerInfraError || err instanceof TimeoutError) step.infra = true;
  }
  step.ms = Math.round(performance.now() - t0);
  return step;
}

/** The planner plans the step's prompt as a sub-question; the sub-plan runs one level deeper. */
async function selfCall(step: ChainStep, opts: ExecuteOptions, pool: WorkerPool, depth: number): Promise<void> {
  const self = opts.self!;
  if (depth + 1 > self.maxDepth) throw new Error(`recursion depth limit ${self.maxDepth} reached`);
  const reply = await withTimeout((signal) => self.plan(step.prompt, signal), opts.timeoutMs);
  checkReply(reply);
  step.tokens = reply.tokens;
  const parsed = self.parse(reply.text);
  if ("error" in parsed) throw new Error(`its plan is invalid: ${parsed.error}`);
  const sub = await executePlan(parsed.plan, pool, { ...opts, depth: depth + 1 });
  step.sub = sub;
  step.tokens += sub.workerTokens;
  if (sub.answer === null) throw new Error(`its sub-chain failed${sub.invalid ? `: ${sub.invalid}` : ""}`);
  step.output = sub.answer;
}

function checkReply(reply: WorkerReply): void {
  if (!reply || typeof reply.text !== "string") throw new Error("answered no text");
  if (!(reply.tokens >= 0)) throw new Error(`reported ${String(reply.tokens)} tokens`);
}

/** A call that gave no answer within its time. */
export class TimeoutError extends Error {
  override readonly name = "TimeoutError";
}

/** Runs `fn` with an AbortSignal that fires after `ms`; rejects at the timeout even if `fn` ignores the signal. */
export async function withTimeout<T>(fn: (signal: AbortSignal) => Promise<T>, ms: number): Promise<T> {
  const ctl = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      ctl.abort();
      reject(new TimeoutError(`timeout: no answer within ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([Promise.resolve().then(() => fn(ctl.signal)), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
