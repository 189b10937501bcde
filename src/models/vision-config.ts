/**
 * The vision encoder's config (docs/vision.md): one zod schema, fields documented once here. The encoder is a small
 * ViT in Qwen2-VL's layout (patch embedding, bidirectional blocks, a 2x2 patch merger projecting into the decoder's
 * width); `config.json` of a vision-language checkpoint stores it under `vision_config` with these camelCase names.
 */
import { z } from "zod";
import { ConfigError } from "../util/index.js";

/** Validated vision encoder hyper-parameters. */
export const VisionConfigSchema = z
  .strictObject({
    imageSize: z
      .number()
      .int()
      .positive()
      .max(1024)
      .default(32)
      .describe("images are resized (bilinear) to imageSize x imageSize pixels before patching"),
    patchSize: z.number().int().positive().max(64).default(4).describe("square patch side in pixels"),
    mergeSize: z
      .number()
      .int()
      .positive()
      .max(4)
      .default(2)
      .describe("the projector merges mergeSize x mergeSize neighbouring patches into one image token (Qwen2-VL: 2)"),
    dModel: z.number().int().positive().max(4096).default(64).describe("encoder width"),
    nLayers: z.number().int().positive().max(64).default(2).describe("bidirectional transformer blocks"),
    nHeads: z.number().int().positive().max(64).default(4).describe("attention heads; divides dModel"),
    dFf: z.number().int().positive().max(16384).default(128).describe("MLP hidden width of each block"),
    normEps: z.number().positive().default(1e-6).describe("LayerNorm epsilon"),
  })
  .superRefine((c, ctx) => {
    if (c.imageSize % (c.patchSize * c.mergeSize) !== 0)
      ctx.addIssue({
        code: "custom",
        path: ["imageSize"],
        message: `imageSize ${c.imageSize} must be a multiple of patchSize x mergeSize = ${c.patchSize * c.mergeSize}`,
      });
    if (c.dModel % c.nHeads !== 0)
      ctx.addIssue({ code: "custom", path: ["nHeads"], message: `nHeads ${c.nHeads} must divide dModel ${c.dModel}` });
  });

/** Vision encoder hyper-parameters (after defaults). */
export type VisionConfig = z.output<typeof VisionConfigSchema>;
/** Vision encoder hyper-parameters as written by a user (defaults optional). */
export type VisionConfigInput = z.input<typeof VisionConfigSchema>;

/** Validates a vision config, naming each bad field. */
export function parseVisionConfig(input: unknown, source = ""): VisionConfig {
  const r = VisionConfigSchema.safeParse(input ?? {});
  if (!r.success) {
    const lines = r.error.issues.map((i) => `  vision.${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`${source ? `${source}: ` : ""}invalid vision config:\n${lines.join("\n")}`);
  }
  return r.data;
}

/** Patches per image side. */
export function patchGrid(c: VisionConfig): number {
  return c.imageSize / c.patchSize;
}

/** Image tokens one image becomes in the prompt: (imageSize / patchSize / mergeSize)^2. */
export function tokensPerImage(c: VisionConfig): number {
  return (patchGrid(c) / c.mergeSize) ** 2;
}
