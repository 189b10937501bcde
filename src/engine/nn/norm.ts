/** LayerNorm and RMSNorm layers over the last axis (weights start at 1, LayerNorm's bias at 0). */
import { layerNorm, rmsNorm } from "../ops/nn.js";
import { Tensor, full } from "../tensor.js";
import { Module } from "./module.js";

/** LayerNorm with learned scale and optional bias. */
export class LayerNorm extends Module {
  weight: Tensor;
  bias: Tensor | null;
  readonly eps: number;

  constructor(dim: number, opts: { eps?: number; bias?: boolean } = {}) {
    super();
    this.eps = opts.eps ?? 1e-5;
    this.weight = full([dim], 1);
    this.weight.requiresGrad = true;
    this.bias = (opts.bias ?? true) ? full([dim], 0) : null;
    if (this.bias) this.bias.requiresGrad = true;
  }

  /** x (..., D) → (..., D). */
  forward(x: Tensor): Tensor {
    return layerNorm(x, this.weight, this.bias, this.eps);
  }
}

/** RMSNorm with learned scale (Llama). */
export class RMSNorm extends Module {
  weight: Tensor;
  readonly eps: number;

  constructor(dim: number, opts: { eps?: number } = {}) {
    super();
    this.eps = opts.eps ?? 1e-6;
    this.weight = full([dim], 1);
    this.weight.requiresGrad = true;
  }

  /** x (..., D) → (..., D). */
  forward(x: Tensor): Tensor {
    return rmsNorm(x, this.weight, this.eps);
  }
}
