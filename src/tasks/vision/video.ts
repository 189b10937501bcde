/**
 * The seeded video generator of the video tasks (docs/vision.md): 8 to 16 frames, 0.5 s apart, of 1-3 solid objects
 * that move in straight lines, bouncing off the walls, and may appear late or leave early. Every fact a question asks
 * is exact: when an object is on screen (a time span), its box in each frame, which way it moves.
 *
 * A video is plain data (objects with their tracks), so an example's gold holds it and the frames are re-rendered
 * from it (`renderVideo`). Object 0 is on screen in every frame (the one tracked); the others have random spans.
 * Departure from VideoChat-R1's data (Charades-STA, GOT-10k, NExT-GQA): synthetic, and every frame is given
 * (no frame sampling), with its time written before it in the prompt.
 */
import type { RgbImage } from "../../util/image.js";
import type { Rng } from "../../util/rng.js";
import {
  COLOURS,
  SHAPES,
  objectBox,
  renderScene,
  type Colour,
  type PixelBox,
  type SceneObject,
  type Shape,
} from "./scene.js";

/** Seconds between frames. */
export const FRAME_SECONDS = 0.5;

/** One moving object: its class, first position, velocity (pixels per frame) and the frames [from, to) it is shown. */
export interface Mover {
  shape: Shape;
  colour: Colour;
  size: number;
  x: number;
  y: number;
  dx: number;
  dy: number;
  from: number;
  to: number;
}

/** A video: canvas size, frame count and the movers. */
export interface Video {
  size: number;
  frames: number;
  movers: Mover[];
}

/** Options of `drawVideo`. */
export interface VideoOptions {
  size: number;
  minFrames: number;
  maxFrames: number;
  maxObjects: number;
  minSize: number;
  maxSize: number;
  /**
   * The most frames an object other than object 0 stays on screen (at least 2). Unset, its span is any [from, to)
   * of at least 2 frames, which on short clips crowds the spans into the middle, where one fixed answer covers most
   * of them (docs/vision.md, "the blind answer"); set, the span's length is drawn first (2 to maxSpan frames) and its
   * start uniformly among the places it fits, so spans spread over the whole clip.
   */
  maxSpan?: number;
}

/** Where a mover is at frame t: straight motion reflected at the walls (a triangle wave over [0, size - s]). */
export function positionAt(m: Mover, size: number, t: number): { x: number; y: number } {
  const bounce = (p0: number, v: number) => {
    const span = size - m.size;
    if (span <= 0) return 0;
    const p = (((p0 + v * t) % (2 * span)) + 2 * span) % (2 * span);
    return p <= span ? p : 2 * span - p;
  };
  return { x: bounce(m.x, m.dx), y: bounce(m.y, m.dy) };
}

/** The mover as a scene object at frame t (with its exact box), or null when it is off screen then. */
export function moverAt(m: Mover, size: number, t: number): SceneObject | null {
  if (t < m.from || t >= m.to) return null;
  const o = { shape: m.shape, colour: m.colour, texture: "solid" as const, size: m.size, ...positionAt(m, size, t) };
  const box = objectBox(o, size, size);
  return box ? { ...o, box } : null;
}

/** The mover's box in every frame (null where it is off screen). */
export function track(v: Video, i: number): (PixelBox | null)[] {
  return Array.from({ length: v.frames }, (_, t) => moverAt(v.movers[i]!, v.size, t)?.box ?? null);
}

/** The time span [from, to) in seconds during which mover i is on screen. */
export function onScreen(v: Video, i: number): [number, number] {
  const m = v.movers[i]!;
  return [m.from * FRAME_SECONDS, m.to * FRAME_SECONDS];
}

/** Frame times in seconds. */
export function frameTimes(v: Video): number[] {
  return Array.from({ length: v.frames }, (_, t) => t * FRAME_SECONDS);
}

/** A random video; the movers have distinct (colour, shape) classes so a question names one object. */
export function drawVideo(rng: Rng, o: VideoOptions): Video {
  const frames = rng.intBetween(o.minFrames, o.maxFrames);
  const n = rng.intBetween(1, o.maxObjects);
  const colours = Object.keys(COLOURS) as Colour[];
  const used = new Set<string>();
  const movers: Mover[] = [];
  while (movers.length < n) {
    const shape = SHAPES[rng.int(SHAPES.length)]!;
    const colour = colours[rng.int(colours.length)]!;
    if (used.has(`${colour} ${shape}`)) continue;
    used.add(`${colour} ${shape}`);
    const size = rng.intBetween(o.minSize, o.maxSize);
    const speed = () => (rng.int(2) === 0 ? -1 : 1) * rng.intBetween(1, 3);
    const still = rng.int(2) === 0; // half move along one axis only, so "which way" has one answer
    const [dx, dy] = still ? (rng.int(2) === 0 ? [speed(), 0] : [0, speed()]) : [speed(), speed()];
    const [from, to] = movers.length === 0 ? [0, frames] : drawSpan(rng, frames, o.maxSpan);
    movers.push({
      shape,
      colour,
      size,
      x: rng.intBetween(0, o.size - size),
      y: rng.intBetween(0, o.size - size),
      dx,
      dy,
      from,
      to,
    });
  }
  return { size: o.size, frames, movers };
}

/** The frames [from, to) a late or early object is on screen (see `VideoOptions.maxSpan`). */
function drawSpan(rng: Rng, frames: number, maxSpan: number | undefined): [number, number] {
  if (maxSpan === undefined) {
    const from = rng.int(frames - 2);
    return [from, rng.intBetween(from + 2, frames)];
  }
  // at most frames - 1 long, so the object is never on screen throughout
  const length = rng.intBetween(2, Math.max(2, Math.min(maxSpan, frames - 1)));
  const from = rng.int(frames - length + 1);
  return [from, from + length];
}

/** The frames' pixels, each with ref `<ref>#t` (the frame index). */
export function renderVideo(v: Video, ref = ""): RgbImage[] {
  return Array.from({ length: v.frames }, (_, t) => {
    const objects = v.movers.map((m) => moverAt(m, v.size, t)).filter((x): x is SceneObject => x !== null);
    return renderScene({ width: v.size, height: v.size, objects }, `${ref}#${t}`);
  });
}
