/** Linear and Embedding layers, with PyTorch/Hugging Face weight layouts so checkpoints map one to one. */
import type { Rng } from "../../util/rng.js";
import { ShapeError, fmtShape } from "../../util/errors.js";
import { linear } from "../ops/matmul.js";
import { embedding } from "../ops/nn.js";
import { Tensor, randUniform, randn } from "../tensor.js";
import { Module } from "./module.js";

/** Options of Linear. */
export interface LinearOptions {
  /** Seeded stream for the initial weights. */
  rng: Rng;
  /** Add a bias (default true). */
  bias?: boolean;
  /** Normal init with this std (GPT-2 uses 0.02); default is PyTorch's U(-1/sqrt(in), 1/sqrt(in)). */
  std?: number;
}

/** Existing weights for a Linear (W (out, in), optional b (out)); they are used as they are, not copied. */
export interface LinearWeights {
  weight: Tensor;
  bias?: Tensor | null;
}

/** y = x W^T + b with W (out, in), b (out). */
export class Linear extends Module {
  weight: Tensor;
  bias: Tensor | null;
  readonly inFeatures: number;
  readonly outFeatures: number;

  constructor(inFeatures: number, outFeatures: number, opts: LinearOptions | LinearWeights) {
    super();
    this.inFeatures = inFeatures;
    this.outFeatures = outFeatures;
    if ("weight" in opts) {
      const b = opts.bias ?? null;
      if (
        opts.weight.shape[0] !== outFeatures ||
        opts.weight.shape[1] !== inFeatures ||
        opts.weight.ndim !== 2 ||
        (b && (b.ndim !== 1 || b.shape[0] !== outFeatures))
      ) {
        throw new ShapeError(
          `Linear(${inFeatures}, ${outFeatures}): weight ${fmtShape(opts.weight.shape)}${b ? ` / bias ${fmtShape(b.shape)}` : ""} do not fit (out, in) = (${outFeatures}, ${inFeatures})`,
        );
      }
      this.weight = opts.weight;
      this.bias = b;
      return;
    }
    const bound = 1 / Math.sqrt(inFeatures);
    this.weight =
      opts.std !== undefined
        ? randn([outFeatures, inFeatures], opts.rng, opts.std)
        : randUniform([outFeatures, inFeatures], opts.rng, -bound, bound);
    this.weight.requiresGrad = true;
    this.bias = null;
    if (opts.bias ?? true) {
      this.bias =
        opts.std !== undefined
          ? new Tensor(new Float32Array(outFeatures), [outFeatures])
          : randUniform([outFeatures], opts.rng, -bound, bound);
      this.bias.requiresGrad = true;
    }
  }

  /** x (..., in) → (..., out). */
  forward(x: Tensor): Tensor {
    return linear(x, this.weight, this.bias);
  }
}

/** Options of Embedding. */
export interface EmbeddingOptions {
  /** Seeded stream for the initial weights. */
  rng: Rng;
  /** Normal init std (default 0.02, as GPT-2 and Llama). */
  std?: number;
}

/** Lookup table (V, D). */
export class Embedding extends Module {
  weight: Tensor;

  constructor(numEmbeddings: number, dim: number, opts: EmbeddingOptions) {
    super();
    this.weight = randn([numEmbeddings, dim], opts.rng, opts.std ?? 0.02);
    this.weight.requiresGrad = true;
  }

  /** ids with shape `idsShape` → (...idsShape, D). */
  forward(ids: Int32Array, idsShape: readonly number[] = [ids.length]): Tensor {
    return embedding(this.weight, ids, idsShape);
  }
}
