/**
 * RGB images for the vision policy (docs/vision.md): decoding PNG and JPEG files (pngjs, jpeg-js: pure JS, no native
 * download at install), bilinear resizing, and writing PNG for the scene generator.
 *
 * An `RgbImage` holds (H, W, 3) float32 values in [0, 1], row-major, channels last. It carries a `ref` (a file path
 * or a generator id such as "vision-scene/train/3") so a rollout record can name its images without copying pixels:
 * `toJSON()` writes the ref and the size only. Alpha is composited over white (the scene generator's background), and
 * greyscale or palette PNGs come out as RGB (pngjs expands them).
 *
 * Resizing follows PyTorch's `F.interpolate(mode="bilinear", align_corners=False)` without antialiasing: source
 * coordinate (i + 0.5) * in / out - 0.5, clamped at the edges. Departure from Qwen2-VL: images are resized to one
 * fixed square size (the encoder's), not to a multiple of the patch size that keeps the aspect ratio.
 */
import { readFileSync } from "node:fs";
import { extname } from "node:path";
import jpeg from "jpeg-js";
import { PNG } from "pngjs";
import { ConfigError } from "./errors.js";
import { writeFileAtomic } from "./files.js";

/** Largest width or height accepted when decoding (a bigger header is a decompression bomb or a corrupt file). */
export const MAX_IMAGE_SIDE = 8192;

/** An (H, W, 3) float image in [0, 1] with the reference it came from. */
export class RgbImage {
  /** (H * W * 3) values, row-major, channels last. */
  readonly data: Float32Array;

  constructor(
    readonly width: number,
    readonly height: number,
    data?: Float32Array,
    /** Where the image came from (file path or generator id); kept in rollout records instead of the pixels. */
    readonly ref = "",
  ) {
    if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1)
      throw new ConfigError(`RgbImage: size must be positive integers, got ${width}x${height}`);
    const n = width * height * 3;
    if (data && data.length !== n)
      throw new ConfigError(`RgbImage: ${data.length} values do not fill ${width}x${height}x3 = ${n}`);
    this.data = data ?? new Float32Array(n);
  }

  /** Channel c of pixel (x, y). */
  at(x: number, y: number, c: number): number {
    return this.data[(y * this.width + x) * 3 + c]!;
  }

  /** The same pixels under another ref. */
  withRef(ref: string): RgbImage {
    return new RgbImage(this.width, this.height, this.data, ref);
  }

  /** The ref and size only: rollout records and samples.jsonl name images, they do not copy them. */
  toJSON(): { ref: string; width: number; height: number } {
    return { ref: this.ref, width: this.width, height: this.height };
  }
}

/** Decodes PNG or JPEG bytes (detected by their magic numbers) into an RgbImage. */
export function decodeImage(bytes: Uint8Array, ref = ""): RgbImage {
  const name = ref || "image";
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const isPng = b.length >= 8 && b.readUInt32BE(0) === 0x89504e47;
  const isJpeg = b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff;
  if (!isPng && !isJpeg) throw new ConfigError(`${name}: not a PNG or JPEG file (unknown magic number)`);
  let rgba: { width: number; height: number; data: Uint8Array };
  try {
    rgba = isPng
      ? PNG.sync.read(b)
      : jpeg.decode(b, { useTArray: true, formatAsRGBA: true, maxResolutionInMP: MAX_IMAGE_SIDE ** 2 / 1e6 });
  } catch (err) {
    throw new ConfigError(`${name}: cannot decode ${isPng ? "PNG" : "JPEG"} (${(err as Error).message})`, {
      cause: err,
    });
  }
  if (rgba.width > MAX_IMAGE_SIDE || rgba.height > MAX_IMAGE_SIDE)
    throw new ConfigError(`${name}: ${rgba.width}x${rgba.height} exceeds ${MAX_IMAGE_SIDE} pixels a side`);
  const img = new RgbImage(rgba.width, rgba.height, undefined, ref);
  const n = rgba.width * rgba.height;
  for (let i = 0; i < n; i++) {
    const a = rgba.data[i * 4 + 3]! / 255;
    for (let c = 0; c < 3; c++) img.data[i * 3 + c] = (rgba.data[i * 4 + c]! / 255) * a + (1 - a); // over white
  }
  return img;
}

/** Reads a .png, .jpg or .jpeg file; the path becomes the image's ref. */
export function readImage(path: string): RgbImage {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    throw new ConfigError(`${path}: cannot read image (${(err as NodeJS.ErrnoException).code ?? "error"})`, {
      cause: err,
    });
  }
  return decodeImage(bytes, path);
}

/** PNG bytes of an image (8-bit RGBA, opaque; values clamped to [0, 1] and rounded). */
export function encodePng(img: RgbImage): Buffer {
  const png = new PNG({ width: img.width, height: img.height });
  const n = img.width * img.height;
  for (let i = 0; i < n; i++) {
    for (let c = 0; c < 3; c++) png.data[i * 4 + c] = to8(img.data[i * 3 + c]!);
    png.data[i * 4 + 3] = 255;
  }
  return PNG.sync.write(png);
}

/** JPEG bytes of an image (quality 0-100), for tests and for users who want small files. */
export function encodeJpeg(img: RgbImage, quality = 90): Buffer {
  const n = img.width * img.height;
  const data = Buffer.alloc(n * 4);
  for (let i = 0; i < n; i++) {
    for (let c = 0; c < 3; c++) data[i * 4 + c] = to8(img.data[i * 3 + c]!);
    data[i * 4 + 3] = 255;
  }
  return jpeg.encode({ data, width: img.width, height: img.height }, quality).data;
}

/** Writes an image atomically as PNG or JPEG, chosen by the extension. */
export function writeImage(path: string, img: RgbImage): void {
  const ext = extname(path).toLowerCase();
  if (ext === ".png") writeFileAtomic(path, encodePng(img));
  else if (ext === ".jpg" || ext === ".jpeg") writeFileAtomic(path, encodeJpeg(img));
  else throw new ConfigError(`${path}: write images as .png, .jpg or .jpeg`);
}

/** Bilinear resize to (height, width), as torch's interpolate(bilinear, align_corners=False, antialias=False). */
export function resizeBilinear(img: RgbImage, width: number, height: number): RgbImage {
  if (img.width === width && img.height === height) return img;
  const out = new RgbImage(width, height, undefined, img.ref);
  const xs = axisTaps(img.width, width);
  const ys = axisTaps(img.height, height);
  for (let y = 0; y < height; y++) {
    const [y0, y1, wy] = ys[y]!;
    for (let x = 0; x < width; x++) {
      const [x0, x1, wx] = xs[x]!;
      for (let c = 0; c < 3; c++) {
        const top = img.at(x0, y0, c) * (1 - wx) + img.at(x1, y0, c) * wx;
        const bottom = img.at(x0, y1, c) * (1 - wx) + img.at(x1, y1, c) * wx;
        out.data[(y * width + x) * 3 + c] = top * (1 - wy) + bottom * wy;
      }
    }
  }
  return out;
}

/** For each output index: the two source indices and the weight of the second (half-pixel centres, clamped). */
function axisTaps(inSize: number, outSize: number): [number, number, number][] {
  const scale = inSize / outSize;
  return Array.from({ length: outSize }, (_, i) => {
    const src = Math.max((i + 0.5) * scale - 0.5, 0);
    const i0 = Math.min(Math.floor(src), inSize - 1);
    const i1 = Math.min(i0 + 1, inSize - 1);
    return [i0, i1, src - i0];
  });
}

function to8(v: number): number {
  return Math.round(Math.min(1, Math.max(0, v)) * 255);
}
