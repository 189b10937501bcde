import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeSafetensors, encodeSafetensors, loadSafetensors, readSafetensors, saveSafetensors, tensor } from "../../src/engine/index.js";
import { CheckpointError } from "../../src/util/index.js";

const FIXTURES = join(import.meta.dirname, "..", "fixtures", "parity");

describe("safetensors", () => {
  it("reads F32, F16 and BF16 written by the Python safetensors library", () => {
    const expected = JSON.parse(readFileSync(join(FIXTURES, "dtypes.json"), "utf8")) as Record<string, number[]>;
    const { tensors, metadata } = readSafetensors(join(FIXTURES, "dtypes.safetensors"));
    expect(metadata).toEqual({ made_by: "make-parity-fixture.py" });
    for (const [name, values] of Object.entries(expected)) {
      expect(tensors[name]!.shape).toEqual([2, 4]);
      expect(Array.from(tensors[name]!.data)).toEqual(values.map(Math.fround));
    }
    expect(tensors["bf16"]!.dtype).toBe("BF16");
    expect(tensors["f16"]!.dtype).toBe("F16");
  });

  it("round-trips F32 tensors and metadata through a file, with an 8-byte aligned header", () => {
    const dir = mkdtempSync(join(tmpdir(), "rlvr-st-"));
    const a = tensor([1, -2.5, 3e-8, 4], [2, 2]);
    const b = tensor([7], []);
    saveSafetensors(join(dir, "x.safetensors"), { "layer.a": a, b }, { note: "hi" });
    const bytes = readFileSync(join(dir, "x.safetensors"));
    expect(Number(bytes.readBigUInt64LE(0)) % 8).toBe(0);
    const back = loadSafetensors(join(dir, "x.safetensors"));
    expect(back["layer.a"]!.shape).toEqual([2, 2]);
    expect(back["layer.a"]!.toArray()).toEqual(a.toArray());
    expect(back["b"]!.shape).toEqual([]);
    expect(readSafetensors(join(dir, "x.safetensors")).metadata).toEqual({ note: "hi" });
  });

  it("names the tensor and its shape when the bytes do not match", () => {
    const bytes = encodeSafetensors({ w: { shape: [2, 3], data: new Float32Array(6) } });
    const truncated = bytes.slice(0, bytes.length - 4);
    expect(() => decodeSafetensors(truncated, "w.safetensors")).toThrow(CheckpointError);
    expect(() => decodeSafetensors(truncated, "w.safetensors")).toThrow(/tensor "w" with shape \(2, 3\)/);
    expect(() => encodeSafetensors({ w: { shape: [2, 3], data: new Float32Array(5) } })).toThrow(/"w" has shape \(2, 3\) \(6 values\) but 5 values/);
  });

  it("rejects dtypes it cannot read and files that are not safetensors", () => {
    const header = Buffer.from(JSON.stringify({ i: { dtype: "I64", shape: [1], data_offsets: [0, 8] } }));
    const file = Buffer.concat([Buffer.alloc(8), header, Buffer.alloc(8)]);
    file.writeBigUInt64LE(BigInt(header.length), 0);
    expect(() => decodeSafetensors(file)).toThrow(/"i" has dtype I64/);
    const dir = mkdtempSync(join(tmpdir(), "rlvr-st-"));
    writeFileSync(join(dir, "bad.safetensors"), "not a safetensors file at all");
    expect(() => readSafetensors(join(dir, "bad.safetensors"))).toThrow(CheckpointError);
    expect(() => readSafetensors(join(dir, "missing.safetensors"))).toThrow(/cannot read/);
  });
});
