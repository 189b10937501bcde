/**
 * Images through sampling and training as text goes through them: the sampler's recorded log-probs (KV cache, images
 * in the prefill, left padding between rows with different prompts) equal the log-probs of one full training forward
 * over prompt ++ completion with the same images (src/trainer/batch.ts), and a rollout record names its images.
 */
import { describe, expect, it } from "vitest";
import { noGrad } from "../../src/engine/index.js";
import { CharTokenizer } from "../../src/models/tokenizer.js";
import { newVisionLM } from "../../src/models/vision-lm.js";
import { sample } from "../../src/sampling/sample.js";
import { gridLogprobs, packRollouts } from "../../src/trainer/batch.js";
import { sampleGroups } from "../../src/rollout/groups.js";
import { getTask } from "../../src/tasks/index.js";
import type { Rollout } from "../../src/rollout/types.js";
import { Rng } from "../../src/util/rng.js";
import { RgbImage } from "../../src/util/image.js";

const DECODER = { arch: "llama" as const, dModel: 32, nLayers: 2, nHeads: 4, nKvHeads: 2, dFf: 64, maxSeqLen: 160 };
const VISION = { imageSize: 8, patchSize: 2, mergeSize: 2, dModel: 16, nLayers: 1, nHeads: 2, dFf: 32 };

function noise(seed: number): RgbImage {
  const rng = new Rng(seed);
  return new RgbImage(
    9,
    6,
    Float32Array.from({ length: 9 * 6 * 3 }, () => rng.random()),
    `noise/${seed}`,
  );
}

describe("vision sampling", () => {
  it("records the log-probs a training forward over the same tokens and images computes", () => {
    const { model, tokenizer } = newVisionLM(DECODER, VISION, new CharTokenizer(), new Rng(1));
    model.eval();
    const prompts = [
      [1, ...tokenizer.encode("a <image> b")],
      [1, ...tokenizer.encode("<image><image> longer prompt")],
    ];
    const images = [[noise(1)], [noise(2), noise(3)]];
    const out = noGrad(() => sample(model, tokenizer, prompts, { maxNewTokens: 6, rng: new Rng(5), images }));
    const rollouts = out.map(
      (s, b) =>
        ({
          promptIds: prompts[b]!,
          completionIds: s.tokens,
          samplerLogprobs: s.logprobs,
          lossMask: s.tokens.map(() => 1),
          images: images[b],
        }) as unknown as Rollout,
    );
    const p = packRollouts(rollouts, tokenizer.padId);
    const { logp } = noGrad(() => gridLogprobs(model, p, 1));
    rollouts.forEach((r, b) =>
      r.completionIds.forEach((_, j) =>
        expect(logp.data[b * p.T + p.starts[b]! + j]).toBeCloseTo(r.samplerLogprobs[j]!, 4),
      ),
    );
    // Other images give other log-probs: the images are really read.
    const swapped = rollouts.map((r, b) => ({ ...r, images: b === 0 ? [noise(9)] : r.images }));
    const other = noGrad(() => gridLogprobs(model, packRollouts(swapped, tokenizer.padId), 1)).logp;
    expect(Math.abs(other.data[p.starts[0]!]! - logp.data[p.starts[0]!]!)).toBeGreaterThan(1e-6);
  });

  it("puts each example's images on its rollouts (JSON names the ref only)", async () => {
    const { model, tokenizer } = newVisionLM(
      { ...DECODER, maxSeqLen: 256 },
      { ...VISION, imageSize: 40, patchSize: 10 },
      new CharTokenizer(),
      new Rng(2),
    );
    const task = getTask("vision-grounding", {});
    const examples = task.generate("test", 2, 0);
    const groups = await sampleGroups(model, tokenizer, task, examples, {
      groupSize: 2,
      maxNewTokens: 4,
      temperature: 1,
      rng: new Rng(0),
      policyVersion: 0,
      idPrefix: "0",
    });
    expect(groups[1]!.rollouts[1]!.images).toBe(examples[1]!.images);
    expect(JSON.parse(JSON.stringify(groups[0]!.rollouts[0]!)).images).toEqual([
      { ref: examples[0]!.id, width: 40, height: 40 },
    ]);
  });
});
