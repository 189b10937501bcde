/** Enforces DESIGN.md's layer table: a file may import only from its own layer and the layers listed for it. */
import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve, dirname } from "node:path";

const SRC = resolve(__dirname, "..", "src");

const ALLOWED: Record<string, string[]> = {
  util: [],
  engine: ["util"],
  models: ["engine", "util"],
  sampling: ["models", "engine", "util"],
  rewards: ["util"],
  tasks: ["rewards", "util"],
  rollout: ["sampling", "models", "engine", "rewards", "tasks", "util"],
  algorithms: ["engine", "util"],
  trainer: ["rollout", "algorithms", "sampling", "models", "engine", "rewards", "tasks", "util"],
  cli: ["trainer", "rollout", "algorithms", "sampling", "models", "engine", "rewards", "tasks", "util", "server"],
  server: ["trainer", "rollout", "algorithms", "sampling", "models", "engine", "rewards", "tasks", "util"],
  dashboard: ["trainer", "rollout", "algorithms", "sampling", "models", "engine", "rewards", "tasks", "util"],
};

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith(".ts") ? [p] : [];
  });
}

function layerOf(file: string): string | null {
  const rel = relative(SRC, file).split(/[\\/]/);
  return rel.length > 1 ? rel[0]! : null; // top-level files (src/index.ts) are the package entry: any layer
}

describe("layer imports (DESIGN.md)", () => {
  const files = walk(SRC);
  it("finds source files", () => expect(files.length).toBeGreaterThan(5));
  for (const file of files) {
    const layer = layerOf(file);
    if (layer === null) continue;
    it(`${relative(SRC, file)} imports only allowed layers`, () => {
      expect(ALLOWED[layer], `unknown layer folder src/${layer}`).toBeDefined();
      const text = readFileSync(file, "utf8");
      const specs = [...text.matchAll(/(?:import|export)[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1] ?? m[2]!);
      const bad: string[] = [];
      for (const spec of specs) {
        if (!spec.startsWith(".")) continue;
        const target = layerOf(resolve(dirname(file), spec));
        if (target === null || target === layer) continue;
        if (!ALLOWED[layer]!.includes(target)) bad.push(`${spec} (layer ${target})`);
      }
      expect(bad, `src/${layer} may import only: ${ALLOWED[layer]!.join(", ") || "nothing of ours"}`).toEqual([]);
    });
  }
});
