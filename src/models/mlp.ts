/**
 * The feed-forward block of each layer: GPT-2's GELU MLP (upProj, gelu, downProj, with biases) or Llama's
 * SwiGLU (downProj(silu(gateProj x) * upProj x), no biases). Names follow Hugging Face Llama (gate_proj,
 * up_proj, down_proj).
 */
import type { Rng } from "../util/index.js";
import { Linear, Module, dropout, gelu, mul, silu, type Tensor } from "../engine/index.js";
import type { TransformerConfig } from "./config.js";
import type { LinearLike } from "./attention.js";

/** GELU MLP (gpt2) or SwiGLU (llama). */
export class Mlp extends Module {
  gateProj: LinearLike | null;
  upProj: LinearLike;
  downProj: LinearLike;
  private readonly _cfg: TransformerConfig;

  constructor(cfg: TransformerConfig, rng: Rng) {
    super();
    this._cfg = cfg;
    const gpt = cfg.arch === "gpt2";
    this.gateProj = gpt ? null : new Linear(cfg.dModel, cfg.dFf, { rng: rng.split("gate"), bias: false, std: 0.02 });
    this.upProj = new Linear(cfg.dModel, cfg.dFf, { rng: rng.split("up"), bias: gpt, std: 0.02 });
    this.downProj = new Linear(cfg.dFf, cfg.dModel, {
      rng: rng.split("down"),
      bias: gpt,
      std: 0.02 / Math.sqrt(2 * cfg.nLayers),
    });
  }

  /** x (B, T, D) → (B, T, D) through (B, T, dFf). */
  forward(x: Tensor, rng: Rng | null): Tensor {
    const h = this.gateProj
      ? mul(silu(this.gateProj.forward(x)), this.upProj.forward(x))
      : gelu(this.upProj.forward(x));
    const out = this.downProj.forward(h);
    return rng && this._cfg.dropout > 0 ? dropout(out, this._cfg.dropout, rng, this.training) : out;
  }
}
