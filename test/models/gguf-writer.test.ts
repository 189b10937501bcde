/**
 * The GGUF writer read back by an independent reader (`@huggingface/gguf`): metadata, tensor names, ggml-order
 * shapes, types, offsets and values; half-float and Q8_0 encodings against hand-computed bit patterns and their
 * round-trip error bounds; the llama q/k row permutation; refusals.
 */
import { describe, expect, it, afterAll } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gguf } from "@huggingface/gguf";
import { Rng } from "../../src/util/index.js";
import { DiffusionLM, Transformer, parseTransformerConfig } from "../../src/models/index.js";
import { CharTokenizer, HfTokenizer } from "../../src/models/index.js";
import { exportGguf, permuteRope } from "../../src/models/export/gguf.js";
import { encodeGguf, GgmlType } from "../../src/models/export/gguf-file.js";
import {
  decodeF16,
  decodeQ8_0,
  encodeF16,
  encodeQ8_0,
  fromHalfBits,
  toHalfBits,
} from "../../src/models/export/quantize.js";
import { gpt2ByteToUnicode } from "../../src/models/export/gguf-tokenizer.js";
import { fixtureTokenizer, testModels } from "./gguf-helpers.js";

const dir = mkdtempSync(join(tmpdir(), "rlvr-gguf-w-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("half floats", () => {
  it("encodes hand-checked bit patterns (round to nearest even)", () => {
    const cases: [number, number][] = [
      [0, 0x0000],
      [-0, 0x8000],
      [1, 0x3c00],
      [-2, 0xc000],
      [0.5, 0x3800],
      [65504, 0x7bff], // largest half
      [65520, 0x7c00], // halfway to 2^16: rounds to even, i.e. Inf
      [1e6, 0x7c00],
      [1 / 3, 0x3555],
      [2 ** -14, 0x0400], // smallest normal
      [2 ** -24, 0x0001], // smallest subnormal
      [2 ** -25, 0x0000], // tie between 0 and 2^-24: even is 0
      [3 * 2 ** -25, 0x0002], // tie between 1 and 2 ulps: even is 2
      [1 + 2 ** -11, 0x3c00], // tie: even
      [1 + 3 * 2 ** -11, 0x3c02], // tie: even (up)
      [Infinity, 0x7c00],
    ];
    for (const [x, bits] of cases) expect([x, toHalfBits(x)]).toEqual([x, bits]);
    expect(toHalfBits(NaN) & 0x7c00).toBe(0x7c00);
    expect(Number.isNaN(fromHalfBits(toHalfBits(NaN)))).toBe(true);
  });

  it("round-trips within half an ulp (relative 2^-11 for normal values)", () => {
    const rng = new Rng(5);
    const x = Float32Array.from({ length: 4096 }, () => rng.normal() * 3);
    const y = decodeF16(encodeF16(x));
    for (let i = 0; i < x.length; i++) {
      const a = Math.abs(x[i]!);
      const bound = a >= 2 ** -14 ? a * 2 ** -11 : 2 ** -25;
      expect(Math.abs(y[i]! - x[i]!)).toBeLessThanOrEqual(bound);
    }
  });
});

describe("Q8_0", () => {
  it("matches a hand-computed block", () => {
    // max |x| = 127 → d = 1 (exact in f16); q = roundf(x), halves away from zero
    const x = new Float32Array(32);
    x.set([127, -63.5, 63.5, 0.49, -0.5, 2.5, -127]);
    const bytes = encodeQ8_0(x);
    expect(bytes.length).toBe(34);
    expect(bytes[0]! | (bytes[1]! << 8)).toBe(0x3c00);
    expect(Array.from(new Int8Array(bytes.buffer, 2, 7))).toEqual([127, -64, 64, 0, -1, 3, -127]);
    expect(Array.from(decodeQ8_0(bytes).subarray(0, 3))).toEqual([127, -64, 64]);
  });

  it("round-trips within f16(d)/2 + 127|d - f16(d)| per value, d = max|x|/127 per block", () => {
    const rng = new Rng(6);
    const x = Float32Array.from({ length: 32 * 64 }, (_, i) => rng.normal() * (i < 32 ? 1e-3 : 0.5));
    const y = decodeQ8_0(encodeQ8_0(x));
    for (let b = 0; b < 64; b++) {
      let amax = 0;
      for (let j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(x[b * 32 + j]!));
      const d = Math.fround(amax / 127);
      const d16 = fromHalfBits(toHalfBits(d));
      const bound = d16 / 2 + 127 * Math.abs(d - d16) + 1e-7;
      for (let j = 0; j < 32; j++) expect(Math.abs(y[b * 32 + j]! - x[b * 32 + j]!)).toBeLessThanOrEqual(bound);
    }
    expect(() => encodeQ8_0(new Float32Array(33))).toThrow(/multiple of 32/);
  });
});

describe("GGUF files read back with @huggingface/gguf", () => {
  const models = testModels(0);

  it.each(models.map((m) => [m.name, m] as const))("%s: metadata, shapes, types and values", async (name, m) => {
    const c = m.model.config;
    for (const type of ["f32", "f16", "q8_0"] as const) {
      const path = join(dir, `${name}-${type}.gguf`);
      exportGguf(path, m.model, m.tokenizer, { type, name: "tiny" });
      const parsed = await gguf(path, { allowLocalFile: true });
      const md = parsed.metadata as Record<string, unknown>;
      const arch = name;
      expect(md["general.architecture"]).toBe(arch);
      expect(md["general.name"]).toBe("tiny");
      expect(md["general.file_type"]).toBe({ f32: 0, f16: 1, q8_0: 7 }[type]);
      expect(md[`${arch}.context_length`]).toBe(c.maxSeqLen);
      expect(md[`${arch}.embedding_length`]).toBe(64);
      expect(md[`${arch}.block_count`]).toBe(2);
      expect(md[`${arch}.feed_forward_length`]).toBe(128);
      expect(md[`${arch}.attention.head_count`]).toBe(4);
      expect(md[`${arch}.attention.head_count_kv`]).toBe(c.nKvHeads);
      if (arch === "gpt2") expect(md["gpt2.attention.layer_norm_epsilon"]).toBeCloseTo(1e-5, 10);
      else {
        expect(md[`${arch}.rope.freq_base`]).toBe(c.ropeTheta);
        expect(md[`${arch}.rope.dimension_count`]).toBe(arch === "llama" ? 32 : 16);
      }
      expect(md["tokenizer.ggml.model"]).toBe("gpt2");
      expect(md["tokenizer.ggml.pre"]).toBe("gpt-2");
      expect(md["tokenizer.ggml.eos_token_id"]).toBe(m.tokenizer.eosId);
      const tokens = md["tokenizer.ggml.tokens"] as string[];
      expect(tokens.length).toBe(c.vocabSize);
      if (m.tokenizer instanceof CharTokenizer) {
        expect(tokens.slice(0, 6)).toEqual(["<pad>", "<bos>", "<eos>", "Ġ", "!", '"']);
        expect(tokens[98]).toBe("Ċ");
        expect((md["tokenizer.ggml.token_type"] as number[]).slice(0, 4)).toEqual([3, 3, 3, 1]);
        expect(md["tokenizer.ggml.merges"]).toEqual([]);
        expect(md["tokenizer.ggml.add_bos_token"]).toBe(true);
      } else {
        const json = (m.tokenizer as HfTokenizer).toJSON() as { model: { merges: [string, string][] } };
        expect(md["tokenizer.ggml.merges"]).toEqual(json.model.merges.map((p) => p.join(" ")));
        expect(tokens[297]).toBe("<|endoftext|>");
        expect((md["tokenizer.ggml.token_type"] as number[])[297]).toBe(3);
        expect(md["tokenizer.ggml.add_bos_token"]).toBe(false);
      }

      const infos = new Map(parsed.tensorInfos.map((t) => [t.name, t]));
      // gpt2: 6 weights + 6 biases; qwen2: llama's 9 + 3 biases
      const perLayer = arch === "gpt2" ? 12 : arch === "qwen2" ? 12 : 9;
      // token_embd, output_norm (+ position_embd and output_norm.bias for gpt2), output when untied
      const top = 2 + (arch === "gpt2" ? 2 : 0) + (c.tieEmbeddings ? 0 : 1);
      expect(parsed.tensorInfos.length).toBe(2 * perLayer + top);
      const shape = (n: string) => infos.get(n)!.shape.map(Number);
      expect(shape("token_embd.weight")).toEqual([64, c.vocabSize]); // ggml order: fastest dimension first
      expect(shape("blk.1.ffn_down.weight")).toEqual([128, 64]);
      expect(shape("output_norm.weight")).toEqual([64]);
      if (arch === "gpt2") {
        expect(shape("blk.0.attn_qkv.weight")).toEqual([64, 128]); // q 64 + k 32 + v 32 (2 kv heads)
        expect(shape("position_embd.weight")).toEqual([64, 128]);
      } else expect(shape("blk.0.attn_k.weight")).toEqual([64, arch === "llama" ? 64 : 32]); // 2 kv heads × head width
      expect(infos.get("blk.0.ffn_up.weight")!.dtype).toBe(
        { f32: GgmlType.F32, f16: GgmlType.F16, q8_0: GgmlType.Q8_0 }[type],
      );
      expect(infos.get("output_norm.weight")!.dtype).toBe(GgmlType.F32);

      // values: read the bytes at tensorDataOffset + offset and decode them
      const file = readFileSync(path);
      const values = (n: string, count: number): Float32Array => {
        const info = infos.get(n)!;
        const start = Number(parsed.tensorDataOffset + info.offset);
        expect(start % 32).toBe(0);
        const bytesOf = { [GgmlType.F32]: 4 * count, [GgmlType.F16]: 2 * count, [GgmlType.Q8_0]: (count / 32) * 34 };
        const bytes = new Uint8Array(file.buffer, file.byteOffset + start, bytesOf[info.dtype as 0 | 1 | 8]);
        if (info.dtype === GgmlType.F32) return new Float32Array(bytes.slice().buffer);
        return info.dtype === GgmlType.F16 ? decodeF16(bytes) : decodeQ8_0(bytes);
      };
      const embed = m.model.embedTokens.weight.data;
      const got = values("token_embd.weight", embed.length);
      const tol = { f32: 0, f16: 1e-3, q8_0: 5e-3 }[type];
      let maxErr = 0;
      for (let i = 0; i < embed.length; i++) maxErr = Math.max(maxErr, Math.abs(got[i]! - embed[i]!));
      expect(maxErr).toBeLessThanOrEqual(tol * 0.2); // weights ~N(0, 0.02): bounds scale with max|w| < 0.2
      const norm = m.model.norm.weight.data;
      expect(Array.from(values("output_norm.weight", norm.length))).toEqual(Array.from(norm));
    }
  });

  it("writes llama q/k rows in llama.cpp's pair order and qwen2's as they are", async () => {
    const [llama, , qwen2] = models;
    const path = join(dir, "perm.gguf");
    exportGguf(path, llama!.model, llama!.tokenizer);
    const parsed = await gguf(path, { allowLocalFile: true });
    const info = parsed.tensorInfos.find((t) => t.name === "blk.0.attn_q.weight")!;
    const file = readFileSync(path);
    const q = new Float32Array(file.buffer.slice(file.byteOffset + Number(parsed.tensorDataOffset + info.offset)));
    const hf = (llama!.model.layers[0]!.selfAttn.qProj as unknown as { weight: { data: Float32Array } }).weight;
    const row = (a: Float32Array, r: number) => Array.from(a.subarray(r * 64, r * 64 + 64));
    // head 1 (rows 32..63), head dim 32: gguf row 32 + 2i + j is HF row 32 + 16j + i
    expect(row(q, 32 + 2 * 3 + 1)).toEqual(row(hf.data, 32 + 16 + 3));
    expect(row(q, 32 + 2 * 3)).toEqual(row(hf.data, 32 + 3));
    const p = permuteRope({ data: Float32Array.from([0, 1, 2, 3, 10, 11, 12, 13]), shape: [8, 1] }, 2, 4);
    expect(Array.from(p.data)).toEqual([0, 2, 1, 3, 10, 12, 11, 13]);

    const qpath = join(dir, "qwen.gguf");
    exportGguf(qpath, qwen2!.model, qwen2!.tokenizer);
    const qp = await gguf(qpath, { allowLocalFile: true });
    const qi = qp.tensorInfos.find((t) => t.name === "blk.0.attn_q.bias")!;
    const qfile = readFileSync(qpath);
    const bias = new Float32Array(
      qfile.buffer.slice(qfile.byteOffset + Number(qp.tensorDataOffset + qi.offset)),
      0,
      64,
    );
    const hfBias = (qwen2!.model.layers[0]!.selfAttn.qProj as unknown as { bias: { data: Float32Array } }).bias.data;
    expect(Array.from(bias)).toEqual(Array.from(hfBias));
  });

  it("encodes the GGUF header and alignment exactly", async () => {
    const bytes = encodeGguf({ "general.architecture": { type: "string", value: "llama" } }, [
      { name: "a", shape: [3], type: GgmlType.F32, data: new Uint8Array(new Float32Array([1, 2, 3]).buffer) },
      { name: "b", shape: [1, 2], type: GgmlType.F32, data: new Uint8Array(new Float32Array([4, 5]).buffer) },
    ]);
    const view = new DataView(bytes.buffer, bytes.byteOffset);
    expect(Buffer.from(bytes.subarray(0, 4)).toString("ascii")).toBe("GGUF");
    expect(view.getUint32(4, true)).toBe(3);
    expect(view.getBigUint64(8, true)).toBe(2n);
    expect(view.getBigUint64(16, true)).toBe(1n);
    const path = join(dir, "raw.gguf");
    writeFileSync(path, bytes);
    const parsed = await gguf(path, { allowLocalFile: true });
    expect(parsed.tensorInfos.map((t) => [t.name, t.shape.map(Number), Number(t.offset)])).toEqual([
      ["a", [3], 0],
      ["b", [2, 1], 32], // 12 bytes padded to 32
    ]);
    expect(Number(parsed.tensorDataOffset) % 32).toBe(0);
    expect(bytes.length).toBe(Number(parsed.tensorDataOffset) + 64);
    expect(() =>
      encodeGguf({}, [
        { name: "a", shape: [1], type: GgmlType.F32, data: new Uint8Array(4) },
        { name: "a", shape: [1], type: GgmlType.F32, data: new Uint8Array(4) },
      ]),
    ).toThrow(/given twice/);
  });
});

describe("refusals", () => {
  it("names what cannot be exported", () => {
    const [llama, , qwen2] = testModels(0);
    expect(() => exportGguf(join(dir, "x.gguf"), llama!.model, llama!.tokenizer, { type: "q4" as never })).toThrow(
      /type "q4"/,
    );
    const json = (fixtureTokenizer() as HfTokenizer).toJSON() as Record<string, unknown>;
    const whitespace = new HfTokenizer({ ...json, pre_tokenizer: { type: "Whitespace" } } as never, {}, { eosId: 297 });
    expect(() => exportGguf(join(dir, "x.gguf"), qwen2!.model, whitespace)).toThrow(/pre_tokenizer.*no llama.cpp/);
    expect(() => exportGguf(join(dir, "x.gguf"), llama!.model, whitespace)).toThrow(/300 ids, the model 99 rows/);
    const cfg = parseTransformerConfig({
      arch: "llama",
      vocabSize: 100,
      dModel: 32,
      nLayers: 1,
      nHeads: 2,
      nKvHeads: 2,
      dFf: 64,
      maxSeqLen: 16,
    });
    const diffusion = new DiffusionLM(cfg, new Rng(0), 99);
    expect(() => exportGguf(join(dir, "x.gguf"), diffusion, new CharTokenizer())).toThrow(/diffusion/);
    const wide = parseTransformerConfig({ ...cfg, qkvBias: true, headDim: 32 });
    expect(() => exportGguf(join(dir, "x.gguf"), new Transformer(wide, new Rng(0)), new CharTokenizer())).toThrow(
      /qwen2 needs nHeads × headDim = dModel/,
    );
    expect(gpt2ByteToUnicode()[32]).toBe("Ġ");
    expect(gpt2ByteToUnicode()[10]).toBe("Ċ");
  });
});
