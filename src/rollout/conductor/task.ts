/**
 * Wires the conductor task (src/tasks/conductor.ts) to a real worker pool and the executor, and registers it as
 * "conductor", so a recipe can name it: the pool is built once per task from `options.workers` (program workers,
 * built-in checkpoints loaded once per path and process, OpenAI-compatible endpoints), and scoring runs each valid
 * plan's chain (src/rollout/conductor/executor.ts) before `conductor-plan` reads its final answer.
 *
 * Self-calls: with `options.selfCalls`, the id after the pool's last is the planner itself. Through a recipe it is
 * the planner copy named in `selfCalls.planner` (e.g. the run's SFT start checkpoint, or an endpoint serving the
 * planner), which is frozen; code that holds the live policy passes it as `planner` to `createConductor`.
 */
import { loadModel, type LoadedModel } from "../../models/checkpoint.js";
import type { Transformer } from "../../models/transformer.js";
import type { Tokenizer } from "../../models/tokenizer.js";
import { ConfigError } from "../../util/errors.js";
import { parsePlan } from "../../rewards/plan.js";
import { registerTask, tasks } from "../../tasks/registry.js";
import type { Task } from "../../tasks/types.js";
import { SKILLS } from "../../tasks/conductor-skills.js";
import {
  conductorOptions,
  conductorTask,
  plannerPrompt,
  visibleWorkers,
  withChainScoring,
  type ChainRunner,
  type ConductorGold,
  type ConductorInput,
  type ConductorOptions,
  type WorkerOptions,
} from "../../tasks/conductor.js";
import { executePlan, type SelfCall } from "./executor.js";
import { checkpointWorker, openaiWorker, programWorker, WorkerPool, type Worker } from "./pool.js";

const loaded = new Map<string, LoadedModel>();

/** A checkpoint loaded once per path and process (workers are frozen, so sharing one copy is safe). */
export function loadWorkerCheckpoint(path: string): LoadedModel {
  let m = loaded.get(path);
  if (!m) {
    m = loadModel(path);
    loaded.set(path, m);
  }
  return m;
}

/** Builds one worker from its options. */
export function buildWorker(w: WorkerOptions, env: NodeJS.ProcessEnv = process.env): Worker {
  const info = { id: w.id, description: w.description, maxTokens: w.maxTokens, cost: w.cost };
  const src = w.source;
  if (src.type === "program") return programWorker({ ...info, run: SKILLS[src.skill] });
  if (src.type === "checkpoint") {
    const { model, tokenizer } = loadWorkerCheckpoint(src.path);
    return checkpointWorker({ ...info, model, tokenizer, temperature: src.temperature });
  }
  const apiKey = src.apiKeyEnv ? env[src.apiKeyEnv] : undefined;
  if (src.apiKeyEnv && !apiKey) throw new ConfigError(`worker ${w.id}: environment variable ${src.apiKeyEnv} is unset`);
  return openaiWorker({
    ...info,
    baseUrl: src.baseUrl,
    model: src.model,
    temperature: src.temperature,
    ...(apiKey ? { apiKey } : {}),
  });
}

/** The pool of `options.workers`, in order (the plan's ids index it). */
export function buildPool(workers: readonly WorkerOptions[]): WorkerPool {
  return new WorkerPool(workers.map((w) => buildWorker(w)));
}

/** Options of `createConductor` beyond the task's own. */
export interface ConductorRuntime {
  /** A ready pool (default: built from `options.workers`); its size must match `options.workers`. */
  pool?: WorkerPool;
  /** The live planner for self-calls (default: `options.selfCalls.planner`). */
  planner?: { model: Transformer; tokenizer: Tokenizer };
}

/** The task with its chain runner: pool, executor, self-calls; see the file comment. */
export function createConductor(options: ConductorInput = {}, rt: ConductorRuntime = {}): Task<ConductorGold> {
  const o = conductorOptions.parse(options);
  const pool = rt.pool ?? buildPool(o.workers);
  if (pool.size !== o.workers.length)
    throw new ConfigError(`conductor: the pool has ${pool.size} workers but options.workers lists ${o.workers.length}`);
  const self = o.selfCalls ? selfCall(o, rt.planner) : undefined;
  const runChain: ChainRunner = (plan) =>
    executePlan(plan, pool, { timeoutMs: o.timeoutMs, maxSteps: o.maxSteps, ...(self ? { self } : {}) });
  return withChainScoring(conductorTask.create(o), runChain, o.onInfraFailure);
}

/** The planner as a worker of its own plans: writes a plan for a sub-question with the task's planner prompt. */
function selfCall(o: ConductorOptions, live: ConductorRuntime["planner"]): SelfCall {
  const sc = o.selfCalls!;
  const shown = visibleWorkers(o);
  let planner: Worker;
  const info = { id: "self", description: "the planner", maxTokens: 256, cost: 0 };
  if (live) planner = checkpointWorker({ ...info, ...live });
  else if (sc.planner && sc.planner.type !== "program")
    planner = buildWorker({ ...info, source: sc.planner } as WorkerOptions);
  else
    throw new ConfigError(
      "conductor: selfCalls needs selfCalls.planner (a checkpoint or an endpoint) or a live planner",
    );
  return {
    maxDepth: sc.maxDepth,
    plan: (question, signal) => {
      const prompt = plannerPrompt(shown, question);
      return planner.generate({ prompt, subtask: question, context: [], signal });
    },
    parse: (text) => parsePlan(text, shown.length, o.maxSteps),
  };
}

/** Registers "conductor" in the task registry (once per process). */
export function registerConductorTask(): void {
  if (tasks.has("conductor")) return;
  registerTask({
    name: "conductor",
    description: conductorTask.definition.description,
    options: conductorOptions,
    create: (o: ConductorOptions) => createConductor(o),
    localOnly: true, // its options name checkpoints to load and endpoints to call
  });
}
