/**
 * What the model server loads: text decoders and vision-language checkpoints (served with image parts:
 * test/serve/model-server-vision.test.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { saveModel } from "../../src/models/checkpoint.js";
import { CharTokenizer } from "../../src/models/tokenizer.js";
import { VisionLanguageModel, VisionTokenizer, newVisionLM } from "../../src/models/vision-lm.js";
import { ModelHost, loadForServing } from "../../src/serve/model-server/host.js";
import { Rng } from "../../src/util/index.js";
import { tinyCheckpoint } from "./model-server-helpers.js";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function visionCheckpoint(): string {
  const dir = mkdtempSync(join(tmpdir(), "rlvr-serve-vision-"));
  dirs.push(dir);
  const { model, tokenizer } = newVisionLM(
    { arch: "llama", dModel: 16, nLayers: 1, nHeads: 2, nKvHeads: 1, dFf: 32, maxSeqLen: 64 },
    { imageSize: 8, patchSize: 2, mergeSize: 2, dModel: 8, nLayers: 1, nHeads: 2, dFf: 16 },
    new CharTokenizer(),
    new Rng(1),
  );
  saveModel(dir, model, tokenizer);
  return dir;
}

describe("model server: the checkpoints it loads", () => {
  it("loads a vision-language checkpoint with its vision tokenizer", () => {
    const dir = visionCheckpoint();
    const loaded = loadForServing(dir);
    expect(loaded.model).toBeInstanceOf(VisionLanguageModel);
    expect(loaded.tokenizer).toBeInstanceOf(VisionTokenizer);
    expect(new ModelHost(dir).current.path).toBe(loaded.path);
  });

  it("still loads a text decoder", () => {
    const host = new ModelHost(tinyCheckpoint(2));
    expect(host.current.model.config.arch).toBeDefined();
    expect(host.version).toBe(0);
  });
});
