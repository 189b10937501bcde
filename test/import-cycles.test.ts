/**
 * No import circle inside the engine: the runtime module graph of src/engine (every import and export-from that
 * survives compilation, read with TypeScript's parser; `import type` and all-type import lists are erased and do not
 * count, so mutually recursive types such as Tensor and its graph Node may stay in two files) is acyclic. A circle makes module load order matter (a class used before
 * its module finished loading) and ties files that should be readable alone; the old tensor → autograd → grad-table
 * → ops → tensor circle was opened by making `backward(loss)` a function of autograd.ts.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith(".ts") ? [p] : [];
  });
}

/** The relative specifiers a file loads at run time (type-only imports and exports are erased by the compiler). */
function runtimeSpecifiers(file: string): string[] {
  const sf = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false);
  const out: string[] = [];
  for (const st of sf.statements) {
    if (ts.isImportDeclaration(st)) {
      const c = st.importClause;
      const typeOnly =
        c !== undefined &&
        (c.isTypeOnly ||
          (c.name === undefined &&
            c.namedBindings !== undefined &&
            ts.isNamedImports(c.namedBindings) &&
            c.namedBindings.elements.every((e) => e.isTypeOnly)));
      if (!typeOnly) out.push((st.moduleSpecifier as ts.StringLiteral).text);
    } else if (ts.isExportDeclaration(st) && st.moduleSpecifier && !st.isTypeOnly) {
      const named = st.exportClause && ts.isNamedExports(st.exportClause) ? st.exportClause.elements : null;
      if (!named || !named.every((e) => e.isTypeOnly)) out.push((st.moduleSpecifier as ts.StringLiteral).text);
    }
  }
  return out.filter((s) => s.startsWith("."));
}

/** file → the files of `files` it loads at run time (.js specifiers mapped back to .ts). */
function importGraph(files: string[]): Map<string, string[]> {
  const set = new Set(files);
  return new Map(
    files.map((f) => [
      f,
      runtimeSpecifiers(f)
        .map((s) => resolve(dirname(f), s.replace(/\.js$/, ".ts")))
        .filter((t) => set.has(t)),
    ]),
  );
}

/** One cycle of the graph as a list of files (first = last), or null. */
function findCycle(graph: Map<string, string[]>): string[] | null {
  const state = new Map<string, 1 | 2>(); // 1 on the stack, 2 done
  const stack: string[] = [];
  const visit = (f: string): string[] | null => {
    state.set(f, 1);
    stack.push(f);
    for (const t of graph.get(f) ?? []) {
      if (state.get(t) === 1) return [...stack.slice(stack.indexOf(t)), t];
      if (!state.has(t)) {
        const c = visit(t);
        if (c) return c;
      }
    }
    stack.pop();
    state.set(f, 2);
    return null;
  };
  for (const f of graph.keys()) {
    if (!state.has(f)) {
      const c = visit(f);
      if (c) return c;
    }
  }
  return null;
}

describe("import cycles", () => {
  it("the detector finds a planted circle and passes a chain", () => {
    expect(
      findCycle(
        new Map([
          ["a", ["b"]],
          ["b", ["c"]],
          ["c", ["a"]],
        ]),
      ),
    ).toEqual(["a", "b", "c", "a"]);
    expect(
      findCycle(
        new Map([
          ["a", ["b"]],
          ["b", ["c"]],
          ["c", []],
        ]),
      ),
    ).toBeNull();
  });
  it("type-only imports do not count; value imports do", () => {
    expect(
      importGraph([join(ROOT, "src", "engine", "ops", "op-set.ts"), join(ROOT, "src", "engine", "tensor.ts")]).get(
        join(ROOT, "src", "engine", "ops", "op-set.ts"),
      ),
    ).toEqual([]);
    expect(runtimeSpecifiers(join(ROOT, "src", "engine", "autograd.ts"))).toContain("./grad-table.js");
  });
  it("src/engine has none", () => {
    const cycle = findCycle(importGraph(tsFiles(join(ROOT, "src", "engine"))));
    expect(cycle?.map((f) => relative(ROOT, f)) ?? null).toBeNull();
  });
});
