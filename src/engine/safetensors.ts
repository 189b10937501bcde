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

/** Element types we can read, with their byte widths. */
const DTYPE_BYTES = { F32: 4, F16: 2, BF16: 2, F64: 8 } as const;
type ReadableDtype = keyof typeof DTYPE_BYTES;

/** One tensor as stored: its shape and float32 values, plus the dtype it had on disk. */
export interface RawTensor {
  shape: number[];
  data: Float32Array;
  dtype: string;
}

interface HeaderEntry {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

/** Serialises float32 tensors (anything with `shape` and `data`) and string metadata to safetensors bytes. */
export function encodeSafetensors(tensors: Record<string, { shape: readonly number[]; data: Float32Array }>, metadata: Record<string, string> = {}): Uint8Array {
  const names = Object.keys(tensors).sort();
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length > 0) header.__metadata__ = metadata;
  let offset = 0;
  for (const name of names) {
    const t = tensors[name]!;
    const size = t.shape.reduce((a, b) => a * b, 1);
    if (size !== t.data.length) {
      throw new CheckpointError(`saveSafetensors: tensor "${name}" has shape ${fmtShape(t.shape)} (${size} values) but ${t.data.length} values`);
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

/** Parses safetensors bytes into float32 tensors and the metadata; `source` names the file in errors. */
export function decodeSafetensors(bytes: Uint8Array, source = "safetensors"): { tensors: Record<string, RawTensor>; metadata: Record<string, string> } {
  if (bytes.length < 8) throw new CheckpointError(`${source}: file too short (${bytes.length} bytes) to be safetensors`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(view.getBigUint64(0, true));
  if (n > bytes.length - 8) throw new CheckpointError(`${source}: header length ${n} exceeds the file size ${bytes.length}`);
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + 8, n).toString("utf8")) as Record<string, unknown>;
  } catch (err) {
    throw new CheckpointError(`${source}: header is not valid JSON`, { cause: err });
  }
  const dataStart = 8 + n;
  const metadata = (header.__metadata__ ?? {}) as Record<string, string>;
  const tensors: Record<string, RawTensor> = {};
  for (const [name, value] of Object.entries(header)) {
    if (name === "__metadata__") continue;
    const e = value as HeaderEntry;
    const width = DTYPE_BYTES[e.dtype as ReadableDtype];
    if (width === undefined) {
      throw new CheckpointError(`${source}: tensor "${name}" has dtype ${e.dtype}; only F32, F16, BF16 and F64 can be read`);
    }
    const size = e.shape.reduce((a, b) => a * b, 1);
    const [begin, end] = e.data_offsets;
    if (end - begin !== size * width || dataStart + end > bytes.length) {
      throw new CheckpointError(`${source}: tensor "${name}" with shape ${fmtShape(e.shape)} and dtype ${e.dtype} needs ${size * width} bytes but its offsets [${begin}, ${end}] give ${end - begin} (file ${bytes.length} bytes)`);
    }
    tensors[name] = { shape: e.shape, data: toFloat32(bytes, dataStart + begin, size, e.dtype as ReadableDtype), dtype: e.dtype };
  }
  return { tensors, metadata };
}

/** Writes tensors (float32) and string metadata to `path` atomically. */
export function saveSafetensors(path: string, tensors: Record<string, Tensor>, metadata: Record<string, string> = {}): void {
  writeFileAtomic(path, encodeSafetensors(tensors, metadata));
}

/** Reads a safetensors file into float32 tensors (no gradient); F16/BF16/F64 are converted. */
export function loadSafetensors(path: string): Record<string, Tensor> {
  const { tensors } = readSafetensors(path);
  const out: Record<string, Tensor> = {};
  for (const [name, t] of Object.entries(tensors)) out[name] = tensor(t.data, t.shape);
  return out;
}

/** Reads a safetensors file into raw float32 arrays plus metadata, without building tensors. */
export function readSafetensors(path: string): { tensors: Record<string, RawTensor>; metadata: Record<string, string> } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    throw new CheckpointError(`cannot read safetensors file ${path}`, { cause: err });
  }
  return decodeSafetensors(bytes, path);
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
