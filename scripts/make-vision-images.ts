/**
 * Writes the two tiny test images of test/fixtures/vision (run once; the outputs are committed): quadrants.png and
 * quadrants.jpg, 8 x 6 pixels, red / green / blue / white quadrants (the pattern test/util/image.test.ts checks).
 * Usage: npx tsx scripts/make-vision-images.ts
 */
import { join } from "node:path";
import { RgbImage, writeImage } from "../src/util/image.js";

/** The quadrant colour of pixel (x, y) of an 8 x 6 image. */
export function quadrantColour(x: number, y: number): [number, number, number] {
  if (y < 3) return x < 4 ? [1, 0, 0] : [0, 1, 0];
  return x < 4 ? [0, 0, 1] : [1, 1, 1];
}

const img = new RgbImage(8, 6);
for (let y = 0; y < 6; y++) for (let x = 0; x < 8; x++) img.data.set(quadrantColour(x, y), (y * 8 + x) * 3);
const dir = join(import.meta.dirname, "..", "test", "fixtures", "vision");
writeImage(join(dir, "quadrants.png"), img);
writeImage(join(dir, "quadrants.jpg"), img);
