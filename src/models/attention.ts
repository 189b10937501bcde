/**
 * Multi-head causal self-attention with grouped-query heads (nKvHeads <= nHeads), RoPE for the llama shape, and
 * an optional KV cache. Projections are named as Hugging Face Llama/Qwen2 name them (qProj ↔ q_proj), so a
 * checkpoint maps one to one.
 */
import type { Rng } from "../util/index.js";
import {
  Linear,
  Module,
  dropout,
  reshape,
  rope,
  scaledDotProductAttention,
  transpose,
  type Tensor,
} from "../engine/index.js";
import { headDimOf, type TransformerConfig } from "./config.js";
import type { KVCache } from "./kv-cache.js";

/** Anything that maps (..., in) to (..., out): a Linear or a LoRA-wrapped Linear. */
export type LinearLike = Module & { forward(x: Tensor): Tensor };

/** Per-call inputs shared by every layer of one forward pass. */
export interface LayerContext {
  batch: number;
  /** New positions in this call. */
  seqLen: number;
  /** Position of the first new token (cache length, else 0). */
  posOffset: number;
  /** (B, posOffset + seqLen), 1 = real token; null = no padding. */
  mask: Float32Array | null;
  cache: KVCache | null;
  /** Dropout stream; null outside training. */
  rng: Rng | null;
}

/** Self-attention block (causal unless `causal` is set false). */
export class Attention extends Module {
  qProj: LinearLike;
  kProj: LinearLike;
  vProj: LinearLike;
  oProj: LinearLike;
  /** Causal mask on (the decoder); false = bidirectional, set by the masked-diffusion LM (./diffusion-lm.ts). */
  causal = true;
  private readonly _cfg: TransformerConfig;
  private readonly _layer: number;

  constructor(cfg: TransformerConfig, layer: number, rng: Rng) {
    super();
    this._cfg = cfg;
    this._layer = layer;
    const hd = headDimOf(cfg);
    const gpt = cfg.arch === "gpt2";
    const qkvBias = gpt || cfg.qkvBias;
    this.qProj = new Linear(cfg.dModel, cfg.nHeads * hd, { rng: rng.split("q"), bias: qkvBias, std: 0.02 });
    this.kProj = new Linear(cfg.dModel, cfg.nKvHeads * hd, { rng: rng.split("k"), bias: qkvBias, std: 0.02 });
    this.vProj = new Linear(cfg.dModel, cfg.nKvHeads * hd, { rng: rng.split("v"), bias: qkvBias, std: 0.02 });
    // GPT-2's scaled init of residual projections: std 0.02 / sqrt(2 * layers)
    this.oProj = new Linear(cfg.nHeads * hd, cfg.dModel, {
      rng: rng.split("o"),
      bias: gpt,
      std: 0.02 / Math.sqrt(2 * cfg.nLayers),
    });
  }

  /** x (B, T, D) → (B, T, D). */
  forward(x: Tensor, ctx: LayerContext): Tensor {
    const c = this._cfg;
    const hd = headDimOf(c);
    const { batch: b, seqLen: t } = ctx;
    const heads = (y: Tensor, n: number) => transpose(reshape(y, [b, t, n, hd]), 1, 2); // (B, T, n*hd) → (B, n, T, hd)
    let q = heads(this.qProj.forward(x), c.nHeads);
    let k = heads(this.kProj.forward(x), c.nKvHeads);
    let v = heads(this.vProj.forward(x), c.nKvHeads);
    if (c.arch === "llama") {
      q = rope(q, { posOffset: ctx.posOffset, theta: c.ropeTheta });
      k = rope(k, { posOffset: ctx.posOffset, theta: c.ropeTheta });
    }
    let mask = ctx.mask;
    let causal = this.causal;
    if (ctx.cache) ({ k, v, mask, causal } = ctx.cache.append(this._layer, k, v, ctx.mask)); // k, v: (B, Hkv, Tk, hd)
    const y = scaledDotProductAttention(q, k, v, { causal, mask }); // (B, H, T, hd)
    const out = this.oProj.forward(reshape(transpose(y, 1, 2), [b, t, c.nHeads * hd])); // (B, T, D)
    return ctx.rng && c.dropout > 0 ? dropout(out, c.dropout, ctx.rng, this.training) : out;
  }
}
