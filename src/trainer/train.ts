/**
 * The RLVR training loop, in one file that reads top to bottom (STYLE.md; after nanochat's scripts/chat_rl.py):
 * for each step, sample G completions per prompt, score them with the task's verifiable rewards, turn rewards into
 * advantages, compute the policy loss and step the optimizer, then log, evaluate and checkpoint.
 *
 * Departures from the concept card's sketch, each a recipe field: the algorithm is any preset of
 * docs/spec/algorithms.md, built once by `buildAlgorithm` (src/algorithms), whose functions this loop calls; the
 * reference model exists only when β > 0 or `kl.monitorOnly`; nulls are removed from the step (§1.6).
 * Determinism: every random stream is derived from (seed, step), so a run resumed from its newest complete
 * checkpoint replays exactly the steps an uninterrupted run would have taken.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, Rng } from "../util/index.js";
import { type OptimizerState } from "../engine/index.js";
import { getTask } from "../tasks/index.js";
import type { Example } from "../tasks/types.js";
import { scoreGroups } from "../rollout/groups.js";
import type { RolloutGroup } from "../rollout/types.js";
import { ADAPTER_DIR, loadModelWithAdapter, saveModel } from "../models/checkpoint.js";
import { configWarnings, type TrainConfig } from "./config.js";
import { RunDir } from "./run-dir.js";
import {
  latestCheckpoint,
  loadCheckpoint,
  pruneCheckpoints,
  saveCheckpoint,
  type TrainerState,
} from "./checkpoints.js";
import { emit, type Reporter } from "./reporters.js";
import { buildModel, buildOptimizer, lrAt, trainableParams, type ModelAndTokenizer } from "./model-setup.js";
import "./builtins.js";
import { evaluate } from "./evaluate.js";
import { shapeRewards, assignAdvantages, checkNulls, numbersOf } from "./step-advantages.js";
import { sectionMasks } from "./kl-sections.js";
import { buildAlgorithm, checkDiffusionAlgorithm, type ResampleDecision } from "../algorithms/index.js";
import { isDiffusionLM, modelKindOf } from "../models/diffusion-lm.js";
import { sampleGroupsFor, updateDiffusionPolicy } from "./diffusion-step.js";
import { maskAfterFirstError } from "./error-credit.js";
import { referenceLogprobs, updatePolicy } from "./policy-update.js";
import { rewardMetrics, sampleRecords } from "./step-metrics.js";
import { addRlAdapters, loraOptions, sftSetOf, sftWarmStart } from "./warm-start.js";
import { RemoteGeneration } from "./remote-generation.js";
import { OldLogprobs } from "./old-logprobs.js";
import { LoopReplay, type StoredRollout } from "./replay.js";
import type { ReplayState } from "../algorithms/index.js";

/** Options of one `train()` call. */
export interface TrainOptions {
  /** Event hooks (console progress, JSONL files, SVG plot, ...). */
  reporters?: Reporter[];
  /** Continue from the newest complete checkpoint of an existing run folder (default true). */
  resume?: boolean;
  /** Let a fresh start delete an earlier run of another recipe in the run folder (default false: RunDirError). */
  overwrite?: boolean;
  /** Stop after this step even if `train.steps` is larger (tests, benchmarks). */
  stopAfter?: number;
  /** Test hook: replaces the task's rewards (e.g. a checker that throws, or shuffled rewards for a control run). */
  transformGroups?: (groups: RolloutGroup[], step: number) => void;
  /** Printed warnings go here (default console.warn). */
  warn?: (msg: string) => void;
}

/** What a finished run reports. */
export interface TrainResult {
  runDir: string;
  step: number;
  startEval: Record<string, number> | null;
  finalEval: Record<string, number> | null;
  best: { score: number; step: number } | null;
}

/** Trains a policy with the recipe `config`; writes the run folder `<outDir>/<name>/`. */
export async function train(config: TrainConfig, opts: TrainOptions = {}): Promise<TrainResult> {
  const warn = opts.warn ?? ((m: string) => console.warn(`warning: ${m}`));
  for (const w of configWarnings(config)) warn(w);
  const reporters = opts.reporters ?? [];
  const { train: tc, algorithm: alg } = config;
  const run = new RunDir(join(config.outDir, config.name));
  const task = getTask(config.task.name, config.task.options);
  const trainSet = task.generate("train", config.task.trainExamples, config.task.seed);
  const testSet = task.generate("test", config.task.testExamples, config.task.seed).slice(0, config.eval.examples);
  const examplesById = new Map(trainSet.map((e) => [e.id, e]));
  const maxNewTokens = tc.maxCompletionTokens;
  /** The masked-diffusion sampler's knobs (`sampler.diffusion`), for rollouts and evaluation alike. */
  const diffusionSampler = config.sampler.type === "builtin" ? config.sampler.diffusion : undefined;
  const passKey = `eval/${task.name}/pass@1`;

  // ---- policy, optimizer, state: fresh (with optional SFT warm start) or resumed from the newest checkpoint
  run.recover(); // leftovers of a kill mid-write or mid-prune
  const resumeFrom = opts.resume !== false && run.exists() ? latestCheckpoint(run.checkpointsDir) : null;
  let policy: ModelAndTokenizer;
  let optimizerState: unknown = null;
  let state: TrainerState;
  if (resumeFrom) {
    assertSameRecipe(run, config);
    const ck = loadCheckpoint(resumeFrom);
    policy = { model: ck.model, tokenizer: ck.tokenizer };
    if (config.lora) {
      const rng = loraOptions(config, "rl").rng; // the unmerged RL adapters on their base, the start model
      policy.model = loadModelWithAdapter(startModelDir(run), join(resumeFrom, ADAPTER_DIR), { rng }).model;
    }
    optimizerState = ck.optimizerState;
    const { stepMetrics, ...rest } = ck.state;
    state = rest;
    run.truncateAfter(state.step);
    const lineLost = stepMetrics && existsSync(run.metricsPath) && !run.metrics().some((r) => r.step === state.step);
    if (lineLost) run.logMetrics({ step: state.step, ...stepMetrics });
  } else {
    run.startFresh(config, { overwrite: opts.overwrite === true }); // never deletes another recipe's run unasked
    policy = buildModel(config.model, config.seed, alg.diffusion.type === "none" ? "autoregressive" : "diffusion");
    if (config.sft.enabled) await sftWarmStart(policy, sftSetOf(config, trainSet), config);
    saveModel(startModelDir(run), policy.model, policy.tokenizer); // the reference, and a record of the start
    addRlAdapters(policy.model, config); // with `lora`, RL trains a fresh adapter on the start
    const counters = { dataCursor: 0, tokens: 0, samples: 0 };
    state = { step: 0, rng: new Rng(config.seed).state(), beta: alg.kl.beta, best: null, counters };
  }
  const { model, tokenizer } = policy;
  const params = trainableParams(model);
  const optimizer = buildOptimizer(tc, model);
  if (optimizerState) optimizer.loadState(optimizerState as OptimizerState);
  // The algorithm, built once: reward shaping, advantages, loss, where KL goes and how β moves (src/algorithms).
  const termWeights = Object.fromEntries(task.terms.map((t) => [t.name, t.weight]));
  const algorithm = buildAlgorithm(alg, { maxCompletionTokens: tc.maxCompletionTokens, termWeights });
  checkDiffusionAlgorithm(alg, modelKindOf(model)); // wd1/diffuGrpo need a diffusion LM, which needs one of them (§7)
  const referencePath = config.reference ?? startModelDir(run);
  const reference = algorithm.kl.reference
    ? buildModel({ type: "checkpoint", path: referencePath }, config.seed).model
    : null;
  // ExGRPO experience replay (§6): the buffer, restored with the checkpoint's state on resume.
  const replay =
    alg.replay.type === "exgrpo"
      ? new LoopReplay(alg.replay, task.correctTerm, state.replay as ReplayState<StoredRollout> | undefined)
      : null;
  const lastStep = Math.min(tc.steps, opts.stopAfter ?? tc.steps);
  // A remote sampler (docs/remote-sampler.md) starts from the trainer's weights: they are pushed as version state.step.
  const remote =
    config.sampler.type === "openai"
      ? await RemoteGeneration.connect(config.sampler, tokenizer, run.root, alg.offPolicy.maxStaleness, warn)
      : null;
  if (remote) await remote.pushWeights(model, state.step);
  const generateAhead = alg.offPolicy.maxStaleness > 0 && remote !== null; // one step ahead (checkConfig: remote only)
  const resumed = resumeFrom !== null;
  emit(reporters, "onStart", { runDir: run.root, startStep: state.step, totalSteps: tc.steps, resumed });

  const runEval = async (step: number) => {
    const t0 = performance.now();
    const { temperature, k } = config.eval;
    const res = await evaluate(model, tokenizer, task, testSet, {
      temperature,
      k,
      maxNewTokens,
      seed: config.seed,
      ...(diffusionSampler ? { diffusion: diffusionSampler } : {}),
    });
    res.metrics["time/eval"] = (performance.now() - t0) / 1000;
    emit(reporters, "onEval", step, res.metrics);
    const score = res.metrics[passKey] ?? -Infinity;
    if (config.checkpoint.keepBest && step > 0 && (state.best === null || score > state.best.score)) {
      state.best = { score, step };
      saveCheckpoint(run.checkpointsDir, "best", { model, tokenizer, optimizerState: optimizer.state(), state });
    }
    return res.metrics;
  };
  const startEval = state.step === 0 && config.eval.atStart ? await runEval(0) : null;
  let lastEval: Record<string, number> | null = null;

  const stepRngOf = (step: number) => new Rng(config.seed).split("step").split(step);
  /** Sampling options of generation batch `genBatch` of `step` (also what the one-step-ahead prefetch sends). */
  const samplingFor = (step: number, genBatch: number, policyVersion: number) => ({
    groupSize: tc.groupSize,
    maxNewTokens,
    temperature: config.sampler.temperature,
    topK: config.sampler.topK,
    topP: config.sampler.topP,
    ...(diffusionSampler ? { diffusion: diffusionSampler } : {}),
    ...(task.stop ? { stop: task.stop } : {}),
    rng: stepRngOf(step).split(`gen-${genBatch}`),
    policyVersion,
    idPrefix: genBatch === 0 ? `${step}` : `${step}.${genBatch}`,
  });

  for (let step = state.step + 1; step <= lastStep; step++) {
    const tStep = performance.now();
    const m: Record<string, number> = {};
    const stepRng = stepRngOf(step);

    // ---- 1. sample: G completions for each of Q prompts (more batches while the algorithm asks for them)
    const groups: RolloutGroup[] = []; // every group generated this step
    let genBatches = 0;
    let kept: ReturnType<typeof assignAdvantages> | null = null;
    let klMasks: ReturnType<typeof sectionMasks> = null;
    // oldLogprobs and weightSync stay 0 with the built-in sampler: it records the exact log-probs of the weights it
    // samples with, and it shares those weights with the trainer (nothing to recompute or copy).
    const time = { generate: 0, reward: 0, advantage: 0, refLogprobs: 0, oldLogprobs: 0, weightSync: 0 };
    let decision: ResampleDecision = "train";
    const old = new OldLogprobs(model, alg.offPolicy, remote !== null, {
      padId: tokenizer.padId,
      microBatchSize: tc.microBatchSize,
      temperature: config.sampler.temperature,
    });
    // Replay questions of this step (ExGRPO, once started): each gets G − 1 fresh rows plus its stored answer.
    const T = config.sampler.temperature;
    const replayQs = replay?.select(model, tokenizer.padId, T, tc.promptsPerStep, stepRng.split("replay")) ?? [];
    do {
      const t0 = performance.now();
      const fromReplay = genBatches === 0 ? replayQs.map((q) => examplesById.get(q)!) : [];
      const prompts = nextPrompts(trainSet, tc.promptsPerStep - fromReplay.length, state.counters, config.seed);
      const sampling = samplingFor(step, genBatches, step - 1);
      const batch = remote
        ? await remote.groups(task, prompts, sampling, step)
        : await sampleGroupsFor(model, tokenizer, task, prompts, sampling);
      const mixed = fromReplay.length
        ? await sampleGroupsFor(model, tokenizer, task, fromReplay, {
            ...sampling,
            groupSize: tc.groupSize - 1,
            rng: stepRng.split("replay-gen"),
            idPrefix: `${step}.replay`,
          })
        : [];
      batch.push(...mixed);
      time.generate += (performance.now() - t0) / 1000;
      genBatches++;

      // ---- 2. score: the task's verifiable reward terms (a checker that throws gives null, counted), then shaping
      const t1 = performance.now();
      await scoreGroups(task, examplesById, batch);
      opts.transformGroups?.(batch, step);
      // ---- 2a. old log-probs: recomputed under the trainer's weights when configured (§5), else the sampler's
      const fresh = batch.flatMap((g) => g.rollouts);
      old.prepare(fresh, remote?.noLogprobs);
      replay?.collect(batch, step); // fresh rows: correct ones stored, solved questions retired (§6.1-6.2)
      replay?.attach(mixed); // then each replay question's stored answer joins its group
      shapeRewards(batch, algorithm);
      if (alg.loss.afterFirstError === "mask") maskAfterFirstError(batch, tokenizer);
      checkNulls(batch, alg.nulls, task);
      time.reward += (performance.now() - t1) / 1000;
      groups.push(...batch);

      // ---- 2b. reference log-probs (KL in the loss, in the reward, or logged) and partial-KL section masks
      if (reference && !isDiffusionLM(model)) {
        const t2 = performance.now();
        const rollouts = batch.flatMap((g) => g.rollouts);
        referenceLogprobs(reference, rollouts, tokenizer.padId, tc.microBatchSize, config.sampler.temperature);
        time.refLogprobs += (performance.now() - t2) / 1000;
        klMasks = sectionMasks(
          groups.flatMap((g) => g.rollouts),
          tokenizer,
          algorithm.kl.sections,
        );
      }

      // ---- 3. advantages over the whole rollout batch (nulls and, per policy, zero-variance groups removed)
      const t3 = performance.now();
      kept = assignAdvantages(groups, algorithm, state.beta, tc.promptsPerStep, klMasks?.masks);
      time.advantage += (performance.now() - t3) / 1000;
      const rewards = groups.map((g) => g.rollouts.map((r) => r.reward));
      decision = algorithm.nextGeneration(rewards, tc.promptsPerStep, genBatches);
    } while (decision === "generateMore");
    Object.assign(m, rewardMetrics(replay ? replay.freshOnly(groups) : groups, task), kept!.metrics, klMasks?.metrics);
    if (alg.zeroStd.policy === "resample") {
      m["dynamic/genBatches"] = genBatches;
      m["dynamic/keptGroupsFrac"] = kept!.informativeGroups / Math.max(1, groups.length);
      m["dynamic/exhausted"] = decision === "train" ? 0 : 1;
    }
    const trainBatch = kept!.rollouts;
    // Asynchronous generation (maxStaleness 1): the next step's batch decodes on the server while this step trains.
    if (remote && generateAhead && step < lastStep) {
      const next = nextPrompts(trainSet, tc.promptsPerStep, { ...state.counters }, config.seed); // a peek
      remote.prefetch(task, next, samplingFor(step + 1, 0, step - 1), step + 1);
    }
    const correction = old.correction(trainBatch); // w_IS of a recomputed lp_old (§5)
    time.oldLogprobs = old.seconds;

    // ---- 4. loss and optimizer step(s): μ passes × M mini-batches, micro-batched with gradient accumulation
    const lr = lrAt(tc, step);
    m["lr"] = lr;
    if (trainBatch.length > 0) {
      const upd = (isDiffusionLM(model) ? updateDiffusionPolicy : updatePolicy)({
        model,
        optimizer,
        params,
        rollouts: trainBatch,
        algorithm,
        train: tc,
        temperature: config.sampler.temperature,
        beta: state.beta,
        lr,
        rng: stepRng.split("shuffle"),
        padId: tokenizer.padId,
        ...(klMasks ? { klMasks: klMasks.masks } : {}),
        ...(replay ? { replayed: replay.replayed } : {}),
        ...(correction.weights ? { isWeights: correction.weights } : {}),
        warn,
        ...{ reference, genLength: maxNewTokens, seed: config.seed }, // read by the diffusion update only
      });
      Object.assign(m, upd, correction.metrics);
    } else m["step/skipped"] = 1;
    if (remote) {
      time.weightSync = await remote.pushWeights(model, step); // after the batch in flight, if any
      Object.assign(m, remote.takeMetrics());
    }

    // ---- 5. β for the next step: the algorithm's controller reads the KL of this step's rollouts (fixed: unchanged)
    if (reference) m["kl/beta"] = state.beta;
    const observedKl = algorithm.observedKl(trainBatch.map((r) => numbersOf(r, klMasks?.masks)));
    state.beta = algorithm.nextBeta(state.beta, observedKl, trainBatch.length);

    // ---- 6. log: per-step metrics, sample groups, cumulative counters, timings
    const trainedTokens = trainBatch.reduce((s, r) => s + r.promptIds.length + r.completionIds.length, 0);
    state.counters.tokens = (state.counters.tokens ?? 0) + trainedTokens;
    state.counters.samples = (state.counters.samples ?? 0) + groups.reduce((s, g) => s + g.rollouts.length, 0);
    m["perf/tokens"] = state.counters.tokens;
    m["perf/samples"] = state.counters.samples;
    const genTokens = groups.reduce((s, g) => s + g.rollouts.reduce((t, r) => t + r.completionIds.length, 0), 0);
    m["perf/genTokensPerSec"] = genTokens / Math.max(1e-9, time.generate);
    for (const [k, v] of Object.entries(time)) m[`time/${k}`] = v;
    if (replay) {
      Object.assign(m, replay.endStep(step, tc.promptsPerStep)); // delayed start reads this step's fresh pass rate
      state.replay = replay.state();
    }
    if (config.log.sampleGroups > 0) {
      run.logSamples({ step, groups: sampleRecords(groups.slice(0, config.log.sampleGroups), tokenizer) });
    }
    state.step = step;
    state.rng = stepRng.state();

    // ---- 7. evaluate on the held-out split (keep-best), checkpoint
    const evalNow = (config.eval.every > 0 && step % config.eval.every === 0) || step === tc.steps;
    if (evalNow) {
      lastEval = await runEval(step);
      m["time/eval"] = lastEval["time/eval"]!;
    }
    // The checkpoint is written before the step's metrics line (so that line can carry time/checkpoint) and holds a
    // copy of the metrics, which resume appends if a crash fell between the two.
    const ckptNow = (config.checkpoint.every > 0 && step % config.checkpoint.every === 0) || step === lastStep;
    let ckptDir: string | null = null;
    if (ckptNow) {
      const t4 = performance.now();
      const saved = { model, tokenizer, optimizerState: optimizer.state(), state: { ...state, stepMetrics: m } };
      ckptDir = saveCheckpoint(run.checkpointsDir, `step-${step}`, saved);
      pruneCheckpoints(run.checkpointsDir, config.checkpoint.keepLast);
      m["time/checkpoint"] = (performance.now() - t4) / 1000;
    }
    m["time/step"] = (performance.now() - tStep) / 1000;
    emit(reporters, "onStep", step, m);
    if (ckptDir) emit(reporters, "onCheckpoint", step, ckptDir);
  }
  await remote?.close();
  emit(reporters, "onEnd", { step: state.step, best: state.best });
  return { runDir: run.root, step: state.step, startEval, finalEval: lastEval, best: state.best };
}

/** Where the start model (after any SFT warm start) is saved; the default reference for KL. */
export function startModelDir(run: RunDir): string {
  return join(run.checkpointsDir, "start");
}

/**
 * The next `count` training prompts: the train split in an order shuffled once per epoch from (seed, epoch),
 * read from `counters.dataCursor`, which advances (and is checkpointed).
 */
function nextPrompts(
  trainSet: readonly Example[],
  count: number,
  counters: Record<string, number>,
  seed: number,
): Example[] {
  const n = trainSet.length;
  const out: Example[] = [];
  for (let i = 0; i < count; i++) {
    const pos = counters.dataCursor ?? 0;
    const epoch = Math.floor(pos / n);
    const order = epochOrder(n, seed, epoch);
    out.push(trainSet[order[pos % n]!]!);
    counters.dataCursor = pos + 1;
  }
  return out;
}

const orderCache = new Map<string, number[]>();
function epochOrder(n: number, seed: number, epoch: number): number[] {
  const key = `${n}/${seed}/${epoch}`;
  let order = orderCache.get(key);
  if (!order) {
    order = new Rng(seed)
      .split("data")
      .split(epoch)
      .shuffle(Array.from({ length: n }, (_, i) => i));
    if (orderCache.size > 8) orderCache.clear();
    orderCache.set(key, order);
  }
  return order;
}

/** A resumed run must use the recipe it was started with (train.steps may grow); otherwise a ConfigError. */
function assertSameRecipe(run: RunDir, config: TrainConfig): void {
  run.readConfig(); // an unreadable config.json keeps its own error
  if (!run.sameRecipe(config)) {
    throw new ConfigError(
      `run folder ${run.root} was started with a different recipe; resume it with the same recipe, ` +
        "or start over (--no-resume --overwrite) or use another name",
    );
  }
}
