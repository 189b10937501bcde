/**
 * Training a masked-diffusion policy (src/models/diffusion-lm.ts), the parts of the loop that differ from a decoder's:
 * - sampling: `sampleGroupsFor` decodes a DiffusionLM's groups by iterative unmasking (src/sampling/diffusion.ts)
 *   into the same Rollout records (a decoder's go to the episode loop). The answer region is the token budget
 *   (genLength = maxCompletionTokens), decoded by default in one block, one token per step, low-confidence
 *   remasking (`sampler.diffusion` sets steps, blockLength and remasking), at the run's temperature. There are no exact log-probs, so `samplerLogprobs` are 0 and never read.
 * - the update: `updateDiffusionPolicy` runs μ inner iterations, one optimizer step each, with the iteration's mask
 *   seed; the loss is wd1's or diffu-GRPO's (src/algorithms/diffusion-loss.ts) on the d1 one-pass estimate, whose
 *   forward runs here. Micro-batches hold whole groups, and the normalisers (Q groups, B sequences, N_tok tokens)
 *   are the optimizer batch's, so the split does not change the gradient (§3.1). diffu-GRPO's old estimates (μ > 1)
 *   and the reference's are computed before the first update, one per iteration's mask, as d1 does.
 * - SFT: the LLaDA objective on completion tokens, reached through the SFT entry point (./sft.ts calls
 *   `diffusionSftLoss` for a DiffusionLM).
 *
 * Not done for diffusion policies: stop strings (the answer ends at eos, which SFT teaches), entropy metrics, the
 * sampler/trainer mismatch check (there is no sampler log-prob), multi-turn episodes, mini-batches (M > 1).
 *
 * SFT departs from the decoder's SFT in two ways, both LLaDA's (arXiv 2502.09992 §2.3, app. B.1): tokens are not
 * shifted (position j predicts its own masked token, with the whole sequence visible), and a shorter example is padded
 * with eos, which is masked and trained like any answer token, so the model learns to fill an answer region of fixed
 * length with eos after its answer (the sampler decodes `genLength` positions and cuts at the first eos).
 */
import { ConfigError, type Rng } from "../util/index.js";
import { add, backward, clipGradNorm, mul, noGrad, sum, tensor, tidy, type Tensor } from "../engine/index.js";
import {
  isDiffusionLM,
  lladaLoss,
  tokenLogprobs,
  type DiffusionLM,
  type MaskedBatch,
  type Tokenizer,
  type Transformer,
} from "../models/index.js";
import { sampleDiffusion, type DiffusionSample } from "../sampling/diffusion.js";
import { promptIds, sampleGroups, type GroupSamplingOptions } from "../rollout/groups.js";
import type { Rollout, RolloutGroup } from "../rollout/types.js";
import type { Example, Task } from "../tasks/types.js";
import {
  buildDiffusionLoss,
  completionRows,
  estimatorBatch,
  type DiffusionGroupInput,
  type DiffusionLoss,
} from "../algorithms/index.js";
import type { SftBatch } from "./sft.js";
import type { UpdateArgs } from "./policy-update.js";

/**
 * The unshifted batch of an SFT batch: row b is the full sequence [bos] + prompt + completion + eos, then eos up to
 * the batch's longest row; completion tokens and the eos padding may be masked, prompt tokens may not.
 */
export function maskedBatchOfSft(b: SftBatch): MaskedBatch {
  const T = b.seqLen + 1;
  const ids = new Int32Array(b.batch * T);
  const maskable = new Uint8Array(b.batch * T);
  for (let r = 0; r < b.batch; r++) {
    let last = -1; // last scored input position: it predicts the example's final token (eos)
    for (let t = 0; t < b.seqLen; t++) if (b.targets[r * b.seqLen + t] !== -100) last = t;
    if (last < 0) throw new RangeError(`maskedBatchOfSft: row ${r} has no completion token`);
    const eos = b.targets[r * b.seqLen + last]!;
    ids[r * T] = b.ids[r * b.seqLen]!;
    for (let t = 0; t < b.seqLen; t++) {
      const target = b.targets[r * b.seqLen + t]!;
      const k = r * T + t + 1;
      if (t > last) {
        ids[k] = eos;
        maskable[k] = 1;
      } else if (target !== -100) {
        ids[k] = target;
        maskable[k] = 1;
      } else ids[k] = b.ids[r * b.seqLen + t + 1]!;
    }
  }
  return { ids, batch: b.batch, seqLen: T, maskable };
}

/** The LLaDA SFT loss of an SFT batch (one mask drawn from `rng`), with the graph, for backward. */
export function diffusionSftLoss(model: DiffusionLM, b: SftBatch, rng: Rng): Tensor {
  return lladaLoss(model, maskedBatchOfSft(b), rng);
}

/** A step's groups: decoded by iterative unmasking for a DiffusionLM, by the episode loop for a decoder. */
export async function sampleGroupsFor(
  model: Transformer,
  tokenizer: Tokenizer,
  task: Pick<Task, "name" | "environment">,
  examples: readonly Example[],
  opts: GroupSamplingOptions,
): Promise<RolloutGroup[]> {
  if (!isDiffusionLM(model)) return sampleGroups(model, tokenizer, task, examples, opts);
  if (task.environment) throw new ConfigError(`task ${task.name}: multi-turn episodes need an autoregressive model`);
  const G = opts.groupSize;
  const prompts = examples.map((e) => promptIds(tokenizer, e.prompt));
  const rows = prompts.flatMap((p) => Array.from({ length: G }, () => p));
  const maxRows = opts.maxRows ?? rows.length;
  const out: DiffusionSample[] = [];
  for (let at = 0; at < rows.length; at += maxRows) {
    const chunk = rows.slice(at, at + maxRows);
    const rng = opts.rng.split(at);
    out.push(
      ...sampleDiffusion(model, tokenizer, chunk, {
        ...opts.diffusion,
        genLength: opts.maxNewTokens,
        temperature: opts.temperature,
        rng,
      }),
    );
  }
  return examples.map((ex, q) => {
    const groupId = `${opts.idPrefix}/${q}`;
    const rollouts: Rollout[] = out.slice(q * G, (q + 1) * G).map((s, i) => ({
      id: `${groupId}/${i}`,
      task: task.name,
      exampleId: ex.id,
      groupId,
      promptIds: prompts[q]!,
      completionIds: s.tokens,
      samplerLogprobs: s.tokens.map(() => 0), // no exact log-probs: the estimator is computed in the update
      lossMask: s.tokens.map(() => 1), // m = 1 up to and including the first eos (the tokens end there)
      unmasking: { generated: s.generated, unmaskedAt: s.unmaskedAt, steps: s.steps },
      text: s.text,
      finishReason: s.finishReason,
      reward: null,
      terms: {},
      advantage: 0,
      policyVersion: opts.policyVersion,
    }));
    return { id: groupId, exampleId: ex.id, prompt: ex.prompt, rollouts };
  });
}

/** What `updateDiffusionPolicy` needs besides `updatePolicy`'s arguments. */
export interface DiffusionUpdateArgs extends UpdateArgs {
  /** The frozen reference (diffu-GRPO with β > 0). */
  reference?: Transformer | null;
  /** L_gen: the answer region the sampler decoded (maxCompletionTokens). */
  genLength: number;
  /** The run seed (mask seed when `randomMasking` is false). */
  seed: number;
}

/**
 * The per-token estimates lp(i,t) of `rollouts` under mask `seed`: the (B, T) grid tensor and completion rows. The
 * trajectory estimate adds its K passes' grids; each completion token is scored in exactly one of them.
 */
export function estimate(
  model: Transformer,
  rollouts: readonly Rollout[],
  loss: DiffusionLoss,
  a: Pick<DiffusionUpdateArgs, "genLength" | "padId">,
  seed: number,
): { logp: Tensor; rows: number[][]; B: number; T: number; start: number } {
  const maskId = (model as DiffusionLM).maskId;
  const K = loss.trajectoryPasses;
  const passes = K === null ? [undefined] : Array.from({ length: K }, (_, index) => ({ index, of: K }));
  let logp: Tensor | null = null;
  let batch: ReturnType<typeof estimatorBatch> | null = null;
  for (const pass of passes) {
    batch = estimatorBatch(rollouts, {
      genLength: a.genLength,
      maskId,
      padId: a.padId,
      pMaskPrompt: loss.pMaskPrompt,
      seed,
      ...(pass ? { pass } : {}),
    });
    const logits = model.forward(batch.ids, batch.B, batch.T, { mask: batch.attn }); // (B, T, V)
    const passLogp = tokenLogprobs(logits, batch.targets); // (B, T), 0 off the pass's targets
    logp = logp === null ? passLogp : add(logp, passLogp);
  }
  const rows = completionRows(
    logp!.data,
    batch!,
    rollouts.map((r) => r.completionIds.length),
  );
  return { logp: logp!, rows, B: batch!.B, T: batch!.T, start: batch!.start };
}

/** μ optimizer steps of wd1 or diffu-GRPO over the step's groups (see the file comment); returns the step metrics. */
export function updateDiffusionPolicy(a: DiffusionUpdateArgs): Record<string, number> {
  const { model, optimizer, params, train: tc } = a;
  if (tc.miniBatches !== 1) throw new ConfigError("train.miniBatches must be 1 with a masked-diffusion policy");
  const loss = buildDiffusionLoss(a.algorithm.config, { maxCompletionTokens: a.genLength });
  const t0 = performance.now();
  const mu = tc.innerIterations;
  const seeds = loss.maskSeeds(a.rng.split("mask"), mu, a.seed);
  const byGroup = new Map<string, Rollout[]>();
  for (const r of a.rollouts) byGroup.set(r.groupId, [...(byGroup.get(r.groupId) ?? []), r]);
  const groups = [...byGroup.values()];
  const perMicro = Math.max(1, Math.floor(tc.microBatchSize / Math.max(...groups.map((g) => g.length))));
  const micros = Array.from({ length: Math.ceil(groups.length / perMicro) }, (_, k) =>
    groups.slice(k * perMicro, (k + 1) * perMicro),
  );
  const norm = {
    groups: groups.length,
    sequences: a.rollouts.length,
    tokens: a.rollouts.reduce((s, r) => s + r.lossMask.reduce((x, y) => x + y, 0), 0),
  };
  // Old and reference estimates under each iteration's mask, before any update (diffu-GRPO only).
  const frozenRows = (m: Transformer) =>
    noGrad(() => seeds.map((seed) => micros.map((mg) => tidy(() => estimate(m, mg.flat(), loss, a, seed).rows))));
  const old = loss.oldLogprobs(mu) ? frozenRows(model) : null;
  if (loss.reference && !a.reference) throw new ConfigError("diffuGrpo with kl.beta > 0 needs the reference model");
  const ref = loss.reference ? frozenRows(a.reference!) : null;
  const sums: Record<string, number> = {};
  const gradNorms: number[] = [];
  for (let it = 0; it < mu; it++) {
    optimizer.zeroGrad();
    micros.forEach((mg, k) => {
      const est = estimate(model, mg.flat(), loss, a, seeds[it]!);
      let at = 0;
      const inputs: DiffusionGroupInput[] = mg.map((g) => {
        const take = <T>(rows: T[]) => rows.slice(at, at + g.length);
        const input = {
          logp: take(est.rows),
          mask: g.map((r) => r.lossMask),
          advantages: g.map((r) => r.advantage),
          ...(old ? { oldLogp: take(old[it]![k]!) } : {}),
          ...(ref ? { refLogp: take(ref[it]![k]!) } : {}),
        };
        at += g.length;
        return input;
      });
      const res = loss.loss(inputs, a.beta, norm);
      const dl = new Float32Array(est.B * est.T);
      res.grad.flat().forEach((row, b) => row.forEach((d, t) => (dl[b * est.T + est.start + t] = d)));
      // The gradient of Σ lp·sg(dL/dlp) is dL/dθ; the pass's activations then go back to the engine's pool.
      backward(sum(mul(est.logp, tensor(dl, [est.B, est.T]))), { releaseIntermediates: true });
      for (const [key, v] of Object.entries(res.metrics)) {
        const w = key.startsWith("loss/") ? 1 : 1 / micros.length; // loss parts add up within a step
        sums[key] = (sums[key] ?? 0) + w * v;
      }
    });
    gradNorms.push(tc.maxGradNorm !== null ? clipGradNorm(params, tc.maxGradNorm) : clipGradNorm(params, Infinity));
    optimizer.step(a.lr);
  }
  const out: Record<string, number> = {};
  for (const [key, v] of Object.entries(sums)) out[key] = v / mu;
  out["grad/norm"] = gradNorms.reduce((x, y) => x + y, 0) / mu;
  out["time/update"] = (performance.now() - t0) / 1000;
  return out;
}
