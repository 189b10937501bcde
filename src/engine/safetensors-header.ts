/**
 * The safetensors header, checked against the file before any byte is read as a weight. A header can lie: a
 * negative or reversed offset would read header bytes as weights, overlapping ranges would give two tensors the
 * same bytes, a shape whose element count does not match its byte range would read past the tensor. We follow the
 * reference implementation (huggingface/safetensors `Metadata::validate`): every entry is an object with a known
 * dtype, a shape of non-negative integers and two integer offsets; the ranges, sorted, tile the data section
 * exactly (from byte 0, no overlap, no gap, ending at the end of the file); and each range holds exactly
 * dtype width × element count bytes. Every error is a CheckpointError naming the file and the tensor.
 */
import { CheckpointError, fmtShape } from "../util/index.js";

/** Element types we can read, with their byte widths. */
export const DTYPE_BYTES = { F32: 4, F16: 2, BF16: 2, F64: 8 } as const;
/** A dtype we can convert to float32. */
export type ReadableDtype = keyof typeof DTYPE_BYTES;

/** Largest header we accept (the reference implementation's limit: 100 MB). */
const MAX_HEADER_BYTES = 100_000_000;

/** One validated tensor entry: byte range relative to the start of the data section. */
export interface HeaderEntry {
  name: string;
  dtype: ReadableDtype;
  shape: number[];
  size: number;
  begin: number;
  end: number;
}

/** A validated header: its tensors in file order, the metadata and where the data section starts. */
export interface ParsedHeader {
  entries: HeaderEntry[];
  metadata: Record<string, string>;
  dataStart: number;
}

/** Reads and validates the header of safetensors `bytes`; `source` names the file in errors. */
export function parseHeader(bytes: Uint8Array, source: string): ParsedHeader {
  if (bytes.length < 8) {
    throw new CheckpointError(`${source}: file too short (${bytes.length} bytes) to be safetensors`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n64 = view.getBigUint64(0, true);
  if (n64 > BigInt(Math.min(bytes.length - 8, MAX_HEADER_BYTES))) {
    throw new CheckpointError(
      `${source}: header length ${n64} exceeds the file size ${bytes.length} (or the 100 MB header limit)`,
    );
  }
  const n = Number(n64);
  let header: unknown;
  try {
    header = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + 8, n).toString("utf8"));
  } catch (err) {
    throw new CheckpointError(`${source}: header is not valid JSON`, { cause: err });
  }
  if (typeof header !== "object" || header === null || Array.isArray(header)) {
    const what = header === null ? "null" : Array.isArray(header) ? "an array" : typeof header;
    throw new CheckpointError(`${source}: header is ${what}, not a JSON object of tensors`);
  }
  const dataStart = 8 + n;
  const dataLen = bytes.length - dataStart;
  const entries: HeaderEntry[] = [];
  let metadata: Record<string, string> = {};
  for (const [name, value] of Object.entries(header)) {
    if (name === "__metadata__") metadata = checkMetadata(value, source);
    else entries.push(checkEntry(name, value, source));
  }
  checkTiling(entries, dataLen, source);
  return { entries, metadata, dataStart };
}

/** `__metadata__` must map strings to strings. */
function checkMetadata(value: unknown, source: string): Record<string, string> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new CheckpointError(`${source}: __metadata__ must be an object of strings`);
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== "string") {
      throw new CheckpointError(`${source}: __metadata__ field "${k}" is ${JSON.stringify(v)}, not a string`);
    }
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** One `name: { dtype, shape, data_offsets }` entry, type-checked, its byte count checked against its shape. */
function checkEntry(name: string, value: unknown, source: string): HeaderEntry {
  const where = `${source}: tensor "${name}"`;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new CheckpointError(`${where}: entry is ${JSON.stringify(value)}, not { dtype, shape, data_offsets }`);
  }
  const e = value as Record<string, unknown>;
  const dtype = e.dtype;
  if (typeof dtype !== "string" || !Object.hasOwn(DTYPE_BYTES, dtype)) {
    const shown = typeof dtype === "string" ? dtype : JSON.stringify(dtype);
    throw new CheckpointError(`${where} has dtype ${shown}; only F32, F16, BF16 and F64 can be read`);
  }
  const shape = e.shape;
  if (!Array.isArray(shape) || !shape.every(isCount)) {
    throw new CheckpointError(`${where}: shape ${JSON.stringify(shape)} is not a list of non-negative integers`);
  }
  const offsets = e.data_offsets;
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isCount)) {
    throw new CheckpointError(
      `${where}: data_offsets ${JSON.stringify(offsets)} is not a pair of non-negative integers`,
    );
  }
  const [begin, end] = offsets as [number, number];
  if (end < begin) throw new CheckpointError(`${where}: data_offsets [${begin}, ${end}] end before they begin`);
  const size = (shape as number[]).reduce((a, b) => a * b, 1);
  const width = DTYPE_BYTES[dtype as ReadableDtype];
  if (!Number.isSafeInteger(size * width) || end - begin !== size * width) {
    throw new CheckpointError(
      `${where} with shape ${fmtShape(shape as number[])} and dtype ${dtype} needs ` +
        `${size * width} bytes but its offsets [${begin}, ${end}] give ${end - begin}`,
    );
  }
  return { name, dtype: dtype as ReadableDtype, shape: [...(shape as number[])], size, begin, end };
}

/** The byte ranges, sorted, must cover [0, dataLen) exactly: in bounds, no overlap, no gap, nothing after. */
function checkTiling(entries: readonly HeaderEntry[], dataLen: number, source: string): void {
  const sorted = [...entries].sort((a, b) => a.begin - b.begin || a.end - b.end);
  let at = 0;
  let prev: HeaderEntry | null = null;
  for (const e of sorted) {
    const where = `${source}: tensor "${e.name}"`;
    if (e.end > dataLen) {
      throw new CheckpointError(
        `${where} with shape ${fmtShape(e.shape)} and dtype ${e.dtype} needs ` +
          `${e.end - e.begin} bytes but its offsets [${e.begin}, ${e.end}] run past the data section ` +
          `(${dataLen} bytes)`,
      );
    }
    if (e.begin < at) {
      const other = `tensor "${prev!.name}" [${prev!.begin}, ${prev!.end}]`;
      throw new CheckpointError(`${where} [${e.begin}, ${e.end}] overlaps ${other}`);
    }
    if (e.begin > at) {
      throw new CheckpointError(
        `${source}: data bytes [${at}, ${e.begin}) before tensor "${e.name}" ` + "belong to no tensor",
      );
    }
    at = e.end;
    prev = e;
  }
  if (at !== dataLen) {
    const last = prev ? ` ("${prev.name}")` : "";
    throw new CheckpointError(
      `${source}: data bytes [${at}, ${dataLen}) after the last tensor${last} ` + "belong to no tensor",
    );
  }
}

function isCount(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}
