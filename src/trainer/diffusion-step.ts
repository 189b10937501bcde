/**
 * Training a masked-diffusion policy (src/models/diffusion-lm.ts). SFT: the LLaDA objective on completion tokens,
 * reached through the SFT entry point (./sft.ts calls `diffusionSftLoss` for a DiffusionLM).
 *
 * SFT departs from the decoder's SFT in two ways, both LLaDA's (arXiv 2502.09992 §2.3, app. B.1): tokens are not
 * shifted (position j predicts its own masked token, with the whole sequence visible), and a shorter example is padded
 * with eos, which is masked and trained like any answer token, so the model learns to fill an answer region of fixed
 * length with eos after its answer (the sampler decodes `genLength` positions and cuts at the first eos).
 */
import type { Rng } from "../util/index.js";
import type { Tensor } from "../engine/index.js";
import { lladaLoss, type DiffusionLM, type MaskedBatch } from "../models/index.js";
import type { SftBatch } from "./sft.js";

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
