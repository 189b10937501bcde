/**
 * `exportHf` (rlvr export --format safetensors-hf) without Python: llama and qwen2 folders load back into rlvr
 * with identical logits; the char tokenizer's tokenizer.json, read by the tokenizers library, encodes exactly as
 * `CharTokenizer`; GPT-2 tensors are in transformers' Conv1D layout (transposed, q/k/v fused), checked element by
 * element. `npm run check:hf-export` does the transformers side (scripts/check-hf-export.py).
 */
import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Rng } from "../../src/util/index.js";
import { noGrad, readSafetensors } from "../../src/engine/index.js";
import {
  CharTokenizer,
  Transformer,
  loadHfTokenizer,
  loadModel,
  parseTransformerConfig,
} from "../../src/models/index.js";
import { exportHf } from "../../src/models/export/index.js";
import { saveModel } from "../../src/models/checkpoint.js";
import { buildProgram } from "../../src/cli/index.js";
import { gguf } from "@huggingface/gguf";
import { PROMPTS, testModels } from "./gguf-helpers.js";

const root = mkdtempSync(join(tmpdir(), "rlvr-hf-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("exportHf", () => {
  const [llama, , qwen2] = testModels(0);
  const gpt2Config = { arch: "gpt2", vocabSize: 99, dModel: 64, nLayers: 2, nHeads: 4, nKvHeads: 4, dFf: 128 };
  const gpt2 = {
    model: new Transformer(parseTransformerConfig({ ...gpt2Config, maxSeqLen: 128, tieEmbeddings: false }), new Rng(2)),
    tokenizer: new CharTokenizer(),
  };

  it.each([llama!, qwen2!].map((m) => [m.name, m] as const))("%s loads back with the same logits", (name, m) => {
    const dir = join(root, name);
    exportHf(dir, m.model, m.tokenizer);
    const config = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
    expect(config.model_type).toBe(name === "qwen2" ? "qwen2" : "llama");
    expect(config.eos_token_id).toBe(m.tokenizer.eosId);
    expect(config.rlvr_dropout).toBeUndefined();
    const back = loadModel(dir);
    const ids = Int32Array.from([1, 5, 9, 40, 7]);
    const a = noGrad(() => m.model.forward(ids, 1, ids.length).data);
    const b = noGrad(() => back.model.forward(ids, 1, ids.length).data);
    expect(Array.from(b)).toEqual(Array.from(a));
    for (const p of PROMPTS) expect(back.tokenizer.encode(p)).toEqual(m.tokenizer.encode(p));
    expect(back.tokenizer.eosId).toBe(m.tokenizer.eosId);
  });

  it("writes the char tokenizer as a byte-level BPE that encodes and decodes like CharTokenizer", () => {
    const dir = join(root, "llama");
    const hf = loadHfTokenizer(join(dir, "tokenizer.json"));
    const char = new CharTokenizer();
    for (const text of [...PROMPTS, "  two  spaces\nand a newline\n", "~{}|\\`"]) {
      expect(hf.encode(text)).toEqual(char.encode(text));
      expect(hf.decode(char.encode(text))).toBe(text);
    }
    const cfg = JSON.parse(readFileSync(join(dir, "tokenizer_config.json"), "utf8"));
    expect([cfg.eos_token, cfg.bos_token, cfg.pad_token]).toEqual(["<eos>", "<bos>", "<pad>"]);
  });

  it("writes GPT-2 in transformers' Conv1D layout", () => {
    const dir = join(root, "gpt2");
    exportHf(dir, gpt2!.model, gpt2!.tokenizer);
    const config = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
    expect(config).toMatchObject({ model_type: "gpt2", n_embd: 64, n_layer: 2, n_head: 4, n_inner: 128 });
    expect(config).toMatchObject({ activation_function: "gelu_new", tie_word_embeddings: false, n_positions: 128 });
    const t = readSafetensors(join(dir, "model.safetensors")).tensors;
    expect(Object.keys(t).length).toBe(4 + 2 * 12 + 1); // wte, wpe, ln_f (2), 12 per block, lm_head
    const attn = t["transformer.h.1.attn.c_attn.weight"]!;
    expect(attn.shape).toEqual([64, 192]); // (in, q|k|v out)
    const layer = gpt2!.model.layers[1]!.selfAttn;
    const q = (layer.qProj as unknown as { weight: { data: Float32Array } }).weight.data; // (out 64, in 64)
    const v = (layer.vProj as unknown as { weight: { data: Float32Array } }).weight.data;
    // c_attn[i][o] = q[o][i] for o < 64, v[o - 128][i] for o >= 128
    expect(attn.data[5 * 192 + 7]).toBe(q[7 * 64 + 5]);
    expect(attn.data[63 * 192 + 130]).toBe(v[2 * 64 + 63]);
    const fc = t["transformer.h.0.mlp.c_fc.weight"]!;
    expect(fc.shape).toEqual([64, 128]);
    const up = (gpt2!.model.layers[0]!.mlp.upProj as unknown as { weight: { data: Float32Array } }).weight.data;
    expect(fc.data[3 * 128 + 100]).toBe(up[100 * 64 + 3]);
    expect(t["lm_head.weight"]!.shape).toEqual([99, 64]);
  });

  it("refuses GPT-2 shapes transformers cannot hold", () => {
    const cfg = parseTransformerConfig({
      arch: "gpt2",
      vocabSize: 99,
      dModel: 64,
      nLayers: 1,
      nHeads: 4,
      nKvHeads: 2,
      dFf: 128,
      maxSeqLen: 16,
    });
    expect(() => exportHf(join(root, "gqa"), new Transformer(cfg, new Rng(0)), new CharTokenizer())).toThrow(
      /no grouped-query attention/,
    );
  });

  it("rlvr export writes both formats from a checkpoint and names bad flags", async () => {
    const ck = join(root, "ck");
    saveModel(ck, llama!.model, llama!.tokenizer);
    const run = async (...args: string[]) => {
      const errors: string[] = [];
      const log = console.log,
        err = console.error;
      console.log = () => {};
      console.error = (m: string) => void errors.push(m);
      process.exitCode = 0;
      try {
        await buildProgram()
          .exitOverride()
          .parseAsync(["node", "rlvr", "export", ck, ...args]);
      } finally {
        console.log = log;
        console.error = err;
      }
      const code = process.exitCode;
      process.exitCode = 0;
      return { code, errors };
    };
    expect((await run("--format", "gguf", "--out", join(root, "cli.gguf"), "--type", "q8_0")).code).toBe(0);
    const parsed = await gguf(join(root, "cli.gguf"), { allowLocalFile: true });
    expect(parsed.metadata["general.architecture"]).toBe("llama");
    expect((await run("--format", "safetensors-hf", "--out", join(root, "cli-hf"))).code).toBe(0);
    expect(loadModel(join(root, "cli-hf")).model.config.dModel).toBe(64);
    const bad = await run("--format", "onnx", "--out", join(root, "x"));
    expect(bad).toEqual({ code: 1, errors: ['rlvr: --format must be one of gguf, safetensors-hf, got "onnx"'] });
    expect((await run("--format", "gguf", "--out", join(root, "x"), "--type", "q4")).errors[0]).toMatch(/--type/);
  });
});
