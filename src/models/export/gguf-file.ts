/**
 * A GGUF version 3 file writer: header, typed key/value metadata, tensor infos, then the aligned tensor data.
 *
 * Layout (ggml-org/ggml docs/gguf.md, and `gguf_write_to_buf` in ggml/src/gguf.cpp): the magic "GGUF", u32 version
 * 3, u64 tensor count, u64 metadata count; each metadata entry is a string key, a u32 value type and the value
 * (strings are a u64 byte length and UTF-8 bytes, arrays a u32 item type, a u64 length and the items); each tensor
 * info is its name, u32 number of dimensions, u64 dimensions in ggml order (fastest-varying first, i.e. the reverse
 * of PyTorch's shape), u32 ggml type and the u64 offset of its data from the start of the data section. The data
 * section starts at the next multiple of `general.alignment` (32) and each tensor's data is padded to it.
 *
 * `@huggingface/gguf` 0.4.6 reads GGUF files but writes only a metadata header (`serializeGgufMetadata`, which pads
 * right after the metadata and so cannot be followed by tensor infos), so this file writes the whole format; the
 * tests read its output back with `@huggingface/gguf` and load it with llama.cpp (node-llama-cpp).
 */
import { writeFileAtomic } from "../../util/index.js";

/** GGML tensor types used by the export (ggml.h `enum ggml_type`). */
export const GgmlType = { F32: 0, F16: 1, Q8_0: 8 } as const;
export type GgmlTypeId = (typeof GgmlType)[keyof typeof GgmlType];

/** GGUF metadata value types (gguf.h `enum gguf_type`). */
const T = { u8: 0, i8: 1, u16: 2, i16: 3, u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9, u64: 10, i64: 11 };

/** A typed metadata value. */
export type GgufValue =
  | { type: "u32" | "i32" | "f32" | "u64"; value: number }
  | { type: "bool"; value: boolean }
  | { type: "string"; value: string }
  | { type: "array"; itemType: "string"; value: string[] }
  | { type: "array"; itemType: "i32" | "f32"; value: number[] };

/** One tensor: its name, PyTorch-order shape (the writer reverses it), ggml type and encoded bytes. */
export interface GgufTensor {
  name: string;
  shape: number[];
  type: GgmlTypeId;
  data: Uint8Array;
}

/** Default alignment of the data section (GGUF_DEFAULT_ALIGNMENT). */
export const GGUF_ALIGNMENT = 32;

/** Grows a byte buffer of little-endian values. */
class ByteSink {
  private buf = new Uint8Array(1 << 16);
  private view = new DataView(this.buf.buffer);
  length = 0;

  private reserve(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }
  u32(v: number): void {
    this.reserve(4);
    this.view.setUint32(this.length, v, true);
    this.length += 4;
  }
  i32(v: number): void {
    this.reserve(4);
    this.view.setInt32(this.length, v, true);
    this.length += 4;
  }
  f32(v: number): void {
    this.reserve(4);
    this.view.setFloat32(this.length, v, true);
    this.length += 4;
  }
  u64(v: number): void {
    this.reserve(8);
    this.view.setBigUint64(this.length, BigInt(v), true);
    this.length += 8;
  }
  u8(v: number): void {
    this.reserve(1);
    this.buf[this.length++] = v;
  }
  bytes(b: Uint8Array): void {
    this.reserve(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }
  string(s: string): void {
    const b = Buffer.from(s, "utf8");
    this.u64(b.length);
    this.bytes(b);
  }
  pad(alignment: number): void {
    const n = (alignment - (this.length % alignment)) % alignment;
    this.reserve(n);
    this.buf.fill(0, this.length, this.length + n);
    this.length += n;
  }
  result(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

function writeValue(out: ByteSink, v: GgufValue): void {
  switch (v.type) {
    case "u32":
      return out.u32(v.value);
    case "i32":
      return out.i32(v.value);
    case "f32":
      return out.f32(v.value);
    case "u64":
      return out.u64(v.value);
    case "bool":
      return out.u8(v.value ? 1 : 0);
    case "string":
      return out.string(v.value);
    case "array":
      out.u32(T[v.itemType]);
      out.u64(v.value.length);
      for (const item of v.value) {
        if (v.itemType === "string") out.string(item as string);
        else if (v.itemType === "i32") out.i32(item as number);
        else out.f32(item as number);
      }
  }
}

/** The bytes of a GGUF v3 file with `metadata` (in insertion order) and `tensors` (in order). */
export function encodeGguf(metadata: Record<string, GgufValue>, tensors: GgufTensor[]): Uint8Array {
  const names = new Set<string>();
  for (const t of tensors) {
    if (names.has(t.name)) throw new Error(`GGUF: tensor "${t.name}" given twice`);
    names.add(t.name);
  }
  const out = new ByteSink();
  out.bytes(Buffer.from("GGUF", "ascii"));
  out.u32(3);
  out.u64(tensors.length);
  out.u64(Object.keys(metadata).length);
  for (const [key, value] of Object.entries(metadata)) {
    out.string(key);
    out.u32(T[value.type]);
    writeValue(out, value);
  }
  let offset = 0;
  for (const t of tensors) {
    out.string(t.name);
    out.u32(t.shape.length);
    for (const d of [...t.shape].reverse()) out.u64(d); // ggml order: fastest-varying dimension first
    out.u32(t.type);
    out.u64(offset);
    offset += t.data.length + ((GGUF_ALIGNMENT - (t.data.length % GGUF_ALIGNMENT)) % GGUF_ALIGNMENT);
  }
  out.pad(GGUF_ALIGNMENT);
  for (const t of tensors) {
    out.bytes(t.data);
    out.pad(GGUF_ALIGNMENT);
  }
  return out.result();
}

/** Writes a GGUF file atomically. */
export function writeGguf(path: string, metadata: Record<string, GgufValue>, tensors: GgufTensor[]): void {
  writeFileAtomic(path, encodeGguf(metadata, tensors));
}
