#!/usr/bin/env node
// Entry point of the `rlvr` command: runs the compiled CLI from dist/ (built by `npm ci` / `npm run build`).
import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { dirname, join } from "node:path";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const entry = join(root, "dist", "cli", "index.js");
if (!existsSync(entry)) {
  console.error("rlvr: dist/ is missing; run `npm run build` (npm ci does it for you).");
  process.exit(1);
}
const { main } = await import(pathToFileURL(entry).href);
await main(process.argv);
