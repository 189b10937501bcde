/**
 * Enforces the layer table of DESIGN.md "Layers" (docs/spec/design.md): a file may import only from its own layer and
 * the layers listed for it. Every kind of module reference counts: `import … from`, bare side-effect imports
 * (`import "../rewards/index.js"`), `export … from`, `import type`, type-position `import("…")` and dynamic
 * `import("…")` with a literal. TypeScript's own pre-processor finds them, so imports inside comments and strings do
 * not count and multi-line import lists do.
 */
import { describe, expect, it } from "vitest";
import ts from "typescript";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve, dirname } from "node:path";

const SRC = resolve(__dirname, "..", "src");

/** Layer folder → the other layers it may import (DESIGN.md "Layers"; trainer and surfaces import all below). */
const BELOW_SURFACES = [
  "trainer",
  "rollout",
  "algorithms",
  "sampling",
  "models",
  "engine",
  "envs",
  "rewards",
  "tasks",
].concat("util");
const ALLOWED: Record<string, string[]> = {
  util: [],
  engine: ["util"],
  models: ["engine", "util"],
  sampling: ["models", "engine", "util"],
  rewards: ["util"],
  tasks: ["rewards", "util"],
  envs: ["rewards", "tasks", "util"],
  rollout: ["sampling", "models", "engine", "envs", "rewards", "tasks", "util"],
  algorithms: ["engine", "util"],
  trainer: ["rollout", "algorithms", "sampling", "models", "engine", "envs", "rewards", "tasks", "util"],
  cli: [...BELOW_SURFACES, "server", "serve"],
  server: BELOW_SURFACES,
  serve: BELOW_SURFACES,
  dashboard: BELOW_SURFACES,
};

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith(".ts") ? [p] : [];
  });
}

/** The layer folder of a path under src/, or null for a top-level file (src/index.ts, the package entry). */
function layerOf(file: string): string | null {
  const rel = relative(SRC, file).split(/[\\/]/);
  return rel.length > 1 ? rel[0]! : null;
}

/** Every module specifier a TypeScript source refers to (static, side-effect, re-export, type and dynamic imports). */
function specifiersOf(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
}

/** The imports of `file` (a path under src/) that break the layer table, as "specifier (reason)". */
function violations(file: string, text: string): string[] {
  const layer = layerOf(file);
  if (layer === null) return []; // the package entry may re-export any layer
  const allowed = ALLOWED[layer];
  if (allowed === undefined) return [`unknown layer folder src/${layer}`];
  const bad: string[] = [];
  for (const spec of specifiersOf(text)) {
    if (!spec.startsWith(".")) continue; // packages and node: built-ins
    const targetPath = resolve(dirname(file), spec);
    if (relative(SRC, targetPath).startsWith("..")) {
      bad.push(`${spec} (outside src/)`);
      continue;
    }
    const target = layerOf(targetPath);
    if (target === null) bad.push(`${spec} (the package entry, which reaches every layer)`);
    else if (target !== layer && !allowed.includes(target)) bad.push(`${spec} (layer ${target})`);
  }
  return bad;
}

describe("import detection", () => {
  it("sees side-effect imports, re-exports, type imports and dynamic imports, not comments or strings", () => {
    const text = [
      'import a from "./a.js";',
      'import "../rewards/index.js";',
      'export * from "./b.js";',
      "export {",
      "  c,",
      '} from "./c.js";',
      'const d = await import("./d.js");',
      'type E = import("./e.js").E;',
      'import type { F } from "./f.js";',
      '// import "./comment.js"',
      "const s = \"import './string.js'\";",
    ].join("\n");
    const expected = ["./a.js", "../rewards/index.js", "./b.js", "./c.js", "./d.js", "./e.js", "./f.js"];
    expect(specifiersOf(text)).toEqual(expected);
  });

  it("reports a bare side-effect import that crosses the layers", () => {
    const file = join(SRC, "rewards", "x.ts");
    expect(violations(file, 'import "../trainer/builtins.js";')).toEqual(["../trainer/builtins.js (layer trainer)"]);
    const reexport = 'export { y } from "../engine/tensor.js";';
    expect(violations(file, reexport)).toEqual(["../engine/tensor.js (layer engine)"]);
    const dynamic = 'const m = await import("../models/gpt.js");';
    expect(violations(file, dynamic)).toEqual(["../models/gpt.js (layer models)"]);
    const entry = "../index.js (the package entry, which reaches every layer)";
    expect(violations(file, 'import "../index.js";')).toEqual([entry]);
    expect(violations(file, 'import "../util/rng.js";\nimport "./math/index.js";')).toEqual([]);
  });

  it("reports a file in a folder that is not a layer", () => {
    expect(violations(join(SRC, "misc", "x.ts"), "")).toEqual(["unknown layer folder src/misc"]);
  });
});

describe("layer imports (DESIGN.md)", () => {
  const files = walk(SRC);
  it("finds source files", () => expect(files.length).toBeGreaterThan(5));
  for (const file of files) {
    const layer = layerOf(file);
    if (layer === null) continue;
    it(`${relative(SRC, file)} imports only allowed layers`, () => {
      const bad = violations(file, readFileSync(file, "utf8"));
      expect(bad, `src/${layer} may import only: ${ALLOWED[layer]?.join(", ") || "nothing of ours"}`).toEqual([]);
    });
  }
});
