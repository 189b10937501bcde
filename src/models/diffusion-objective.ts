/**
 * The LLaDA training objective of a masked-diffusion LM (arXiv 2502.09992 eq. 3 for pretraining, eq. 5 for SFT):
 * per sequence draw a masking ratio t ~ U(ε, 1), replace each maskable token by [M] independently with probability t,
 * and take the cross-entropy of the clean token at every masked position, weighted 1/t.
 *
 *   L = (1/B) Σ_b (1/L_b) Σ_{j masked in row b} −log p_θ(x_{b,j} | x̃_b) / t_b
 *
 * Normaliser: L_b is the number of maskable tokens of row b (the answer length in SFT, the sequence length in
 * pretraining), as LLaDA's SFT code divides each token's loss by its row's answer length and averages over rows;
 * with equal-length fully maskable rows this is LLaDA's pretraining normaliser B·L. This is an upper bound on the
 * negative log-likelihood (eq. 3) in expectation over t and the mask. ε = 1e-3 as in LLaDA's guidelines (t is never
 * 0, so 1/t stays finite). A row can draw no mask at all; it then adds nothing (LLaDA does the same).
 */
import { ShapeError, type Rng } from "../util/index.js";
import { crossEntropy, mul, reshape, sum, tensor, type Tensor } from "../engine/index.js";
import type { DiffusionLM } from "./diffusion-lm.js";

/** ε of t ~ U(ε, 1) (LLaDA's `forward_process`). */
export const LLADA_EPS = 1e-3;

/** A batch of sequences for the LLaDA objective. */
export interface MaskedBatch {
  /** Clean token ids (B*T), row-major. */
  ids: Int32Array;
  batch: number;
  seqLen: number;
  /** (B*T): 1 where a token may be masked and scored (completion tokens in SFT, every real token in pretraining). */
  maskable: Uint8Array;
  /** (B*T) attention mask, 1 = real token; default every slot is real. */
  attn?: Float32Array;
}

/** One draw of the forward process: the noised inputs, the targets and the per-token loss weights. */
export interface MaskDraw {
  /** x̃ (B*T): ids with the drawn positions replaced by the mask id. */
  inputs: Int32Array;
  /** (B*T): the clean id at masked positions, -100 elsewhere. */
  targets: Int32Array;
  /** (B*T): 1/(t_b · L_b · B) at masked positions, 0 elsewhere. */
  weights: Float32Array;
  /** t_b per row. */
  ratios: number[];
}

/** Draws t_b and the mask of every row (`ratios` fixes t_b instead of drawing it; tests use this). */
export function drawMask(b: MaskedBatch, maskId: number, rng: Rng, ratios?: readonly number[]): MaskDraw {
  const { batch: B, seqLen: T, ids, maskable } = b;
  if (ids.length !== B * T || maskable.length !== B * T)
    throw new ShapeError(`drawMask: ids ${ids.length} and maskable ${maskable.length} must both be B*T = ${B * T}`);
  if (ratios && ratios.length !== B) throw new ShapeError(`drawMask: ${ratios.length} ratios for ${B} rows`);
  const inputs = Int32Array.from(ids);
  const targets = new Int32Array(B * T).fill(-100);
  const weights = new Float32Array(B * T);
  const ts: number[] = [];
  for (let r = 0; r < B; r++) {
    const t = ratios ? ratios[r]! : (1 - LLADA_EPS) * rng.random() + LLADA_EPS;
    if (!(t > 0 && t <= 1)) throw new RangeError(`drawMask: masking ratio ${t} of row ${r} must be in (0, 1]`);
    ts.push(t);
    let L = 0;
    for (let j = 0; j < T; j++) L += maskable[r * T + j]!;
    for (let j = 0; j < T; j++) {
      const k = r * T + j;
      if (!maskable[k] || !(rng.random() < t)) continue;
      inputs[k] = maskId;
      targets[k] = ids[k]!;
      weights[k] = 1 / (t * L * B);
    }
  }
  return { inputs, targets, weights, ratios: ts };
}

/** The LLaDA loss of one drawn mask (with the graph, for backward): Σ weights · CE at masked positions. */
export function maskedDiffusionLoss(model: DiffusionLM, b: MaskedBatch, draw: MaskDraw): Tensor {
  const V = model.config.vocabSize;
  const logits = model.forward(draw.inputs, b.batch, b.seqLen, b.attn ? { mask: b.attn } : {}); // (B, T, V)
  const nll = crossEntropy(reshape(logits, [b.batch * b.seqLen, V]), draw.targets, { reduction: "none" }); // (B*T,)
  return sum(mul(nll, tensor(draw.weights, [b.batch * b.seqLen])));
}

/** Draws a mask from `rng` and returns the LLaDA loss (see the file comment). */
export function lladaLoss(model: DiffusionLM, b: MaskedBatch, rng: Rng): Tensor {
  return maskedDiffusionLoss(model, b, drawMask(b, model.maskId, rng));
}
