/**
 * The vision part of `npm run bench:engine` (issue 15): the vision encoder and a full RL step of the
 * vision-language policy at the shape of recipes/visual-rft.yaml, as repetitions that bench/engine.ts times in turns
 * with the peer's (warm-up, then the median of timed repetitions). The PyTorch side is `bench_vision` in
 * bench/peers/engine_peer.py: the encoder is the parity fixture's torch twin (scripts/vision_fixture.py, checked
 * against this encoder to 1e-4 by test/models/vision-parity.test.ts) and the decoder is the peer's own Llama block.
 *
 * - vision.encode.images_per_s: VisionEncoder.forward on a batch of ENCODE_BATCH images (resize, patchify, blocks,
 *   merger), no gradient;
 * - vision.rl_step.images_per_s: one RL step for ROWS rows with one image each, as the trainer runs it: sample
 *   NEW_TOKENS tokens per row with the KV cache (the prefill encodes the images), then one update: a forward over
 *   prompt + completion with the images, the advantage-weighted token log-likelihood of the completion, backward
 *   through decoder and encoder, AdamW. Rows sample every token (no stop strings; a row that draws eos keeps its
 *   slot, as the lock-step decoder does), so both sides do the same work.
 */
import { Optimizer, adamw, crossEntropy, mul, noGrad, reshape, sum, tensor, backward } from "../src/engine/index.js";
import { CharTokenizer } from "../src/models/tokenizer.js";
import { newVisionLM } from "../src/models/vision-lm.js";
import type { TransformerConfigInput } from "../src/models/config.js";
import type { VisionConfigInput } from "../src/models/vision-config.js";
import { sample } from "../src/sampling/sample.js";
import { RgbImage } from "../src/util/image.js";
import { Rng } from "../src/util/index.js";

/** recipes/visual-rft.yaml's policy: a char-level Llama decoder and a Qwen2-VL-style encoder (25 image tokens). */
export const DECODER: Omit<TransformerConfigInput, "vocabSize"> = {
  arch: "llama",
  dModel: 96,
  nLayers: 3,
  nHeads: 4,
  nKvHeads: 2,
  dFf: 384, // 4 · dModel, the recipe's default
  maxSeqLen: 192,
};
export const VISION: VisionConfigInput = {
  imageSize: 40,
  patchSize: 4,
  mergeSize: 2,
  dModel: 64,
  nLayers: 2,
  nHeads: 4,
  dFf: 128,
};
/** Images per encoder call; rows of an RL step (8 prompts x G 8), text tokens after each image, sampled tokens. */
export const ENCODE_BATCH = 64;
export const ROWS = 64;
export const PROMPT_TEXT = 40;
export const NEW_TOKENS = 40;

/** What the peer needs to build the same shapes (configs after defaults, token layout). */
export interface VisionBenchShape {
  decoder: ReturnType<typeof build>["model"]["config"];
  vision: ReturnType<typeof build>["model"]["visual"]["config"];
  ids: { start: number; end: number; pad: number };
  encodeBatch: number;
  rows: number;
  promptText: number;
  newTokens: number;
}

function build() {
  return newVisionLM(DECODER, VISION, new CharTokenizer(), new Rng(3).split("model"));
}

function randomImages(rng: Rng, n: number, size: number): RgbImage[] {
  return Array.from(
    { length: n },
    () =>
      new RgbImage(
        size,
        size,
        new Float32Array(size * size * 3).map(() => rng.random()),
      ),
  );
}

/** The shapes, for the peer. */
export function visionShape(): VisionBenchShape {
  const { model } = build();
  return {
    decoder: model.config,
    vision: model.visual.config,
    ids: model.visionIds,
    encodeBatch: ENCODE_BATCH,
    rows: ROWS,
    promptText: PROMPT_TEXT,
    newTokens: NEW_TOKENS,
  };
}

/** One encoder repetition: a batch of ENCODE_BATCH images (no gradient). */
export function makeEncode(): () => void {
  const { model } = build();
  model.eval();
  const images = randomImages(new Rng(4), ENCODE_BATCH, VISION.imageSize!);
  return () => noGrad(() => void model.visual.forward(images));
}

/**
 * One repetition of a whole RL step for ROWS images (sampling, then one update through decoder and encoder), and the
 * share of the steps' time spent sampling so far.
 */
export function makeRlStep(): { step: () => void; sampleShare: () => number } {
  const { model, tokenizer } = build();
  const rng = new Rng(5);
  const opt = new Optimizer(adamw({ lr: 1e-4, weightDecay: 0 }), model.namedParameters());
  const images = randomImages(rng, ROWS, VISION.imageSize!).map((im) => [im]);
  const text = tokenizer.base.vocabSize;
  const prompts = Array.from({ length: ROWS }, () => [
    ...tokenizer.encode("<image>"),
    ...Array.from({ length: PROMPT_TEXT }, () => 3 + rng.int(text - 3)),
  ]);
  const promptLen = prompts[0]!.length;
  const seq = promptLen + NEW_TOKENS;
  const advantages = Float32Array.from({ length: ROWS }, () => rng.normal());
  let sampleSec = 0,
    totalSec = 0;
  const step = () => {
    const t0 = performance.now();
    model.eval();
    const out = sample(model, tokenizer, prompts, { maxNewTokens: NEW_TOKENS, temperature: 1, rng, images });
    const t1 = performance.now();
    model.train();
    const ids = new Int32Array(ROWS * seq);
    const targets = new Int32Array(ROWS * seq).fill(-100);
    const weights = new Float32Array(ROWS * seq);
    out.forEach((o, b) => {
      const row = [...prompts[b]!, ...o.tokens];
      while (row.length < seq) row.push(tokenizer.padId); // a row that drew eos: its slots stay in the batch
      ids.set(row, b * seq);
      for (let t = promptLen - 1; t < promptLen - 1 + o.tokens.length; t++) {
        targets[b * seq + t] = row[t + 1]!;
        weights[b * seq + t] = advantages[b]! / (ROWS * NEW_TOKENS);
      }
    });
    const logits = model.forward(ids, ROWS, seq, { images }); // (B, T, V)
    const nll = crossEntropy(reshape(logits, [ROWS * seq, model.config.vocabSize]), targets, { reduction: "none" });
    backward(sum(mul(nll, tensor(weights, [ROWS * seq]))));
    opt.step();
    opt.zeroGrad();
    sampleSec += (t1 - t0) / 1000;
    totalSec += (performance.now() - t0) / 1000;
  };
  return { step, sampleShare: () => sampleSec / totalSec };
}
