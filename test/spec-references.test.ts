/**
 * Every spec reference in the repository resolves inside it: each `§` section and decision id (G1, D-M11, …) cited
 * in src/, bench/, scripts/, test/, docs/ and README.md names a heading or anchor of docs/spec/rewards.md or
 * docs/spec/algorithms.md, under the convention of docs/spec/README.md. The resolver is tested first on made-up
 * text, so the whole-repository check is known to be able to fail.
 */
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { anchorsOf, danglingIn, defaultSpec, loadAnchors, referencesIn, scannedFiles } from "./spec-refs.js";
import type { Anchors } from "./spec-refs.js";

const ROOT = resolve(__dirname, "..");
// Built from a code point so that this file's own examples are not citations the scan below would check.
const S = String.fromCodePoint(0xa7);

const TOY: Anchors = {
  sections: { rewards: new Set(["1", "1.1", "1.2", "10.2", "10.3", "12"]), algorithms: new Set(["2", "2.1", "8.4"]) },
  items: { rewards: new Set(["10.3#1", "10.3#7", "1.1#3"]), algorithms: new Set() },
  decisions: new Set(["G1", "G2", "G3", "G8", "D-M1", "D-M13"]),
  design: new Set(["runs on disk"]),
};

const dangling = (path: string, text: string) => danglingIn(path, text, TOY).map((d) => `${d.line}: ${d.text}`);

describe("the resolver", () => {
  it("reads section headings, decision headings and anchors", () => {
    const md = ["# Title", "## 1. Maths", "1. first", "### 1.2 Table", "1. one", "2. two", "#### D-M4 Rules", "3. x"];
    md.push('- <a id="G5"></a> no hedging', '<a id="3.4"></a>');
    const a = anchorsOf(md.join("\n"));
    expect([...a.sections].sort()).toEqual(["1", "1.2", "3.4"]);
    expect([...a.decisions].sort()).toEqual(["D-M4", "G5"]);
    expect([...a.items].sort()).toEqual(["1#1", "1.2#1", "1.2#2"]); // the list under a decision heading is not 1.2's
  });

  it("flags a dangling section, a dangling decision id and a path outside the repository", () => {
    const outside = ["shared", "specs", "rewards.md"].join("/");
    const g9 = ["G", "9"].join(""); // not a literal, so the repository scan does not see it
    const text = `/** rewards spec ${S}1.1 and ${S}99.9 */\n// ${g9} and D-M1\n// see ../${outside}`;
    expect(dangling("src/rewards/x.ts", text)).toEqual([`1: ${S}99.9`, `2: ${g9}`, `3: ${outside}`]);
  });

  it("resolves a bare citation by the file's header, else by its folder, else reports it", () => {
    expect(defaultSpec("src/tasks/score.ts", `/** algorithms spec ${S}8.4 */`)).toBe("algorithms");
    expect(defaultSpec("src/tasks/x.ts", "/** nothing */")).toBe("rewards");
    expect(defaultSpec("src/trainer/x.ts", "/** nothing */")).toBe("algorithms");
    expect(defaultSpec("bench/x.ts", "/** nothing */")).toBeNull();
    expect(dangling("src/trainer/x.ts", `// ${S}8.4 and ${S}2.1`)).toEqual([]);
    expect(dangling("src/rewards/x.ts", `// ${S}8.4`)).toEqual([`1: ${S}8.4`]); // the toy rewards spec has no 8.4
    expect(danglingIn("bench/x.ts", `// ${S}2.1`, TOY)[0]!.reason).toContain("cannot tell which spec");
  });

  it("follows a qualifier along a chain and checks both ends of a range", () => {
    const text = `// (rewards spec ${S}10.2 #1, ${S}10.3 #7, ${S}12) and (algorithms spec ${S}2.1, ${S}8.4)`;
    const specs = referencesIn("bench/x.ts", text).map((r) => r.spec);
    expect(specs).toEqual(["rewards", "rewards", "rewards", "algorithms", "algorithms"]);
    expect(dangling("bench/x.ts", `// rewards spec ${S}10.2–10.3 and ${S}1.1–1.7`)).toEqual([`1: ${S}1.1–1.7`]);
    // The chain goes on across a line break, and a paper's sections stay the paper's on the next line.
    const text2 = `/* (rewards spec ${S}10.2 #1,\n * ${S}10.3 #7) arXiv 2510.02245\n${S}4.1 */`;
    const across = referencesIn("bench/x.ts", text2);
    expect(across.map((r) => [r.line, r.spec])).toEqual([
      [1, "rewards"],
      [2, "rewards"],
    ]);
    expect(dangling("src/rewards/x.ts", "// G1–G8, D-M1–M13 and G1–G4")).toEqual(["1: G1–G4"]);
  });

  it("checks the numbered item a citation names", () => {
    expect(dangling("src/rewards/x.ts", `// ${S}10.3 #7, ${S}1.1 step 3, ${S}10.3 #1–7`)).toEqual([]);
    expect(dangling("src/rewards/x.ts", `// ${S}10.3 #8 and ${S}1.1 steps 2–3`)).toEqual([`1: ${S}10.3`, `1: ${S}1.1`]);
  });

  it("checks the heading named after DESIGN.md", () => {
    const bad = ["DESIGN", '"Runs on tape"'].join(" "); // built, so the repository scan does not see it
    expect(dangling("src/x.ts", `// DESIGN.md "Runs on disk" and ${bad}`)).toEqual([`1: ${bad}`]);
  });

  it("leaves the sections of papers and other works alone", () => {
    const text =
      `// arXiv 2503.20783 ${S}3.2, ${S}4.1; (OSQP ${S}5.2); (DAPO ${S}3.3); the paper's ${S}2` + `; Lee et al. ${S}4`;
    expect(referencesIn("bench/x.ts", text)).toEqual([]);
    // "spec" after a paper name takes the citation back.
    const back = referencesIn("src/rewards/x.ts", `// (SIRL arXiv 2505.11792; spec ${S}9.3)`);
    expect(back.map((r) => r.targets)).toEqual([["9.3"]]);
  });
});

describe("spec references in the repository", () => {
  const anchors = loadAnchors(ROOT);
  // docs/spec/README.md is left out: it states the convention with examples, not citations.
  const files = scannedFiles(ROOT, ["src", "bench", "scripts", "test", "docs"])
    .filter((f) => f !== "docs/spec/README.md")
    .concat("README.md");

  it("finds the spec sections and decision ids", () => {
    const { rewards, algorithms } = anchors.sections;
    for (const s of ["0.1", "1.5", "10.3", "11.5", "14"]) expect(rewards.has(s), `rewards ${s}`).toBe(true);
    for (const s of ["1.7", "3.1", "6.8", "11.4", "12"]) expect(algorithms.has(s), `algorithms ${s}`).toBe(true);
    for (const d of ["G1", "G8", "D-M13", "D-B10", "D-S7", "D-R7"]) expect(anchors.decisions.has(d), d).toBe(true);
  });

  it("numbers each section and decision once", () => {
    for (const f of ["docs/spec/rewards.md", "docs/spec/algorithms.md"]) {
      const heads = readFileSync(resolve(ROOT, f), "utf8").match(/^#{1,6} (?:\d+(?:\.\d+)*|G\d+|D-[A-Z]+\d+)\b/gm)!;
      const keys = heads.map((h) => h.replace(/^#+ /, ""));
      expect(
        keys.filter((k, i) => keys.indexOf(k) !== i),
        f,
      ).toEqual([]);
    }
  });

  it("finds citations to check", () => {
    const count = files.reduce((n, f) => n + referencesIn(f, readFileSync(resolve(ROOT, f), "utf8")).length, 0);
    expect(count).toBeGreaterThan(300);
  });

  it("has no dangling reference", () => {
    const bad = files.flatMap((f) => danglingIn(f, readFileSync(resolve(ROOT, f), "utf8"), anchors));
    const lines = bad.map((d) => `${d.file}:${d.line}: ${d.text} — ${d.reason}`);
    expect(lines, `dangling spec references (convention: docs/spec/README.md):\n${lines.join("\n")}`).toEqual([]);
  });
});
