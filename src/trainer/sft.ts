/**
 * Supervised fine-tuning on (prompt, completion) text pairs: next-token cross-entropy on completion tokens only
 * (prompt and padding positions carry the ignore index), AdamW with decoupled weight decay, global-norm gradient
 * clipping, and a warm-up + cosine learning-rate schedule. Used by the SFT warm start and `npm run bench:sft`.
 *
 * Each sequence is [bos] + prompt + completion + [eos] (bos only when the tokenizer has one), right-padded within
 * a batch. The loss is the mean over the trained completion tokens of the batch (eos included, so the model learns
 * to stop).
 *
 * A multi-turn gold (`SftExample.segments`: model turns and inserted tool/environment text) is tokenized segment by
 * segment, as the episode loop tokenizes an inserted answer on its own (src/rollout/episode.ts), and carries a
 * per-token loss mask: model turns and eos are trained, inserted tokens are context only (mask 0, out of the loss
 * and out of its normaliser), the same mask RL applies to them (docs/multi-turn.md). A masked-diffusion LM does not
 * take segment golds (multi-turn needs an autoregressive model).
 */
import { ConfigError, type Rng } from "../util/index.js";
import type { RgbImage } from "../util/image.js";
import {
  Optimizer,
  adamw,
  clipGradNorm,
  cosineLr,
  crossEntropy,
  reshape,
  type LrSchedule,
  type Tensor,
  backward,
} from "../engine/index.js";
import type { Tokenizer } from "../models/tokenizer.js";
import type { Transformer } from "../models/transformer.js";
import { isDiffusionLM } from "../models/diffusion-lm.js";
import type { Example, GoldSegment } from "../tasks/types.js";
import { diffusionSftLoss } from "./diffusion-step.js";

/** One supervised example. */
export interface SftExample {
  prompt: string;
  completion: string;
  /** Images of the prompt's `<image>` placeholders (a vision-language policy). */
  images?: RgbImage[];
  /**
   * The completion as model turns and inserted text (their texts must join to `completion`): each is tokenized on
   * its own and only model turns are trained. Absent: the whole completion is one trained model turn.
   */
  segments?: readonly GoldSegment[];
}

/** A task example's gold as an SFT example (its segments too, so tool output is masked): what warm starts train on. */
export function sftExampleOf(e: Example): SftExample {
  return {
    prompt: e.prompt,
    completion: e.goldCompletion,
    ...(e.images ? { images: e.images } : {}),
    ...(e.goldSegments ? { segments: e.goldSegments } : {}),
  };
}

/** Options of `trainSft`. */
export interface SftOptions {
  /** Optimizer steps. */
  steps: number;
  /** Examples per step. */
  batchSize: number;
  /** Peak learning rate. */
  lr: number;
  /** Shuffling stream. */
  rng: Rng;
  /** AdamW decoupled weight decay (default 0.01; norms and biases are exempt). */
  weightDecay?: number;
  /** AdamW betas (default [0.9, 0.95]). */
  betas?: [number, number];
  /** Global gradient-norm cap (default 1). */
  clip?: number;
  /** Linear warm-up steps before the cosine decay (default 5% of steps). */
  warmupSteps?: number;
  /** Floor of the cosine decay as a fraction of lr (default 0.1). */
  minLrFrac?: number;
  /** Called after every step. */
  onStep?: (m: SftStepMetrics) => void;
  /** Checked after every step; training ends early when it returns true (e.g. a wall-clock budget). */
  until?: (m: SftStepMetrics) => boolean;
}

/** What one step reports. */
export interface SftStepMetrics {
  /** 1-based step. */
  step: number;
  loss: number;
  lr: number;
  /** Global gradient norm before clipping. */
  gradNorm: number;
  /** Completion tokens that carried loss (inserted tokens excluded). */
  tokens: number;
  /** Input positions processed, padding included (B * T). */
  positions: number;
}

/**
 * A right-padded batch: ids (B*T), next-token targets (B*T; -100 on prompt and padding positions) and the loss
 * mask (B*T; 1 where the target is trained, 0 on prompt, padding and inserted tokens).
 */
export interface SftBatch {
  ids: Int32Array;
  targets: Int32Array;
  lossMask: Uint8Array;
  batch: number;
  seqLen: number;
  /** Number of trained targets (the loss's normaliser). */
  tokens: number;
  /** Per row, the images of its placeholders (absent for text). */
  images?: (RgbImage[] | undefined)[];
}

/** An example as token ids: the full sequence, where the completion starts, and its loss mask. */
export interface EncodedExample {
  ids: number[];
  /** Index in `ids` of the first completion token. */
  completionStart: number;
  /** Per completion token (`ids.slice(completionStart)`): 1 trained, 0 inserted. Absent: all trained. */
  lossMask?: number[];
  images?: RgbImage[];
}

const IGNORE = -100;

/** Tokenizes one example as [bos] + prompt + completion + eos (a segment gold: segment by segment, with its mask). */
export function encodeExample(tokenizer: Tokenizer, ex: SftExample): EncodedExample {
  const head = [...(tokenizer.bosId !== null ? [tokenizer.bosId] : []), ...tokenizer.encode(ex.prompt)];
  const images = ex.images ? { images: ex.images } : {};
  if (!ex.segments) {
    const ids = [...head, ...tokenizer.encode(ex.completion), tokenizer.eosId];
    return { ids, completionStart: head.length, ...images };
  }
  const joined = ex.segments.map((s) => s.text).join("");
  if (joined !== ex.completion)
    throw new ConfigError(
      `sft: an example's segments join to ${JSON.stringify(joined.slice(0, 60))}..., not its completion ` +
        `${JSON.stringify(ex.completion.slice(0, 60))}...; build both from the same turns`,
    );
  const ids = [...head];
  const lossMask: number[] = [];
  for (const s of ex.segments) {
    if (s.kind !== "model" && s.kind !== "inserted")
      throw new ConfigError(`sft: segment kind must be "model" or "inserted", got ${JSON.stringify(s.kind)}`);
    const seg = tokenizer.encode(s.text);
    ids.push(...seg);
    for (let k = 0; k < seg.length; k++) lossMask.push(s.kind === "model" ? 1 : 0);
  }
  ids.push(tokenizer.eosId);
  lossMask.push(1); // the model learns to stop
  return { ids, completionStart: head.length, lossMask, ...images };
}

/** Packs encoded examples into one right-padded batch with loss only on trained completion tokens. */
export function makeSftBatch(examples: readonly EncodedExample[], padId: number): SftBatch {
  const batch = examples.length;
  const seqLen = Math.max(...examples.map((e) => e.ids.length)) - 1; // inputs drop the last token
  const ids = new Int32Array(batch * seqLen).fill(padId);
  const targets = new Int32Array(batch * seqLen).fill(IGNORE);
  const lossMask = new Uint8Array(batch * seqLen);
  let tokens = 0;
  examples.forEach((e, b) => {
    if (e.lossMask && e.lossMask.length !== e.ids.length - e.completionStart)
      throw new RangeError(
        `makeSftBatch: row ${b} has ${e.lossMask.length} mask entries for ${e.ids.length - e.completionStart} completion tokens`,
      );
    for (let t = 0; t < e.ids.length - 1; t++) {
      ids[b * seqLen + t] = e.ids[t]!;
      if (t + 1 >= e.completionStart) {
        targets[b * seqLen + t] = e.ids[t + 1]!; // position t predicts token t + 1
        const m = e.lossMask ? e.lossMask[t + 1 - e.completionStart]! : 1;
        lossMask[b * seqLen + t] = m;
        tokens += m;
      }
    }
  });
  const images = examples.some((e) => e.images) ? { images: examples.map((e) => e.images) } : {};
  return { ids, targets, lossMask, batch, seqLen, tokens, ...images };
}

/** The targets the loss reads: `targets` with -100 wherever the loss mask is 0 (inserted tokens). */
export function trainedTargets(b: SftBatch): Int32Array {
  return b.targets.map((t, i) => (b.lossMask[i] === 1 ? t : IGNORE));
}

/** Mean cross-entropy over the trained tokens of a batch (with the graph, for backward). */
export function sftLoss(model: Transformer, b: SftBatch): Tensor {
  const logits = model.forward(b.ids, b.batch, b.seqLen, b.images ? { images: b.images } : {}); // (B, T, V)
  // The ignore index drops masked rows from both the sum and the count, so the normaliser is `b.tokens`.
  return crossEntropy(reshape(logits, [b.batch * b.seqLen, model.config.vocabSize]), trainedTargets(b), {
    ignoreIndex: IGNORE,
  });
}

/** One optimizer step on a batch: forward, backward, clip, update. Returns the loss and the pre-clip grad norm. */
export function sftStep(
  model: Transformer,
  optimizer: Optimizer,
  b: SftBatch,
  lr: number,
  clip = 1,
  maskRng?: Rng,
): { loss: number; gradNorm: number } {
  optimizer.zeroGrad();
  if (isDiffusionLM(model) && maskRng && b.tokens < b.targets.filter((t) => t !== IGNORE).length)
    throw new ConfigError("sft: a masked-diffusion LM cannot train on segment golds (tool output needs a decoder)");
  // A masked-diffusion LM trains by the LLaDA objective on the same batch (./diffusion-step.ts).
  const loss = isDiffusionLM(model) && maskRng ? diffusionSftLoss(model, b, maskRng) : sftLoss(model, b);
  backward(loss, { releaseIntermediates: true }); // the activations go back to the engine's pool; only the loss is read
  const params = model.trainableParameters();
  const gradNorm = clipGradNorm(params, clip);
  optimizer.step(lr);
  return { loss: loss.item(), gradNorm };
}

/** Trains `model` in place on `examples` for `opts.steps` steps; returns every step's metrics. */
export function trainSft(
  model: Transformer,
  tokenizer: Tokenizer,
  examples: readonly SftExample[],
  opts: SftOptions,
): SftStepMetrics[] {
  if (examples.length === 0) throw new ConfigError("sft: no examples");
  if (!(Number.isInteger(opts.steps) && opts.steps > 0))
    throw new ConfigError(`sft: steps must be a positive integer, got ${opts.steps}`);
  if (!(Number.isInteger(opts.batchSize) && opts.batchSize > 0))
    throw new ConfigError(`sft: batchSize must be a positive integer, got ${opts.batchSize}`);
  const encoded = examples.map((ex, i) => {
    const e = encodeExample(tokenizer, ex);
    if (e.ids.length - 1 > model.config.maxSeqLen) {
      throw new ConfigError(
        `sft: example ${i} has ${e.ids.length} tokens, more than the model's maxSeqLen ${model.config.maxSeqLen}`,
      );
    }
    return e;
  });
  const optimizer = new Optimizer(
    adamw({ lr: opts.lr, betas: opts.betas ?? [0.9, 0.95], weightDecay: opts.weightDecay ?? 0.01 }),
    model.trainableParameters(),
    { decay: (_name, t) => t.shape.length >= 2 }, // no decay on norms and biases
  );
  const warmupSteps = opts.warmupSteps ?? Math.floor(opts.steps * 0.05);
  const schedule: LrSchedule =
    opts.steps > warmupSteps
      ? cosineLr({ lr: opts.lr, warmupSteps, totalSteps: opts.steps, minLr: opts.lr * (opts.minLrFrac ?? 0.1) })
      : () => opts.lr;
  const order = new EpochSampler(encoded.length, opts.rng);
  const maskRng = opts.rng.split("mask"); // a masked-diffusion LM's masks (unused by a decoder)
  const wasTraining = model.training;
  model.train();
  const history: SftStepMetrics[] = [];
  try {
    for (let step = 0; step < opts.steps; step++) {
      const b = makeSftBatch(
        order.next(opts.batchSize).map((i) => encoded[i]!),
        tokenizer.padId,
      );
      const lr = schedule(step);
      const { loss, gradNorm } = sftStep(model, optimizer, b, lr, opts.clip ?? 1, maskRng);
      const m: SftStepMetrics = { step: step + 1, loss, lr, gradNorm, tokens: b.tokens, positions: b.batch * b.seqLen };
      history.push(m);
      opts.onStep?.(m);
      if (opts.until?.(m)) break;
    }
  } finally {
    model.train(wasTraining);
  }
  return history;
}

/** The SFT warm start's entry point (same as `trainSft`). */
export const sft = trainSft;

/** Draws indices without replacement, reshuffling at each epoch. */
class EpochSampler {
  private perm: number[] = [];
  private at = 0;

  constructor(
    private readonly n: number,
    private readonly rng: Rng,
  ) {}

  next(k: number): number[] {
    const out: number[] = [];
    while (out.length < k) {
      if (this.at >= this.perm.length) {
        this.perm = this.rng.shuffle(Array.from({ length: this.n }, (_, i) => i));
        this.at = 0;
      }
      out.push(this.perm[this.at++]!);
    }
    return out;
  }
}
