/**
 * A vision-language policy (docs/vision.md): the decoder (./transformer.ts) plus a vision encoder
 * (./vision-encoder.ts) whose image tokens replace placeholder tokens in the prompt, as Qwen2-VL does
 * (`inputs_embeds.masked_scatter(image_mask, image_embeds)`, arXiv 2409.12191 §2.1).
 *
 * Three ids just past the text tokenizer's vocabulary are the vision tokens: `<|vision_start|>`, `<|vision_end|>`
 * and `<|image_pad|>` (vocabSize = text vocabulary + 3, as ./diffusion-lm.ts adds its mask id). `VisionTokenizer`
 * turns each `<image>` in a prompt into start, tokensPerImage pads, end; the forward pass fills row b's pads, in
 * order, with the encoded rows of `opts.images[b]`. A video is several `<image>` frames with time text between them
 * (`videoPrompt`). The vision ids can never be sampled: their logits get -1e9 (a constant, so log-probs of training
 * and sampling agree). Departures from Qwen2-VL: 1-D positions (no M-RoPE); start/end/pad ids are ours, not Qwen's.
 *
 * Checkpoints are the decoder's format: the encoder's weights sit beside the decoder's (model.visual.*) in
 * model.safetensors, and config.json adds `rlvr_model_kind: "vision-lm"`, `rlvr_vision_config` and the three ids.
 */
import { ConfigError, ShapeError, type Rng } from "../util/index.js";
import type { RgbImage } from "../util/image.js";
import { add, embedding, tensor, where, type Tensor } from "../engine/index.js";
import { parseTransformerConfig, type TransformerConfig, type TransformerConfigInput } from "./config.js";
import type { Tokenizer } from "./tokenizer.js";
import { Transformer, type ForwardOptions } from "./transformer.js";
import { parseVisionConfig, tokensPerImage, type VisionConfig, type VisionConfigInput } from "./vision-config.js";
import { VisionEncoder } from "./vision-encoder.js";

/** `config.json` value of `rlvr_model_kind` for a vision-language model. */
export const VISION_KIND = "vision-lm";
/** Where an image goes in prompt text. */
export const IMAGE_MARKER = "<image>";
/** Logit given to the vision ids so that they are never sampled. */
const NEVER = -1e9;

/** The three vision token ids. */
export interface VisionTokenIds {
  start: number;
  end: number;
  pad: number;
}

/** The decoder with a vision encoder; see the file comment. */
export class VisionLanguageModel extends Transformer {
  readonly kind = VISION_KIND;
  readonly visionIds: VisionTokenIds;
  visual: VisionEncoder;
  private readonly _neverBias: Tensor; // (V,): NEVER at the vision ids, 0 elsewhere

  constructor(config: TransformerConfig, vision: VisionConfig, rng: Rng, ids?: VisionTokenIds) {
    super(config, rng);
    const v = config.vocabSize;
    this.visionIds = ids ?? { start: v - 3, end: v - 2, pad: v - 1 };
    for (const [name, id] of Object.entries(this.visionIds))
      if (!(Number.isInteger(id) && id >= 0 && id < v))
        throw new ConfigError(`VisionLanguageModel: ${name} id ${id} is outside the vocabulary [0, ${v})`);
    this.visual = new VisionEncoder(vision, config.dModel, rng.split("visual"));
    const bias = new Float32Array(v);
    for (const id of Object.values(this.visionIds)) bias[id] = NEVER;
    this._neverBias = tensor(bias, [v]);
  }

  /** ids (B*T) → logits (B, T, V); row b's image pads take the tokens of `opts.images[b]`. */
  override forward(ids: Int32Array, batch: number, seqLen: number, opts: ForwardOptions = {}): Tensor {
    return add(super.forward(ids, batch, seqLen, opts), this._neverBias); // (B, T, V)
  }

  /** Token embeddings with each image pad replaced by its image token (masked scatter as a gather and a select). */
  protected override embedInputs(ids: Int32Array, batch: number, seqLen: number, opts: ForwardOptions): Tensor {
    const x = this.embedTokens.forward(ids, [batch, seqLen]); // (B, T, D)
    const perImage = this.visual.tokensPerImage;
    const images: RgbImage[] = [];
    const source = new Int32Array(batch * seqLen); // feature row feeding each slot (0 where not a pad)
    const isPad = new Float32Array(batch * seqLen);
    if (opts.images && opts.images.length !== batch)
      throw new ShapeError(`VisionLanguageModel: images for ${opts.images.length} rows, batch is ${batch}`);
    for (let b = 0; b < batch; b++) {
      const rowImages = opts.images?.[b] ?? [];
      let pads = 0;
      for (let t = 0; t < seqLen; t++) {
        if (ids[b * seqLen + t] !== this.visionIds.pad) continue;
        source[b * seqLen + t] = images.length * perImage + pads++;
        isPad[b * seqLen + t] = 1;
      }
      if (pads !== rowImages.length * perImage)
        throw new ShapeError(
          `VisionLanguageModel: row ${b} has ${pads} image pad tokens but ${rowImages.length} image(s) of ` +
            `${perImage} tokens; write one ${IMAGE_MARKER} per image in the prompt`,
        );
      images.push(...rowImages);
    }
    if (images.length === 0) return x;
    const features = this.visual.forward(images); // (nImg · perImage, D)
    const scattered = embedding(features, source, [batch, seqLen]); // (B, T, D)
    return where(tensor(isPad, [batch, seqLen, 1]), scattered, x);
  }

  /** The text tokenizer wrapped so that `<image>` becomes this model's vision tokens. */
  tokenizerFor(base: Tokenizer): VisionTokenizer {
    return new VisionTokenizer(base, this.visionIds, this.visual.tokensPerImage);
  }

  /** Extra `config.json` fields recording the kind, the vision config and the vision ids. */
  kindFields(): Record<string, unknown> {
    return {
      rlvr_model_kind: VISION_KIND,
      rlvr_vision_config: this.visual.config,
      rlvr_vision_token_ids: this.visionIds,
      architectures: ["RlvrVisionLM"],
    };
  }
}

/** A text tokenizer that encodes `<image>` as start, the image pads and end; decoding drops the vision ids. */
export class VisionTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly eosId: number;
  readonly padId: number;
  readonly bosId: number | null;

  constructor(
    readonly base: Tokenizer,
    readonly ids: VisionTokenIds,
    readonly tokensPerImage: number,
  ) {
    this.vocabSize = Math.max(base.vocabSize, ids.start + 1, ids.end + 1, ids.pad + 1);
    this.eosId = base.eosId;
    this.padId = base.padId;
    this.bosId = base.bosId;
  }

  /** Text to ids; each `<image>` becomes start, `tokensPerImage` pads, end. */
  encode(text: string): number[] {
    const parts = text.split(IMAGE_MARKER);
    const image = [this.ids.start, ...new Array<number>(this.tokensPerImage).fill(this.ids.pad), this.ids.end];
    return parts.flatMap((part, i) => [...(i > 0 ? image : []), ...(part ? this.base.encode(part) : [])]);
  }

  /** Ids to text; the vision ids are dropped like other special tokens. */
  decode(ids: readonly number[]): string {
    const vision = new Set([this.ids.start, this.ids.end, this.ids.pad]);
    return this.base.decode(ids.filter((id) => !vision.has(id)));
  }

  /** The base tokenizer's description (the vision ids live in config.json). */
  toJSON(): unknown {
    return this.base.toJSON();
  }
}

/** Number of `<image>` markers in a prompt. */
export function countImageMarkers(text: string): number {
  return text.split(IMAGE_MARKER).length - 1;
}

/** Prompt text of a video: one `<image>` per frame, each after its time ("t=0.5s"), one frame a line. */
export function videoPrompt(times: readonly number[]): string {
  return times.map((t) => `t=${t.toFixed(1)}s ${IMAGE_MARKER}\n`).join("");
}

/** A fresh vision-language model for a text tokenizer: vocabSize = tokenizer.vocabSize + 3 (the vision ids). */
export function newVisionLM(
  decoder: Omit<TransformerConfigInput, "vocabSize">,
  vision: VisionConfigInput,
  tokenizer: Tokenizer,
  rng: Rng,
): { model: VisionLanguageModel; tokenizer: VisionTokenizer } {
  const config = parseTransformerConfig({ ...decoder, vocabSize: tokenizer.vocabSize + 3 });
  const model = new VisionLanguageModel(config, parseVisionConfig(vision), rng);
  return { model, tokenizer: model.tokenizerFor(tokenizer) };
}

/** The VisionLanguageModel a checkpoint's config.json describes (`rlvr_model_kind: "vision-lm"`). */
export function visionLMFromHfFields(
  hf: Record<string, unknown>,
  config: TransformerConfig,
  rng: Rng,
): VisionLanguageModel {
  const ids = hf.rlvr_vision_token_ids as Partial<VisionTokenIds> | undefined;
  if (!ids || typeof ids !== "object" || ![ids.start, ids.end, ids.pad].every((v) => typeof v === "number"))
    throw new ConfigError("config.json: a vision-lm needs rlvr_vision_token_ids {start, end, pad}");
  const vision = parseVisionConfig(hf.rlvr_vision_config, "config.json rlvr_vision_config");
  return new VisionLanguageModel(config, vision, rng, ids as VisionTokenIds);
}

/** Image tokens per image of a vision config (re-exported for prompt builders). */
export { tokensPerImage };

/** A loaded model with its tokenizer wrapped when the model is a vision-language one (`<image>` → vision tokens). */
export function withVisionTokenizer<T extends { model: Transformer; tokenizer: Tokenizer }>(loaded: T): T {
  const { model, tokenizer } = loaded;
  if (!(model instanceof VisionLanguageModel) || tokenizer instanceof VisionTokenizer) return loaded;
  return { ...loaded, tokenizer: model.tokenizerFor(tokenizer) };
}
