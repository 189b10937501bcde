/**
 * `model.tokenizer` of a new model: the built-in char tokenizer, or a tokenizer.json (`{ file }`), such as the BPE made
 * for SIMA's world (assets/tokenizers/sima-bpe, scripts/make-sima-tokenizer.py). The file's ids must be the Python
 * crate's (the fixture), the model's vocabulary must follow the file, the checkpoint must carry it, and a recipe's
 * relative path is the recipe folder's.
 */
import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadHfTokenizer } from "../../src/models/hf-tokenizer.js";
import { loadModel, saveModel } from "../../src/models/index.js";
import { buildModel } from "../../src/trainer/model-setup.js";
import { loadRecipe, resolveConfig } from "../../src/trainer/recipe.js";
import { getTask } from "../../src/tasks/index.js";

const ROOT = resolve(import.meta.dirname, "../..");
const SIMA_BPE = join(ROOT, "assets/tokenizers/sima-bpe/tokenizer.json");
const newModel = (tokenizer: unknown) =>
  resolveConfig({
    name: "t",
    outDir: "/tmp/rlvr-unused",
    model: { type: "new", dModel: 16, nLayers: 1, nHeads: 2, maxSeqLen: 32, tokenizer },
    task: { name: "addition" },
  });

describe("model.tokenizer of a new model", () => {
  it("SIMA's BPE encodes as the Python tokenizers crate did, and decodes back exactly", () => {
    const tok = loadHfTokenizer(SIMA_BPE);
    const fixture = JSON.parse(readFileSync(join(ROOT, "test/fixtures/sima-bpe-ids.json"), "utf8"));
    for (const { text, ids } of fixture as { text: string; ids: number[] }[]) {
      expect(tok.encode(text)).toEqual(ids);
      expect(tok.decode(ids)).toBe(text);
    }
    expect([tok.eosId, tok.padId, tok.bosId]).toEqual([2, 0, 1]);
    // a world command is a few tokens, where the char tokenizer needs one per character
    expect(tok.encode("take red key\n")).toHaveLength(4);
  });

  it("every text of a SIMA episode round-trips: prompts, observations and commands", () => {
    const tok = loadHfTokenizer(SIMA_BPE);
    for (const e of getTask("sima", { maxSteps: 8 }).generate("test", 20, 0)) {
      for (const text of [e.prompt, ...e.goldSegments!.map((s) => s.text)])
        expect(tok.decode(tok.encode(text))).toBe(text);
    }
  });

  it("sizes the vocabulary from the file and saves the tokenizer with the checkpoint", () => {
    const { model, tokenizer } = buildModel(newModel({ file: SIMA_BPE }).model, 0);
    expect(tokenizer.vocabSize).toBe(loadHfTokenizer(SIMA_BPE).vocabSize);
    expect(model.config.vocabSize).toBe(tokenizer.vocabSize);
    const dir = mkdtempSync(join(tmpdir(), "rlvr-tok-"));
    saveModel(dir, model, tokenizer);
    const back = loadModel(dir);
    expect(back.tokenizer.encode("open west\n")).toEqual(tokenizer.encode("open west\n"));
    expect(back.tokenizer.eosId).toBe(tokenizer.eosId);
    expect(buildModel(newModel("char").model, 0).model.config.vocabSize).toBe(99);
  });

  it("reads a recipe's relative file from the recipe's folder, and names a missing file", () => {
    const dir = mkdtempSync(join(tmpdir(), "rlvr-tok-recipe-"));
    const copy = join(dir, "tok.json");
    writeFileSync(copy, readFileSync(SIMA_BPE));
    writeFileSync(join(dir, "tokenizer_config.json"), readFileSync(join(SIMA_BPE, "../tokenizer_config.json")));
    const recipe = join(dir, "r.yaml");
    writeFileSync(
      recipe,
      "model: { type: new, dModel: 16, nLayers: 1, nHeads: 2, maxSeqLen: 32, tokenizer: { file: tok.json } }\n" +
        "task: { name: addition }\n",
    );
    const config = loadRecipe(recipe);
    expect(config.model).toMatchObject({ tokenizer: { file: copy } });
    expect(buildModel(config.model, 0).tokenizer.vocabSize).toBe(loadHfTokenizer(SIMA_BPE).vocabSize);
    expect(() => buildModel(newModel({ file: join(dir, "absent.json") }).model, 0)).toThrow(/file not found/);
    expect(() => newModel({ path: "x" })).toThrow(/model\.tokenizer/);
  });
});
