/**
 * A small vision encoder in Qwen2-VL's layout (arXiv 2409.12191 §2.1; transformers' Qwen2VisionTransformer):
 *
 *   pixels (H, W, 3) → resize to S x S (bilinear) → scale to [-1, 1] → P x P patches flattened as (C, P, P)
 *   → patchEmbed: one matmul, (N, 3·P·P) → (N, dV) (a stride-P Conv2d written as a Linear)
 *   → + learned position table (N, dV) → L bidirectional pre-norm blocks (the decoder's own DecoderLayer,
 *   GPT-2 shape: LayerNorm, GELU MLP, biases) → LayerNorm
 *   → merger: m x m neighbouring patches concatenated (m² · dV) → fc1 → GELU → fc2 → (N / m², dOut)
 *
 * dOut is the decoder's width, so each output row replaces one image-placeholder token's embedding
 * (./vision-lm.ts). Departures from Qwen2-VL: learned absolute positions instead of 2-D RoPE (the engine's RoPE op is
 * 1-D); tanh GELU instead of QuickGELU; one fixed square input size instead of native resolution; a single frame per
 * image (no temporal patch of 2: a video is a sequence of separately encoded frames with time tokens between them);
 * the final LayerNorm is the merger's `ln_q`.
 */
import { ConfigError, type Rng } from "../util/index.js";
import { RgbImage, resizeBilinear } from "../util/image.js";
import {
  Embedding,
  LayerNorm,
  Linear,
  Module,
  add,
  gelu,
  permute,
  reshape,
  tensor,
  type Tensor,
} from "../engine/index.js";
import type { LayerContext } from "./attention.js";
import { parseTransformerConfig, type TransformerConfig } from "./config.js";
import { DecoderLayer } from "./transformer.js";
import { patchGrid, tokensPerImage, type VisionConfig } from "./vision-config.js";

/** The merger's two-layer MLP (Qwen2-VL `merger.mlp.0` / `merger.mlp.2`). */
export class PatchMerger extends Module {
  fc1: Linear;
  fc2: Linear;

  constructor(dIn: number, dOut: number, rng: Rng) {
    super();
    this.fc1 = new Linear(dIn, dIn, { rng: rng.split("fc1"), std: 0.02 });
    this.fc2 = new Linear(dIn, dOut, { rng: rng.split("fc2"), std: 0.02 });
  }

  /** x (M, m²·dV) → (M, dOut). */
  forward(x: Tensor): Tensor {
    return this.fc2.forward(gelu(this.fc1.forward(x)));
  }
}

/** Images → image-token embeddings in the decoder's width. */
export class VisionEncoder extends Module {
  readonly config: VisionConfig;
  readonly outDim: number;
  patchEmbed: Linear;
  embedPositions: Embedding;
  layers: DecoderLayer[];
  norm: LayerNorm;
  merger: PatchMerger;
  private readonly _blockConfig: TransformerConfig;

  constructor(config: VisionConfig, outDim: number, rng: Rng) {
    super();
    this.config = config;
    this.outDim = outDim;
    const c = config;
    const n = patchGrid(c) ** 2;
    this._blockConfig = parseTransformerConfig({
      arch: "gpt2",
      vocabSize: 1,
      dModel: c.dModel,
      nLayers: c.nLayers,
      nHeads: c.nHeads,
      nKvHeads: c.nHeads,
      dFf: c.dFf,
      maxSeqLen: n,
      normEps: c.normEps,
    });
    this.patchEmbed = new Linear(3 * c.patchSize * c.patchSize, c.dModel, { rng: rng.split("patch"), std: 0.02 });
    this.embedPositions = new Embedding(n, c.dModel, { rng: rng.split("pos"), std: 0.02 });
    this.layers = Array.from({ length: c.nLayers }, (_, i) => {
      const layer = new DecoderLayer(this._blockConfig, i, rng.split(`layer${i}`));
      layer.selfAttn.causal = false; // every patch sees every patch
      return layer;
    });
    this.norm = new LayerNorm(c.dModel, { eps: c.normEps });
    this.merger = new PatchMerger(c.mergeSize * c.mergeSize * c.dModel, outDim, rng.split("merger"));
  }

  /** Image tokens per image. */
  get tokensPerImage(): number {
    return tokensPerImage(this.config);
  }

  /** images → (images.length · tokensPerImage, outDim), image by image, each image's tokens in raster order. */
  forward(images: readonly RgbImage[]): Tensor {
    if (images.length === 0) throw new ConfigError("VisionEncoder.forward: no images");
    const c = this.config;
    const g = patchGrid(c);
    const n = g * g;
    const nImg = images.length;
    let x = this.patchEmbed.forward(patchify(images, c)); // (nImg·N, dV)
    x = add(reshape(x, [nImg, n, c.dModel]), reshape(this.embedPositions.weight, [1, n, c.dModel])); // (nImg, N, dV)
    const ctx: LayerContext = { batch: nImg, seqLen: n, posOffset: 0, mask: null, cache: null, rng: null };
    for (const layer of this.layers) x = layer.forward(x, ctx);
    x = this.norm.forward(x);
    // Group each m x m block of neighbouring patches: (nImg, g/m, m, g/m, m, dV) → (nImg, g/m, g/m, m, m, dV).
    const m = c.mergeSize,
      h = g / m;
    x = permute(reshape(x, [nImg, h, m, h, m, c.dModel]), [0, 1, 3, 2, 4, 5]);
    x = reshape(x, [nImg * h * h, m * m * c.dModel]); // (nImg·N/m², m²·dV)
    return this.merger.forward(x); // (nImg·N/m², dOut)
  }
}

/**
 * Pixels → patch rows (nImg·N, 3·P·P): each image resized to S x S and scaled to [-1, 1], patches in raster order,
 * each flattened as (channel, row, column), the layout of a Conv2d weight (out, C, P, P).
 */
export function patchify(images: readonly RgbImage[], c: VisionConfig): Tensor {
  const s = c.imageSize,
    p = c.patchSize,
    g = s / p;
  const width = 3 * p * p;
  const out = new Float32Array(images.length * g * g * width);
  images.forEach((raw, i) => {
    if (!(raw instanceof RgbImage)) throw new ConfigError(`VisionEncoder: image ${i} is not an RgbImage`);
    const img = resizeBilinear(raw, s, s);
    for (let gy = 0; gy < g; gy++)
      for (let gx = 0; gx < g; gx++) {
        const row = ((i * g + gy) * g + gx) * width;
        for (let ch = 0; ch < 3; ch++)
          for (let py = 0; py < p; py++)
            for (let px = 0; px < p; px++) {
              const v = img.data[((gy * p + py) * s + gx * p + px) * 3 + ch]!;
              out[row + (ch * p + py) * p + px] = (v - 0.5) / 0.5;
            }
      }
  });
  return tensor(out, [images.length * g * g, width]);
}
