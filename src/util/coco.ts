/**
 * COCO-style JSON annotations in and out (the object-detection format of cocodataset.org: `images`, `annotations`,
 * `categories`; boxes as [x, y, width, height] in pixels), converted to and from one record per image with xyxy
 * boxes and class names, which is what the scene generator writes and the box rewards and `cocoMap` read.
 *
 * Departures from the full format: segmentation, keypoints and `iscrowd` regions are not modelled (read and
 * ignored; `iscrowd` is written as 0); detection results (the `[{image_id, category_id, bbox, score}]` list) carry an
 * optional `score` on each object.
 */
import { readFileSync } from "node:fs";
import { ConfigError } from "./errors.js";
import { writeFileAtomic } from "./files.js";

/** One object in pixel xyxy with its class name (and a score for detections). */
export interface AnnotatedObject {
  label: string;
  /** [x1, y1, x2, y2] in pixels. */
  box: [number, number, number, number];
  score?: number;
}

/** One image with its objects. */
export interface AnnotatedImage {
  /** File name relative to the annotation file (COCO `file_name`). */
  file: string;
  width: number;
  height: number;
  objects: AnnotatedObject[];
}

/** The COCO JSON document (the fields rlvr reads and writes). */
export interface CocoJson {
  images: { id: number; file_name: string; width: number; height: number }[];
  annotations: {
    id: number;
    image_id: number;
    category_id: number;
    bbox: [number, number, number, number];
    area: number;
    iscrowd: 0 | 1;
    score?: number;
  }[];
  categories: { id: number; name: string; supercategory?: string }[];
}

/** Builds the COCO document of a list of images; categories are numbered from 1 in first-seen order. */
export function toCoco(images: readonly AnnotatedImage[]): CocoJson {
  const categories = new Map<string, number>();
  const doc: CocoJson = { images: [], annotations: [], categories: [] };
  images.forEach((img, i) => {
    doc.images.push({ id: i + 1, file_name: img.file, width: img.width, height: img.height });
    for (const o of img.objects) {
      if (!categories.has(o.label)) categories.set(o.label, categories.size + 1);
      const [x1, y1, x2, y2] = o.box;
      const w = x2 - x1,
        h = y2 - y1;
      doc.annotations.push({
        id: doc.annotations.length + 1,
        image_id: i + 1,
        category_id: categories.get(o.label)!,
        bbox: [x1, y1, w, h],
        area: w * h,
        iscrowd: 0,
        ...(o.score !== undefined ? { score: o.score } : {}),
      });
    }
  });
  for (const [name, id] of categories) doc.categories.push({ id, name });
  return doc;
}

/** Reads a COCO document (already parsed JSON) into per-image records; `source` names it in errors. */
export function fromCoco(json: unknown, source = "annotations"): AnnotatedImage[] {
  const doc = json as Partial<CocoJson> | null;
  if (!doc || typeof doc !== "object" || !Array.isArray(doc.images) || !Array.isArray(doc.annotations))
    throw new ConfigError(`${source}: a COCO file needs "images" and "annotations" arrays`);
  const names = new Map<number, string>();
  for (const c of doc.categories ?? []) {
    if (!Number.isInteger(c?.id) || typeof c?.name !== "string")
      throw new ConfigError(`${source}: each category needs an integer "id" and a string "name"`);
    names.set(c.id, c.name);
  }
  const byId = new Map<number, AnnotatedImage>();
  const out: AnnotatedImage[] = [];
  doc.images.forEach((im, i) => {
    const ok = Number.isInteger(im?.id) && typeof im?.file_name === "string" && im.width > 0 && im.height > 0;
    if (!ok)
      throw new ConfigError(`${source}: images[${i}] needs an integer id, a file_name and positive width/height`);
    if (byId.has(im.id)) throw new ConfigError(`${source}: image id ${im.id} appears twice`);
    const rec: AnnotatedImage = { file: im.file_name, width: im.width, height: im.height, objects: [] };
    byId.set(im.id, rec);
    out.push(rec);
  });
  doc.annotations.forEach((a, i) => {
    const img = byId.get(a?.image_id);
    if (!img) throw new ConfigError(`${source}: annotations[${i}] names image_id ${a?.image_id}, which is not listed`);
    const label = names.get(a.category_id);
    if (label === undefined)
      throw new ConfigError(`${source}: annotations[${i}] names category_id ${a.category_id}, which is not listed`);
    const b = a.bbox;
    if (!Array.isArray(b) || b.length !== 4 || !b.every(Number.isFinite) || b[2] <= 0 || b[3] <= 0)
      throw new ConfigError(`${source}: annotations[${i}].bbox must be [x, y, width, height] with positive size`);
    const obj: AnnotatedObject = { label, box: [b[0], b[1], b[0] + b[2], b[1] + b[3]] };
    if (a.score !== undefined) obj.score = a.score;
    img.objects.push(obj);
  });
  return out;
}

/** Reads a COCO annotation file. */
export function readCoco(path: string): AnnotatedImage[] {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new ConfigError(`${path}: cannot read COCO JSON (${(err as Error).message})`, { cause: err });
  }
  return fromCoco(json, path);
}

/** Writes a COCO annotation file atomically. */
export function writeCoco(path: string, images: readonly AnnotatedImage[]): void {
  writeFileAtomic(path, JSON.stringify(toCoco(images)) + "\n");
}
