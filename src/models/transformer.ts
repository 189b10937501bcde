/**
 * Decoder-only transformer covering two shapes (see ./config.ts): GPT-2 (learned positions, LayerNorm, GELU,
 * biases) and Llama/Qwen2 (RoPE, RMSNorm, SwiGLU, grouped-query attention, optional q/k/v biases). Both are
 * pre-norm: x + attn(norm(x)), then x + mlp(norm(x)), then a final norm and the output head (tied to the token
 * embedding or separate).
 *
 * Parameter names are camelCase versions of Hugging Face Llama names (embedTokens ↔ model.embed_tokens,
 * layers.0.selfAttn.qProj ↔ model.layers.0.self_attn.q_proj), so ./checkpoint.ts maps them mechanically.
 * Positions: GPT-2 takes per-row positions from the padding mask (a left-padded row starts at position 0 at its
 * first real token); RoPE uses the slot index, which gives the same attention scores for left or right padding
 * because a common shift of q and k positions cancels in q.k.
 */
import { ShapeError, fmtShape, type Rng } from "../util/index.js";
import type { RgbImage } from "../util/image.js";
import {
  Embedding,
  LayerNorm,
  Linear,
  Module,
  RMSNorm,
  add,
  affine,
  crossEntropy,
  dropout,
  embedding,
  isGradEnabled,
  matmul,
  neg,
  reshape,
  slice,
  type Tensor,
} from "../engine/index.js";
import { Attention, type LayerContext, type LinearLike } from "./attention.js";
import { headDimOf, type TransformerConfig } from "./config.js";
import { KVCache } from "./kv-cache.js";
import { Mlp } from "./mlp.js";

export type { TransformerConfig } from "./config.js";
export { KVCache } from "./kv-cache.js";

/** Options of `Transformer.forward`. */
export interface ForwardOptions {
  /** (B, Tk) with Tk = cache length + seqLen; 1 = real token, 0 = padding (never attended to). */
  mask?: Float32Array;
  /** Incremental decoding: `ids` are the new tokens; their positions continue from `cache.length`. */
  cache?: KVCache;
  /** Compute logits for the last position only: (B, 1, V) (sampling's prefill; saves the head over long prompts). */
  lastOnly?: boolean;
  /** Per row, the images whose tokens fill its image placeholders in order (a VisionLanguageModel: ./vision-lm.ts). */
  images?: readonly (readonly RgbImage[] | null | undefined)[];
}

/** One pre-norm decoder layer. */
export class DecoderLayer extends Module {
  inputLayernorm: LayerNorm | RMSNorm;
  selfAttn: Attention;
  postAttentionLayernorm: LayerNorm | RMSNorm;
  mlp: Mlp;

  constructor(cfg: TransformerConfig, layer: number, rng: Rng) {
    super();
    this.inputLayernorm = makeNorm(cfg);
    this.selfAttn = new Attention(cfg, layer, rng.split("attn"));
    this.postAttentionLayernorm = makeNorm(cfg);
    this.mlp = new Mlp(cfg, rng.split("mlp"));
  }

  /** x (B, T, D) → (B, T, D). */
  forward(x: Tensor, ctx: LayerContext): Tensor {
    const h = add(x, this.selfAttn.forward(this.inputLayernorm.forward(x), ctx));
    return add(h, this.mlp.forward(this.postAttentionLayernorm.forward(h), ctx.rng));
  }
}

/** The decoder-only language model. */
export class Transformer extends Module {
  readonly config: TransformerConfig;
  embedTokens: Embedding;
  embedPositions: Embedding | null;
  layers: DecoderLayer[];
  norm: LayerNorm | RMSNorm;
  lmHead: LinearLike | null;
  private readonly _rng: Rng;

  /** Random initial weights from `rng` (GPT-2 init: normal 0.02, residual projections scaled by 1/sqrt(2L)). */
  constructor(config: TransformerConfig, rng: Rng) {
    super();
    this.config = config;
    this._rng = rng.split("dropout");
    this.embedTokens = new Embedding(config.vocabSize, config.dModel, { rng: rng.split("embed"), std: 0.02 });
    this.embedPositions =
      config.arch === "gpt2"
        ? new Embedding(config.maxSeqLen, config.dModel, { rng: rng.split("pos"), std: 0.01 })
        : null;
    this.layers = Array.from({ length: config.nLayers }, (_, i) => new DecoderLayer(config, i, rng.split(`layer${i}`)));
    this.norm = makeNorm(config);
    this.lmHead = config.tieEmbeddings
      ? null
      : new Linear(config.dModel, config.vocabSize, { rng: rng.split("head"), bias: false, std: 0.02 });
  }

  /** ids (B*T) row-major → logits (B, T, V). */
  forward(ids: Int32Array, batch: number, seqLen: number, opts: ForwardOptions = {}): Tensor {
    const c = this.config;
    if (ids.length !== batch * seqLen)
      throw new ShapeError(`Transformer.forward: ${ids.length} ids do not fill (B, T) = (${batch}, ${seqLen})`);
    const cache = opts.cache ?? null;
    const posOffset = cache ? cache.length : 0;
    const tk = posOffset + seqLen;
    const mask = opts.mask ?? null;
    if (mask && mask.length !== batch * tk)
      throw new ShapeError(`Transformer.forward: mask has ${mask.length} values, expected (B, Tk) = (${batch}, ${tk})`);
    if (cache && isGradEnabled() && this.parameters().some((p) => p.requiresGrad)) {
      throw new ShapeError("Transformer.forward: a KV cache holds no graph; run cached decoding under noGrad()");
    }
    if (cache && cache.batch !== batch)
      throw new ShapeError(`Transformer.forward: cache batch ${cache.batch} != batch ${batch}`);
    const rng = this.training && c.dropout > 0 ? this._rng : null;

    let x = this.embedInputs(ids, batch, seqLen, opts); // (B, T, D)
    if (this.embedPositions) {
      const pos = positionIds(mask, batch, seqLen, posOffset);
      for (let i = 0; i < pos.length; i++) {
        if (pos[i]! >= c.maxSeqLen)
          throw new ShapeError(
            `Transformer.forward: position ${pos[i]} exceeds maxSeqLen ${c.maxSeqLen} (ids (${batch}, ${seqLen}), cache length ${posOffset})`,
          );
      }
      x = add(x, embedding(this.embedPositions.weight, pos, [batch, seqLen]));
    }
    if (rng) x = dropout(x, c.dropout, rng, true);
    const ctx: LayerContext = { batch, seqLen, posOffset, mask, cache, rng };
    for (const layer of this.layers) x = layer.forward(x, ctx);
    if (cache) cache.advance(seqLen);
    if (opts.lastOnly && seqLen > 1) x = slice(x, 1, seqLen - 1, seqLen); // (B, 1, D)
    x = this.norm.forward(x);
    return this.lmHead ? this.lmHead.forward(x) : matmul(x, this.embedTokens.weight, { transB: true }); // (B, T, V)
  }

  /** Token embeddings (B, T, D) of the ids; a text decoder cannot take images (a vision-language model overrides). */
  protected embedInputs(ids: Int32Array, batch: number, seqLen: number, opts: ForwardOptions): Tensor {
    if (opts.images?.some((row) => row && row.length > 0))
      throw new ShapeError("Transformer.forward: images given to a text-only model; load a vision-language checkpoint");
    return this.embedTokens.forward(ids, [batch, seqLen]);
  }

  /** An empty cache for `batch` rows of up to `maxLen` positions. */
  newCache(batch: number, maxLen: number): KVCache {
    return new KVCache(batch, maxLen, this.config.nLayers, this.config.nKvHeads, headDimOf(this.config));
  }
}

/** log_softmax(logits / temperature) gathered at targets: logits (B, T, V) → (B, T); 0 where target is -100. */
export function tokenLogprobs(logits: Tensor, targets: Int32Array, temperature = 1): Tensor {
  if (logits.ndim !== 3) throw new ShapeError(`tokenLogprobs: logits must be (B, T, V), got ${fmtShape(logits.shape)}`);
  if (!(temperature > 0)) throw new ShapeError(`tokenLogprobs: temperature must be > 0, got ${temperature}`);
  const [b, t, v] = logits.shape as [number, number, number];
  const scaled = temperature === 1 ? logits : affine(logits, 1 / temperature, 0);
  const nll = crossEntropy(reshape(scaled, [b * t, v]), targets, { reduction: "none" }); // (B*T,) = -log p
  return reshape(neg(nll), [b, t]);
}

/** Per-token positions (B*T): the count of real tokens before each slot in its row (slot index without a mask). */
function positionIds(mask: Float32Array | null, batch: number, seqLen: number, posOffset: number): Int32Array {
  const pos = new Int32Array(batch * seqLen);
  const tk = posOffset + seqLen;
  for (let b = 0; b < batch; b++) {
    let real = 0;
    for (let j = 0; j < tk; j++) {
      if (j >= posOffset) pos[b * seqLen + j - posOffset] = real;
      if (!mask || mask[b * tk + j]! > 0) real++;
    }
  }
  return pos;
}

function makeNorm(cfg: TransformerConfig): LayerNorm | RMSNorm {
  return cfg.arch === "gpt2"
    ? new LayerNorm(cfg.dModel, { eps: cfg.normEps })
    : new RMSNorm(cfg.dModel, { eps: cfg.normEps });
}
