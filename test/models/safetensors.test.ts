import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  decodeSafetensors,
  encodeSafetensors,
  loadSafetensors,
  readSafetensors,
  saveSafetensors,
  tensor,
} from "../../src/engine/index.js";
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
    expect(() => encodeSafetensors({ w: { shape: [2, 3], data: new Float32Array(5) } })).toThrow(
      /"w" has shape \(2, 3\) \(6 values\) but 5 values/,
    );
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

/** A safetensors file from a header object (written as given, lies included) and a data section. */
function file(header: unknown, data: Uint8Array): Uint8Array {
  const json = Buffer.from(typeof header === "string" ? header : JSON.stringify(header));
  const out = Buffer.alloc(8 + json.length + data.length);
  out.writeBigUInt64LE(BigInt(json.length), 0);
  json.copy(out, 8);
  out.set(data, 8 + json.length);
  return out;
}
const f32 = (...v: number[]) => new Uint8Array(Float32Array.from(v).buffer);
const entry = (shape: number[], begin: number, end: number, dtype = "F32") => ({
  dtype,
  shape,
  data_offsets: [begin, end],
});

describe("safetensors headers that lie", () => {
  const data = f32(1, 2, 3, 4); // 16 bytes: two (2,) tensors back to back
  const cases: Array<[string, unknown, RegExp]> = [
    // a negative begin used to read header bytes as weights
    [
      "negative offset",
      { a: entry([2], -8, 0), b: entry([2], 8, 16) },
      /tensor "a": data_offsets \[-8,0\] is not a pair of non-negative integers/,
    ],
    [
      "reversed offsets",
      { a: entry([2], 8, 0), b: entry([2], 8, 16) },
      /tensor "a": data_offsets \[8, 0\] end before they begin/,
    ],
    [
      "overlapping ranges",
      { a: entry([2], 0, 8), b: entry([2], 4, 12), c: entry([1], 12, 16) },
      /tensor "b" \[4, 12\] overlaps tensor "a" \[0, 8\]/,
    ],
    ["same range twice", { a: entry([4], 0, 16), b: entry([4], 0, 16) }, /tensor "b" \[0, 16\] overlaps tensor "a"/],
    [
      "past the end",
      { a: entry([2], 0, 8), b: entry([4], 8, 24) },
      /tensor "b" .* run past the data section \(16 bytes\)/,
    ],
    [
      "gap between tensors",
      { a: entry([1], 0, 4), b: entry([2], 8, 16) },
      /data bytes \[4, 8\) before tensor "b" belong to no tensor/,
    ],
    [
      "bytes after the last tensor",
      { a: entry([2], 0, 8) },
      /data bytes \[8, 16\) after the last tensor \("a"\) belong to no tensor/,
    ],
    [
      "shape larger than its bytes",
      { a: entry([3], 0, 8), b: entry([2], 8, 16) },
      /tensor "a" with shape \(3\) and dtype F32 needs 12 bytes but its offsets \[0, 8\] give 8/,
    ],
    [
      "dtype width mismatch",
      { a: entry([2], 0, 8, "F64"), b: entry([2], 8, 16) },
      /tensor "a" with shape \(2\) and dtype F64 needs 16 bytes/,
    ],
    ["fractional offset", { a: entry([2], 0, 8.5), b: entry([2], 8, 16) }, /tensor "a": data_offsets \[0,8\.5\]/],
    [
      "negative dimension",
      { a: entry([-2], 0, 8), b: entry([2], 8, 16) },
      /tensor "a": shape \[-2\] is not a list of non-negative integers/,
    ],
    ["overflowing shape", { a: entry([2 ** 40, 2 ** 40], 0, 16) }, /tensor "a" with shape .* needs .* bytes/],
    ["unknown dtype", { a: entry([2], 0, 8, "I64"), b: entry([2], 8, 16) }, /tensor "a" has dtype I64/],
    ["dtype not a string", { a: { ...entry([2], 0, 8), dtype: 4 }, b: entry([2], 8, 16) }, /tensor "a" has dtype 4/],
    ["entry not an object", { a: null, b: entry([2], 8, 16) }, /tensor "a": entry is null/],
    ["null header", "null", /header is null, not a JSON object of tensors/],
    ["array header", "[]", /header is an array/],
    [
      "metadata not strings",
      { __metadata__: { a: 1 }, x: entry([4], 0, 16) },
      /__metadata__ field "a" is 1, not a string/,
    ],
  ];
  it.each(cases)("%s: a CheckpointError naming the tensor", (_name, header, pattern) => {
    expect(() => decodeSafetensors(file(header, data), "lie.safetensors")).toThrow(CheckpointError);
    expect(() => decodeSafetensors(file(header, data), "lie.safetensors")).toThrow(pattern);
  });
  it("a header length past the file is refused before parsing", () => {
    const bytes = Buffer.from(file({ a: entry([4], 0, 16) }, data));
    bytes.writeBigUInt64LE(2n ** 63n, 0);
    expect(() => decodeSafetensors(bytes, "lie.safetensors")).toThrow(
      /header length 9223372036854775808 exceeds the file size/,
    );
  });
  it("an honest header with a zero-size tensor loads", () => {
    const { tensors } = decodeSafetensors(file({ e: entry([0, 3], 0, 0), a: entry([4], 0, 16) }, data));
    expect(Array.from(tensors.a!.data)).toEqual([1, 2, 3, 4]);
    expect(tensors.e!.shape).toEqual([0, 3]);
  });
  it("mutated offsets and shapes either load exactly the bytes they name or throw a CheckpointError (property)", () => {
    const outcomes = { loaded: 0, refused: 0 };
    const lie = fc.record({
      i: fc.nat(2),
      field: fc.constantFrom("begin", "end", "shape"),
      delta: fc.integer({ min: -9, max: 9 }),
    });
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 3 }),
        fc.option(lie),
        (sizes, mutation) => {
          let at = 0;
          const specs = sizes.map((n) => ({ shape: [n], begin: at, end: (at += 4 * n) }));
          const values = Array.from({ length: at / 4 }, (_, k) => k + 0.5);
          if (mutation) {
            const s = specs[mutation.i % specs.length]!;
            if (mutation.field === "shape") s.shape = [s.shape[0]! + mutation.delta];
            else s[mutation.field] += mutation.delta;
          }
          const header = Object.fromEntries(specs.map((t, i) => [`t${i}`, entry(t.shape, t.begin, t.end)]));
          let out;
          try {
            out = decodeSafetensors(file(header, f32(...values)), "fuzz.safetensors").tensors;
          } catch (err) {
            expect(err).toBeInstanceOf(CheckpointError);
            outcomes.refused++;
            return;
          }
          outcomes.loaded++;
          // it loaded: every tensor holds exactly its own bytes, and together they hold every byte once
          expect(specs.reduce((n, t) => n + (t.end - t.begin), 0)).toBe(4 * values.length);
          specs.forEach((t, i) => expect(Array.from(out[`t${i}`]!.data)).toEqual(values.slice(t.begin / 4, t.end / 4)));
        },
      ),
      { seed: 8, numRuns: 600 },
    );
    expect(outcomes.loaded).toBeGreaterThan(50);
    expect(outcomes.refused).toBeGreaterThan(50);
  });
});

describe("non-finite weights", () => {
  const half = (h: number) => new Uint8Array(Uint16Array.from([h, 0x3c00]).buffer); // (2,) F16: [h, 1.0]
  const cases: Array<[string, Uint8Array, string, RegExp]> = [
    ["F32 NaN", f32(1, NaN), "F32", /tensor "w" has a non-finite weight \(NaN\) at flat index 1/],
    ["F32 +Inf", f32(Infinity, 1), "F32", /\(Infinity\) at flat index 0/],
    ["F32 -Inf", f32(1, -Infinity), "F32", /\(-Infinity\) at flat index 1/],
    ["F16 +Inf", half(0x7c00), "F16", /\(Infinity\) at flat index 0/],
    ["F16 NaN", half(0x7e00), "F16", /\(NaN\) at flat index 0/],
    ["BF16 NaN", new Uint8Array(Uint16Array.from([0x3f80, 0x7fc0]).buffer), "BF16", /\(NaN\) at flat index 1/],
    [
      "F64 overflowing float32",
      new Uint8Array(Float64Array.from([1e300, 1]).buffer),
      "F64",
      /\(Infinity\) at flat index 0/,
    ],
  ];
  it.each(cases)("%s is a CheckpointError unless allowed", (_name, bytes, dtype, pattern) => {
    const st = file({ w: entry([2], 0, bytes.length, dtype) }, bytes);
    expect(() => decodeSafetensors(st, "nan.safetensors")).toThrow(pattern);
    const { tensors } = decodeSafetensors(st, "nan.safetensors", { allowNonFinite: true });
    expect(tensors.w!.data.some((v) => !Number.isFinite(v))).toBe(true);
  });
  it("readSafetensors and loadSafetensors pass the option through", () => {
    const dir = mkdtempSync(join(tmpdir(), "rlvr-st-"));
    writeFileSync(join(dir, "n.safetensors"), file({ w: entry([2], 0, 8) }, f32(NaN, 1)));
    expect(() => loadSafetensors(join(dir, "n.safetensors"))).toThrow(/non-finite/);
    expect(Number.isNaN(loadSafetensors(join(dir, "n.safetensors"), { allowNonFinite: true }).w!.toArray()[0])).toBe(
      true,
    );
  });
});
