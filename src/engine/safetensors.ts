/**
 * Safetensors I/O (https://github.com/huggingface/safetensors): the weight format of checkpoints.
 *
 * Layout: an 8-byte little-endian header length N, N bytes of JSON
 * `{ name: { dtype, shape, data_offsets: [begin, end] }, "__metadata__": { key: string } }` (padded with spaces
 * to a multiple of 8), then the raw little-endian tensor bytes. We write F32 only; we read F32, F16, BF16 and F64
 * (converted to float32). Writes are atomic (write, fsync, rename), so a crash never leaves half a file.
 */
import { readFileSync } from "node:fs";
import { CheckpointError, fmtShape, writeFileAtomic } from "../util/index.js";
import { tensor, type Tensor } from "./tensor.js";
import { DTYPE_BYTES, parseHeader, type ReadableDtype } from "./safetensors-header.js";

/** One tensor as stored: its shape and float32 values, plus the dtype it had on disk. */
export interface RawTensor {
  shape: number[];
  data: Float32Array;
  dtype: string;
}

/** Serialises float32 tensors (anything with `shape` and `data`) and string metadata to safetensors bytes. */
export function encodeSafetensors(
  tensors: Record<string, { shape: readonly number[]; data: Float32Array }>,
  metadata: Record<string, string> = {},
): Uint8Array {
  const names = Object.keys(tensors).sort();
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length > 0) header.__metadata__ = metadata;
  let offset = 0;
  for (const name of names) {
    const t = tensors[name]!;
    const size = t.shape.reduce((a, b) => a * b, 1);
    if (size !== t.data.length) {
      throw new CheckpointError(
        `saveSafetensors: tensor "${name}" has shape ${fmtShape(t.shape)} (${size} values) but ${t.data.length} values`,
      );
    }
    header[name] = { dtype: "F32", shape: [...t.shape], data_offsets: [offset, offset + 4 * size] };
    offset += 4 * size;
  }
  let json = JSON.stringify(header);
  json += " ".repeat((8 - ((8 + Buffer.byteLength(json)) % 8)) % 8);
  const headerBytes = Buffer.from(json, "utf8");
  const out = new Uint8Array(8 + headerBytes.length + offset);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  let pos = 8 + headerBytes.length;
  for (const name of names) {
    const d = tensors[name]!.data;
    out.set(new Uint8Array(d.buffer, d.byteOffset, d.byteLength), pos); // float32 is little-endian on every target we run on
    pos += d.byteLength;
  }
  return out;
}

/** Options of reading safetensors. */
export interface SafetensorsReadOptions {
  /** Accept NaN and ±Inf weights (default false: a non-finite weight is a CheckpointError naming the tensor). */
  allowNonFinite?: boolean;
}

/**
 * Parses safetensors bytes into float32 tensors and the metadata; `source` names the file in errors. The header is
 * checked against the file before any byte is read as a weight (see ./safetensors-header.ts).
 */
export function decodeSafetensors(
  bytes: Uint8Array,
  source = "safetensors",
  opts: SafetensorsReadOptions = {},
): { tensors: Record<string, RawTensor>; metadata: Record<string, string> } {
  const { entries, metadata, dataStart } = parseHeader(bytes, source);
  const tensors: Record<string, RawTensor> = Object.create(null) as Record<string, RawTensor>;
  for (const e of entries) {
    const data = toFloat32(bytes, dataStart + e.begin, e.size, e.dtype);
    if (!opts.allowNonFinite) {
      const bad = data.findIndex((v) => !Number.isFinite(v));
      if (bad >= 0) {
        throw new CheckpointError(
          `${source}: tensor "${e.name}" has a non-finite weight (${data[bad]}) ` +
            `at flat index ${bad}; ` +
            "NaN/Inf weights are refused unless allowed (option allowNonFinite; rlvr eval/sample --allow-non-finite)",
        );
      }
    }
    tensors[e.name] = { shape: e.shape, data, dtype: e.dtype };
  }
  return { tensors: { ...tensors }, metadata };
}

/** Writes tensors (float32) and string metadata to `path` atomically. */
export function saveSafetensors(
  path: string,
  tensors: Record<string, Tensor>,
  metadata: Record<string, string> = {},
): void {
  writeFileAtomic(path, encodeSafetensors(tensors, metadata));
}

/** Reads a safetensors file into float32 tensors (no gradient); F16/BF16/F64 are converted. */
export function loadSafetensors(path: string, opts: SafetensorsReadOptions = {}): Record<string, Tensor> {
  const { tensors } = readSafetensors(path, opts);
  const out: Record<string, Tensor> = {};
  for (const [name, t] of Object.entries(tensors)) out[name] = tensor(t.data, t.shape);
  return out;
}

/** Reads a safetensors file into raw float32 arrays plus metadata, without building tensors. */
export function readSafetensors(
  path: string,
  opts: SafetensorsReadOptions = {},
): { tensors: Record<string, RawTensor>; metadata: Record<string, string> } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    throw new CheckpointError(`cannot read safetensors file ${path}`, { cause: err });
  }
  return decodeSafetensors(bytes, path, opts);
}

/** Converts `size` little-endian elements of `dtype` at byte offset `at` to float32. */
function toFloat32(bytes: Uint8Array, at: number, size: number, dtype: ReadableDtype): Float32Array {
  const out = new Float32Array(size);
  const view = new DataView(bytes.buffer, bytes.byteOffset + at, size * DTYPE_BYTES[dtype]);
  switch (dtype) {
    case "F32":
      for (let i = 0; i < size; i++) out[i] = view.getFloat32(4 * i, true);
      break;
    case "F64":
      for (let i = 0; i < size; i++) out[i] = view.getFloat64(8 * i, true);
      break;
    case "BF16": {
      // bf16 is the top half of a float32.
      const u32 = new Uint32Array(out.buffer);
      for (let i = 0; i < size; i++) u32[i] = view.getUint16(2 * i, true) << 16;
      break;
    }
    case "F16":
      for (let i = 0; i < size; i++) out[i] = halfToFloat(view.getUint16(2 * i, true));
      break;
  }
  return out;
}

/** IEEE 754 binary16 to a JS number (subnormals, infinities and NaN included). */
function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}
