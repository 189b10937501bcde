/**
 * Supervised fine-tuning on (prompt, completion) text pairs: next-token cross-entropy on completion tokens only
 * (prompt and padding positions carry the ignore index), AdamW with decoupled weight decay, global-norm gradient
 * clipping, and a warm-up + cosine learning-rate schedule. Used by the SFT warm start and `npm run bench:sft`.
 *
 * Each sequence is [bos] + prompt + completion + [eos] (bos only when the tokenizer has one), right-padded within
 * a batch. The loss is the mean over completion tokens of the batch (eos included, so the model learns to stop).
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
import { diffusionSftLoss } from "./diffusion-step.js";

/** One supervised example. */
export interface SftExample {
  prompt: string;
  completion: string;
  /** Images of the prompt's `<image>` placeholders (a vision-language policy). */
  images?: RgbImage[];
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
  /** Completion tokens that carried loss. */
  tokens: number;
  /** Input positions processed, padding included (B * T). */
  positions: number;
}

/** A right-padded batch: ids (B*T), next-token targets (B*T) with -100 where no loss is taken. */
export interface SftBatch {
  ids: Int32Array;
  targets: Int32Array;
  batch: number;
  seqLen: number;
  /** Number of targets that are not ignored. */
  tokens: number;
  /** Per row, the images of its placeholders (absent for text). */
  images?: (RgbImage[] | undefined)[];
}

/** An example as token ids: the full sequence and where the completion starts. */
export interface EncodedExample {
  ids: number[];
  /** Index in `ids` of the first completion token. */
  completionStart: number;
  images?: RgbImage[];
}

const IGNORE = -100;

/** Tokenizes one example as [bos] + prompt + completion + eos. */
export function encodeExample(tokenizer: Tokenizer, ex: SftExample): EncodedExample {
  const head = [...(tokenizer.bosId !== null ? [tokenizer.bosId] : []), ...tokenizer.encode(ex.prompt)];
  const ids = [...head, ...tokenizer.encode(ex.completion), tokenizer.eosId];
  return { ids, completionStart: head.length, ...(ex.images ? { images: ex.images } : {}) };
}

/** Packs encoded examples into one right-padded batch with loss only on completion tokens. */
export function makeSftBatch(examples: readonly EncodedExample[], padId: number): SftBatch {
  const batch = examples.length;
  const seqLen = Math.max(...examples.map((e) => e.ids.length)) - 1; // inputs drop the last token
  const ids = new Int32Array(batch * seqLen).fill(padId);
  const targets = new Int32Array(batch * seqLen).fill(IGNORE);
  let tokens = 0;
  examples.forEach((e, b) => {
    for (let t = 0; t < e.ids.length - 1; t++) {
      ids[b * seqLen + t] = e.ids[t]!;
      if (t + 1 >= e.completionStart) {
        targets[b * seqLen + t] = e.ids[t + 1]!; // position t predicts token t + 1
        tokens++;
      }
    }
  });
  const images = examples.some((e) => e.images) ? { images: examples.map((e) => e.images) } : {};
  return { ids, targets, batch, seqLen, tokens, ...images };
}

/** Mean completion-token cross-entropy of `model` on a batch (with the graph, for backward). */
export function sftLoss(model: Transformer, b: SftBatch): Tensor {
  const logits = model.forward(b.ids, b.batch, b.seqLen, b.images ? { images: b.images } : {}); // (B, T, V)
  return crossEntropy(reshape(logits, [b.batch * b.seqLen, model.config.vocabSize]), b.targets, {
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
  // A masked-diffusion LM trains by the LLaDA objective on the same batch (./diffusion-step.ts).
  const loss = isDiffusionLM(model) && maskRng ? diffusionSftLoss(model, b, maskRng) : sftLoss(model, b);
  backward(loss);
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
