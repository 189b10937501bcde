/**
 * The seeded scene generator of the vision tasks (docs/vision.md): objects of shape × colour × texture classes at
 * random positions and sizes on a white canvas, sometimes overlapping, each with its exact box.
 *
 * A scene is plain data (objects with their attributes and geometry), so an example's gold holds its scene and the
 * image is re-rendered from it bit for bit (`renderScene`). An object's box is the tight box of the pixels its own
 * shape covers, before later objects paint over it: [x1, y1, x2, y2) in pixels, exclusive ends, so a 1-pixel object
 * has a box of area 1. Pixels are sampled at their centres. Fine-grained classes differ in one attribute (a red
 * striped circle against a red hollow circle). Departures from Visual-RFT's data: synthetic, and class names are
 * attribute triples, not natural categories.
 */
import { ConfigError } from "../../util/errors.js";
import { RgbImage } from "../../util/image.js";
import type { Rng } from "../../util/rng.js";
import type { AnnotatedImage } from "../../util/coco.js";

/** The shapes. */
export const SHAPES = ["circle", "square", "triangle"] as const;
/** The colours, with their RGB values. */
export const COLOURS = {
  red: [0.9, 0.1, 0.1],
  green: [0.1, 0.65, 0.2],
  blue: [0.1, 0.2, 0.9],
  yellow: [0.95, 0.8, 0.1],
} as const;
/** The textures: filled, horizontal stripes two pixels wide, or an outline two pixels thick. */
export const TEXTURES = ["solid", "striped", "hollow"] as const;

export type Shape = (typeof SHAPES)[number];
export type Colour = keyof typeof COLOURS;
export type Texture = (typeof TEXTURES)[number];
/** Pixel box [x1, y1, x2, y2) (exclusive ends). */
export type PixelBox = [number, number, number, number];

/** One object: its class attributes and where it is drawn (square bounding area at (x, y) of side `size`). */
export interface SceneObject {
  shape: Shape;
  colour: Colour;
  texture: Texture;
  x: number;
  y: number;
  size: number;
  /** Tight box of the pixels the object's own shape covers. */
  box: PixelBox;
}

/** A scene: canvas size and objects in painting order. */
export interface Scene {
  width: number;
  height: number;
  objects: SceneObject[];
}

/** Options of `drawScene`. */
export interface SceneOptions {
  size: number;
  minObjects: number;
  maxObjects: number;
  minSize: number;
  maxSize: number;
  /** Largest IoU a new object's box may have with an earlier one (0 = never overlap). */
  maxOverlap: number;
}

/** Class name of an object: "red striped circle". */
export function className(o: Pick<SceneObject, "colour" | "texture" | "shape">): string {
  return `${o.colour} ${o.texture} ${o.shape}`;
}

/** Whether the pixel centre (u, v) lies inside the object's shape (before texture). */
function insideShape(shape: Shape, x: number, y: number, s: number, u: number, v: number): boolean {
  if (shape === "square") return u >= x && u < x + s && v >= y && v < y + s;
  if (shape === "circle") return (u - x - s / 2) ** 2 + (v - y - s / 2) ** 2 <= (s / 2) ** 2;
  return v >= y && v <= y + s && Math.abs(u - x - s / 2) <= (v - y) / 2; // apex up, base along the bottom
}

/** Whether pixel (px, py) gets the object's colour, and its tint factor (stripes alternate with a light tint). */
function paintAt(o: Omit<SceneObject, "box">, px: number, py: number): number {
  const at = (dx: number, dy: number) => insideShape(o.shape, o.x, o.y, o.size, px + 0.5 + dx, py + 0.5 + dy);
  if (!at(0, 0)) return 0;
  if (o.texture === "hollow") return at(-2, 0) && at(2, 0) && at(0, -2) && at(0, 2) ? 0 : 1;
  if (o.texture === "striped") return Math.floor((py - o.y) / 2) % 2 === 0 ? 1 : 0.35;
  return 1;
}

/** The tight pixel box of an object's own shape on a width x height canvas, or null when it covers no pixel. */
export function objectBox(o: Omit<SceneObject, "box">, width: number, height: number): PixelBox | null {
  let x1 = Infinity,
    y1 = Infinity,
    x2 = -Infinity,
    y2 = -Infinity;
  for (let py = Math.max(0, Math.floor(o.y)); py < Math.min(height, Math.ceil(o.y + o.size) + 1); py++)
    for (let px = Math.max(0, Math.floor(o.x)); px < Math.min(width, Math.ceil(o.x + o.size) + 1); px++) {
      if (paintAt(o, px, py) === 0) continue;
      x1 = Math.min(x1, px);
      y1 = Math.min(y1, py);
      x2 = Math.max(x2, px + 1);
      y2 = Math.max(y2, py + 1);
    }
  return x1 === Infinity ? null : [x1, y1, x2, y2];
}

/** IoU of two pixel boxes. */
export function pixelIou(a: PixelBox, b: PixelBox): number {
  const iw = Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0]));
  const ih = Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
  const inter = iw * ih;
  return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter);
}

/** One random object at a random position, size and class (within the canvas). */
export function drawObject(rng: Rng, o: SceneOptions, fixed: Partial<SceneObject> = {}): Omit<SceneObject, "box"> {
  const size = fixed.size ?? rng.intBetween(o.minSize, o.maxSize);
  const colours = Object.keys(COLOURS) as Colour[];
  return {
    shape: fixed.shape ?? SHAPES[rng.int(SHAPES.length)]!,
    colour: fixed.colour ?? colours[rng.int(colours.length)]!,
    texture: fixed.texture ?? TEXTURES[rng.int(TEXTURES.length)]!,
    x: fixed.x ?? rng.intBetween(0, o.size - size),
    y: fixed.y ?? rng.intBetween(0, o.size - size),
    size,
  };
}

/** A random scene: between minObjects and maxObjects objects, placed so no two overlap beyond maxOverlap IoU. */
export function drawScene(rng: Rng, o: SceneOptions): Scene {
  if (!(o.minSize >= 4 && o.minSize <= o.maxSize && o.maxSize <= o.size))
    throw new ConfigError(`scene: need 4 <= minSize <= maxSize <= size, got ${o.minSize}, ${o.maxSize}, ${o.size}`);
  if (!(o.minObjects >= 1 && o.minObjects <= o.maxObjects))
    throw new ConfigError(`scene: need 1 <= minObjects <= maxObjects, got ${o.minObjects}, ${o.maxObjects}`);
  const want = rng.intBetween(o.minObjects, o.maxObjects);
  const objects: SceneObject[] = [];
  for (let tries = 0; objects.length < want && tries < 200; tries++) {
    const obj = drawObject(rng, o);
    const box = objectBox(obj, o.size, o.size);
    if (!box || objects.some((p) => pixelIou(p.box, box) > o.maxOverlap)) continue;
    objects.push({ ...obj, box });
  }
  return { width: o.size, height: o.size, objects };
}

/** The scene's pixels: white background, objects painted in order (later ones over earlier ones). */
export function renderScene(scene: Scene, ref = ""): RgbImage {
  const img = new RgbImage(scene.width, scene.height, new Float32Array(scene.width * scene.height * 3).fill(1), ref);
  for (const o of scene.objects) {
    const rgb = COLOURS[o.colour];
    const [x1, y1, x2, y2] = o.box;
    for (let py = y1; py < y2; py++)
      for (let px = x1; px < x2; px++) {
        const a = paintAt(o, px, py);
        if (a === 0) continue;
        for (let c = 0; c < 3; c++) img.data[(py * scene.width + px) * 3 + c] = rgb[c]! * a + (1 - a);
      }
  }
  return img;
}

/** The scene's annotation record (class names, exact boxes) for COCO JSON (src/util/coco.ts). */
export function sceneAnnotation(scene: Scene, file: string): AnnotatedImage {
  return {
    file,
    width: scene.width,
    height: scene.height,
    objects: scene.objects.map((o) => ({ label: className(o), box: [...o.box] })),
  };
}
