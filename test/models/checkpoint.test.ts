import { describe, expect, it } from "vitest";
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyLoRA, encodeSafetensors, noGrad, readSafetensors, tensor } from "../../src/engine/index.js";
import { hfName, loadModel, saveModel } from "../../src/models/checkpoint.js";
import { createModel, listModels, registerModel } from "../../src/models/registry.js";
import { CharTokenizer } from "../../src/models/tokenizer.js";
import { HfTokenizer } from "../../src/models/hf-tokenizer.js";
import { CheckpointError, Rng } from "../../src/util/index.js";
import { promptIds } from "../../src/rollout/groups.js";

const FIXTURES = join(import.meta.dirname, "..", "fixtures", "parity");
const tmp = () => mkdtempSync(join(tmpdir(), "rlvr-ckpt-"));
const ids = Int32Array.from([5, 9, 14, 20, 3, 7]);

describe("checkpoints", () => {
  it("maps our parameter names to Hugging Face names", () => {
    expect(hfName("layers.3.selfAttn.qProj.weight")).toBe("model.layers.3.self_attn.q_proj.weight");
    expect(hfName("layers.0.postAttentionLayernorm.weight")).toBe("model.layers.0.post_attention_layernorm.weight");
    expect(hfName("embedTokens.weight")).toBe("model.embed_tokens.weight");
    expect(hfName("lmHead.weight")).toBe("lm_head.weight");
  });

  it.each(["micro-char", "tiny-char-gpt"])("round-trips a %s model with the char tokenizer", (name) => {
    const { model, tokenizer } = createModel(
      name,
      new Rng(3),
      name === "tiny-char-gpt" ? { nLayers: 1, dModel: 32, dFf: 64, tieEmbeddings: false } : {},
    );
    const dir = tmp();
    saveModel(dir, model, tokenizer, { "optimizer.m": tensor([1, 2, 3], [3]) });
    const back = loadModel(dir);
    expect(back.model.config).toEqual(model.config);
    expect(back.tokenizer).toBeInstanceOf(CharTokenizer);
    expect(back.extra!["optimizer.m"]!.toArray()).toEqual([1, 2, 3]);
    const a = noGrad(() => model.eval().forward(ids, 2, 3));
    const b = noGrad(() => back.model.forward(ids, 2, 3));
    expect(Array.from(b.data)).toEqual(Array.from(a.data));
    const cfg = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
    expect(cfg).toMatchObject({ eos_token_id: 2, pad_token_id: 0, bos_token_id: 1 });
  });

  it("loads a Hugging Face directory and saves it back loadable, tied head omitted as in HF", () => {
    const src = loadModel(join(FIXTURES, "qwen2"));
    expect(src.tokenizer).toBeInstanceOf(HfTokenizer);
    expect(src.tokenizer.eosId).toBe(297);
    const dir = tmp();
    saveModel(dir, src.model, src.tokenizer);
    const names = Object.keys(readSafetensors(join(dir, "model.safetensors")).tensors);
    expect(names).toContain("model.layers.1.self_attn.k_proj.bias");
    expect(names).not.toContain("lm_head.weight");
    const back = loadModel(dir);
    expect(back.tokenizer.encode("Hello, world!")).toEqual([287, 11, 286, 0]);
    const a = noGrad(() => src.model.forward(ids, 1, 6));
    expect(Array.from(noGrad(() => back.model.forward(ids, 1, 6)).data)).toEqual(Array.from(a.data));
  });

  it("takes bos from the tokenizer, not config.json: a transformers re-save's default bos_token_id adds nothing", () => {
    // transformers 5 writes LlamaConfig's default bos_token_id (1) when it re-saves a checkpoint whose tokenizer has
    // no bos (TRL's saved policies in bench:trl:learn); its own tokenizer prepends nothing, and neither may we.
    const dir = tmp();
    for (const f of ["tokenizer.json", "model.safetensors"]) copyFileSync(join(FIXTURES, "llama", f), join(dir, f));
    const cfg = JSON.parse(readFileSync(join(FIXTURES, "llama", "config.json"), "utf8")) as Record<string, unknown>;
    writeFileSync(join(dir, "config.json"), JSON.stringify({ ...cfg, bos_token_id: 1 }));
    const { tokenizer } = loadModel(dir);
    expect(loadModel(join(FIXTURES, "llama")).tokenizer.bosId).toBeNull();
    expect(tokenizer.bosId).toBeNull();
    expect(promptIds(tokenizer, "1+2=")).toEqual(tokenizer.encode("1+2="));
  });

  /** A copy of the llama fixture whose weights file is replaced by `mutate` of its tensors. */
  function brokenCopy(mutate: (t: Record<string, { shape: number[]; data: Float32Array }>) => void): string {
    const dir = tmp();
    for (const f of ["config.json", "tokenizer.json"]) copyFileSync(join(FIXTURES, "llama", f), join(dir, f));
    const tensors = readSafetensors(join(FIXTURES, "llama", "model.safetensors")).tensors;
    mutate(tensors);
    writeFileSync(join(dir, "model.safetensors"), encodeSafetensors(tensors));
    return dir;
  }

  it("exports LoRA adapters merged into plain weights", () => {
    const { model, tokenizer } = createModel("micro-char", new Rng(4));
    applyLoRA(model, { rank: 2, targets: ["qProj", "downProj"], rng: new Rng(5) });
    for (const [name, p] of model.namedParameters()) if (name.endsWith("loraB")) p.data.fill(0.05); // a non-zero update
    const dir = tmp();
    saveModel(dir, model, tokenizer);
    const a = noGrad(() => model.eval().forward(ids, 2, 3));
    const b = noGrad(() => loadModel(dir).model.forward(ids, 2, 3));
    for (let i = 0; i < a.size; i++) expect(b.data[i]!).toBeCloseTo(a.data[i]!, 5);
  });

  it("names a missing tensor and its expected shape", () => {
    const dir = brokenCopy((t) => delete t["model.layers.1.mlp.up_proj.weight"]);
    expect(() => loadModel(dir)).toThrow(CheckpointError);
    expect(() => loadModel(dir)).toThrow(
      /missing tensor "model\.layers\.1\.mlp\.up_proj\.weight" \(parameter layers\.1\.mlp\.upProj\.weight, shape \(128, 64\)\)/,
    );
  });

  it("names a mismatched tensor with both shapes", () => {
    const dir = brokenCopy((t) => {
      t["model.norm.weight"] = { shape: [32], data: new Float32Array(32) };
    });
    expect(() => loadModel(dir)).toThrow(/tensor "model\.norm\.weight" has shape \(32\) but the model expects \(64\)/);
  });

  it("names tensors the model has no place for", () => {
    const dir = brokenCopy((t) => {
      t["model.layers.2.mlp.up_proj.weight"] = { shape: [2], data: new Float32Array(2) };
    });
    expect(() => loadModel(dir)).toThrow(
      /1 tensor\(s\) the model has no parameter for: "model\.layers\.2\.mlp\.up_proj\.weight" \(2\)/,
    );
  });

  it("fails clearly on a directory without a checkpoint", () => {
    expect(() => loadModel(tmp())).toThrow(/no config\.json/);
  });
});

describe("model registry", () => {
  it("has 1-3M-parameter built-in char models and rejects duplicate names", () => {
    for (const name of ["tiny-char", "tiny-char-gpt"]) {
      const n = createModel(name, new Rng(0)).model.numParameters();
      expect(n).toBeGreaterThan(1e6);
      expect(n).toBeLessThan(3e6);
    }
    expect(() => registerModel(listModels()[0]!)).toThrow(/already registered/);
    expect(() => createModel("nope", new Rng(0))).toThrow(/unknown model "nope"; registered: tiny-char/);
  });
});
