/**
 * A masked-diffusion language model (LLaDA, arXiv 2502.09992 §2.1): the decoder's blocks (./transformer.ts) with
 * bidirectional attention, plus one extra vocabulary row, the mask token [M]. The network predicts, at every masked
 * position, the clean token; generation unmasks iteratively (src/sampling/diffusion.ts), training uses the LLaDA
 * objective (./diffusion-objective.ts).
 *
 * Departures from LLaDA: the mask token is not a tokenizer entry but the id just past the tokenizer's vocabulary
 * (`maskId = tokenizer.vocabSize`, so vocabSize = tokenizer.vocabSize + 1): our tokenizers never produce it and
 * `decode` never sees it, and the char tokenizer's fixed vocabulary stays as it is. The weights, LoRA targets and
 * checkpoint files are exactly those of a Llama- or GPT-shaped decoder of that vocabulary; `config.json` records the
 * kind (`rlvr_model_kind: "diffusion"`) and `rlvr_mask_token_id`, which ./checkpoint.ts reads back. There is no KV
 * cache: with bidirectional attention every step re-reads the whole sequence (as LLaDA's own sampler does).
 */
import { ConfigError, ShapeError, type Rng } from "../util/index.js";
import type { Tensor } from "../engine/index.js";
import { parseTransformerConfig, type TransformerConfig, type TransformerConfigInput } from "./config.js";
import { getModelSpec } from "./registry.js";
import { CharTokenizer, type Tokenizer } from "./tokenizer.js";
import { Transformer, type ForwardOptions } from "./transformer.js";
import { VISION_KIND, VisionLanguageModel, visionLMFromHfFields } from "./vision-lm.js";

/** `config.json` value of `rlvr_model_kind` for this model. */
export const DIFFUSION_KIND = "diffusion";

/** What kind of language model a policy is: next-token (causal) or masked diffusion. */
export type ModelKind = "autoregressive" | "diffusion";

/** The bidirectional masked-diffusion LM: a Transformer whose attention sees every position, with a mask token. */
export class DiffusionLM extends Transformer {
  /** Id of the mask token [M] (the last row of the embedding). */
  readonly maskId: number;
  readonly kind = DIFFUSION_KIND;

  /** Random initial weights (as the Transformer's); `maskId` defaults to the last id of the vocabulary. */
  constructor(config: TransformerConfig, rng: Rng, maskId = config.vocabSize - 1) {
    super(config, rng);
    if (!(Number.isInteger(maskId) && maskId >= 0 && maskId < config.vocabSize)) {
      throw new ConfigError(`DiffusionLM: mask id ${maskId} is outside the vocabulary [0, ${config.vocabSize})`);
    }
    this.maskId = maskId;
    for (const layer of this.layers) layer.selfAttn.causal = false;
  }

  /** ids (B*T) → logits (B, T, V) with bidirectional attention; `mask` hides padding. No KV cache. */
  override forward(ids: Int32Array, batch: number, seqLen: number, opts: ForwardOptions = {}): Tensor {
    if (opts.cache) throw new ShapeError("DiffusionLM.forward: a masked-diffusion LM has no KV cache");
    return super.forward(ids, batch, seqLen, opts);
  }
}

/** True when `model` is a masked-diffusion LM. */
export function isDiffusionLM(model: Transformer): model is DiffusionLM {
  return model instanceof DiffusionLM;
}

/** The kind of a model (for config checks and messages). */
export function modelKindOf(model: Transformer): ModelKind {
  return isDiffusionLM(model) ? "diffusion" : "autoregressive";
}

/** Extra `config.json` fields recording the model kind (empty for an autoregressive model, whose file is unchanged). */
export function modelKindFields(model: Transformer): Record<string, unknown> {
  if (model instanceof VisionLanguageModel) return model.kindFields();
  if (!isDiffusionLM(model)) return {};
  return { rlvr_model_kind: DIFFUSION_KIND, rlvr_mask_token_id: model.maskId, architectures: ["RlvrDiffusionLM"] };
}

/** The model a checkpoint's `config.json` describes: a DiffusionLM when it says so, else the decoder. */
export function modelFromHfFields(hf: Record<string, unknown>, config: TransformerConfig, rng: Rng): Transformer {
  const kind = hf.rlvr_model_kind;
  if (kind === undefined) return new Transformer(config, rng);
  if (kind === VISION_KIND) return visionLMFromHfFields(hf, config, rng);
  if (kind !== DIFFUSION_KIND)
    throw new ConfigError(`config.json: rlvr_model_kind "${String(kind)}" is not known; expected "${DIFFUSION_KIND}"`);
  const maskId = hf.rlvr_mask_token_id;
  if (typeof maskId !== "number") throw new ConfigError("config.json: a diffusion model needs rlvr_mask_token_id");
  return new DiffusionLM(config, rng, maskId);
}

/** A fresh DiffusionLM for a tokenizer: vocabSize = tokenizer.vocabSize + 1, the mask token being the extra id. */
export function newDiffusionLM(
  config: Omit<TransformerConfigInput, "vocabSize">,
  tokenizer: Tokenizer,
  rng: Rng,
): DiffusionLM {
  const full = parseTransformerConfig({ ...config, vocabSize: tokenizer.vocabSize + 1 });
  return new DiffusionLM(full, rng, tokenizer.vocabSize);
}

/** A freshly initialised DiffusionLM of a registered model shape (e.g. "micro-char") with the char tokenizer. */
export function createDiffusionModel(
  name: string,
  rng: Rng,
  overrides: Partial<Omit<TransformerConfigInput, "vocabSize">> = {},
): { model: DiffusionLM; tokenizer: Tokenizer } {
  const tokenizer = new CharTokenizer();
  return { model: newDiffusionLM({ ...getModelSpec(name).config, ...overrides }, tokenizer, rng), tokenizer };
}
