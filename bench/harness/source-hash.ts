/**
 * A hash of the source that produces a cached artefact (an SFT start: the model, tokenizer, task generators and
 * SFT trainer), so a cache keyed by settings alone can never serve a start made by older code.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

/** The folders and files, relative to the repository root, whose source an SFT start depends on. */
export const SFT_START_SOURCES = ["src/models", "src/tasks", "src/trainer/sft.ts", "src/engine", "native", "src/util"];

/** Every file under `path` (or `path` itself), sorted, as paths relative to `root`. */
function filesUnder(root: string, path: string): string[] {
  const abs = join(root, path);
  if (statSync(abs).isFile()) return [path];
  return readdirSync(abs, { withFileTypes: true })
    .flatMap((d) => (d.isDirectory() ? filesUnder(root, join(path, d.name)) : [relative(root, join(abs, d.name))]))
    .sort();
}

/** sha256 over the paths and contents of `paths` (files or folders under `root`), hex. */
export function sourceHash(root: string, paths: readonly string[] = SFT_START_SOURCES): string {
  const h = createHash("sha256");
  for (const f of paths.flatMap((p) => filesUnder(root, p))) {
    h.update(f)
      .update("\0")
      .update(readFileSync(join(root, f)))
      .update("\0");
  }
  return h.digest("hex");
}
