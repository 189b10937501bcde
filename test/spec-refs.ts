/**
 * Resolver for spec references (the convention of docs/spec/README.md): finds every `§` section citation and
 * decision id (G1, D-M11, …) in a text file, decides which spec file it points at, and checks it against the
 * headings and anchors of docs/spec/*.md. Used by test/spec-references.test.ts; kept free of vitest so the test can
 * run it on made-up examples.
 */
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";

/** The two specification files under docs/spec/. */
export type SpecName = "rewards" | "algorithms";

/** Section numbers and decision ids defined by the spec files. */
export interface Anchors {
  sections: Record<SpecName, Set<string>>;
  /** Numbered list items ("1. …") under each section heading, keyed "section#item" (e.g. "10.3#7"). */
  items: Record<SpecName, Set<string>>;
  /** Decision ids (all live in the rewards spec). */
  decisions: Set<string>;
  /** Headings of docs/spec/design.md (lower case), which DESIGN.md citations name in quotes. */
  design: Set<string>;
}

/** One reference found in a file. `spec` null means the file gives no way to tell which spec it means. */
export interface Reference {
  line: number;
  /** The reference as written, e.g. the section sign with "10.2", or "D-M11". */
  text: string;
  kind: "section" | "decision" | "design" | "path";
  spec: SpecName | null;
  /** Section numbers (both ends of a range) or decision ids that must exist. */
  targets: string[];
  /** Numbered items of the (first) section named, written after it as "#7", "step 3" or "steps 2–6". */
  items?: number[];
}

/** A reference that does not resolve, with the reason. */
export interface Dangling {
  file: string;
  line: number;
  text: string;
  reason: string;
}

const SECTION_HEADING = /^#{1,6}\s+(?:§\s?)?(\d+(?:\.\d+)*)\.?(?:\s|$)/;
const DECISION_HEADING = /^#{1,6}\s+(G\d+|D-[A-Z]{1,2}\d+)\b/;
const ANCHOR = /<a\s+id="([^"]+)"\s*>/g;

/** Section numbers and decision ids declared by one spec file's headings and `<a id="…">` anchors. */
export function anchorsOf(markdown: string): { sections: Set<string>; decisions: Set<string>; items: Set<string> } {
  const sections = new Set<string>();
  const decisions = new Set<string>();
  const items = new Set<string>();
  let current: string | null = null;
  for (const line of markdown.split("\n")) {
    const s = SECTION_HEADING.exec(line);
    if (s) sections.add(s[1]!);
    if (/^#/.test(line)) current = s ? s[1]! : null;
    const item = /^\s{0,3}(\d+)\.\s/.exec(line);
    if (item && current !== null) items.add(`${current}#${item[1]}`);
    const d = DECISION_HEADING.exec(line);
    if (d) decisions.add(d[1]!);
    for (const a of line.matchAll(ANCHOR)) (/^\d/.test(a[1]!) ? sections : decisions).add(a[1]!);
  }
  return { sections, decisions, items };
}

/** Reads docs/spec/rewards.md and docs/spec/algorithms.md under `root`. */
export function loadAnchors(root: string): Anchors {
  const rewards = anchorsOf(readFileSync(join(root, "docs/spec/rewards.md"), "utf8"));
  const algorithms = anchorsOf(readFileSync(join(root, "docs/spec/algorithms.md"), "utf8"));
  const design = readFileSync(join(root, "docs/spec/design.md"), "utf8");
  return {
    sections: { rewards: rewards.sections, algorithms: algorithms.sections },
    items: { rewards: rewards.items, algorithms: algorithms.items },
    decisions: new Set([...rewards.decisions, ...algorithms.decisions]),
    design: headingsOf(design),
  };
}

/** The text of every heading, lower case. */
export function headingsOf(markdown: string): Set<string> {
  const out = new Set<string>();
  for (const m of markdown.matchAll(/^#{1,6}\s+(.+?)\s*$/gm)) out.add(m[1]!.toLowerCase());
  return out;
}

/** Folder (or file) defaults for bare `§` citations, longest prefix first; see docs/spec/README.md. */
const DEFAULTS: [string, SpecName][] = [
  ["docs/spec/rewards.md", "rewards"],
  ["docs/spec/algorithms.md", "algorithms"],
  ["docs/algorithms.md", "algorithms"],
  ["docs/training.md", "algorithms"],
  ["docs/rewards.md", "rewards"],
  ["docs/car.md", "rewards"],
  ["docs/sandbox.md", "rewards"],
  ["docs/solver-and-kernel.md", "rewards"],
  ["docs/tasks.md", "rewards"],
  ["src/rewards/", "rewards"],
  ["src/tasks/", "rewards"],
  ["src/envs/", "rewards"],
  ["src/algorithms/", "algorithms"],
  ["src/trainer/", "algorithms"],
  ["src/rollout/", "algorithms"],
  ["test/rewards/", "rewards"],
  ["test/tasks/", "rewards"],
  ["test/car/", "rewards"],
  ["test/kernel/", "rewards"],
  ["test/solver/", "rewards"],
  ["test/sandbox/", "rewards"],
  ["test/algorithms/", "algorithms"],
  ["test/trainer/", "algorithms"],
  ["test/rollout/", "algorithms"],
];

const HEADER_LINES = 15;

/** The spec a bare `§` refers to in `path`: the one its header names, else its folder's default, else null. */
export function defaultSpec(path: string, text: string): SpecName | null {
  const header = text.split("\n").slice(0, HEADER_LINES).join("\n");
  const r = /rewards spec|docs\/spec\/rewards\.md/i.test(header);
  const a = /algorithms spec|docs\/spec\/algorithms\.md/i.test(header);
  if (r !== a) return r ? "rewards" : "algorithms";
  return DEFAULTS.find(([prefix]) => path.startsWith(prefix))?.[1] ?? null;
}

type Owner = SpecName | "default" | "external";
const SECTION = /§\s?(\d+(?:\.\d+)*)(?:\s?[–-]\s?§?(\d+(?:\.\d+)*))?/g;
const QUALIFIER = new RegExp(
  [
    "rewards spec",
    "algorithms spec",
    "docs/spec/rewards\\.md",
    "docs/spec/algorithms\\.md",
    "\\bspec(?:'s)?\\b",
    "arXiv",
    "\\b\\d{4}\\.\\d{4,5}\\b", // a bare arXiv id
    "\\bpaper(?:'s)?\\b",
    "et al\\.",
  ].join("|"),
  "gi",
);
const SEPARATORS = /^(?:[\s,–&/*()-]|#\d+|\d+|\b(?:and|or|to|steps?|rules?|items?|eqs?\.?)\b)*$/;
// An acronym or a CamelCase/hyphenated name (OSQP, DAPO, VideoChat-R1), not a capitalised English word ("See").
const NAME_BEFORE = /\b[A-Z][A-Za-z0-9]*[A-Z0-9][\w-]*\s*$/;

/** The owner named by the last qualifier in `text` (after its last bracket or semicolon), if any. */
function qualifierOwner(text: string): Owner | null {
  const cut = Math.max(text.lastIndexOf("("), text.lastIndexOf("["), text.lastIndexOf(";"), text.lastIndexOf("|"));
  const q = [...text.slice(cut + 1).matchAll(QUALIFIER)].map((m) => m[0].toLowerCase()).at(-1);
  if (q === undefined) return null;
  if (q.startsWith("rewards") || q.endsWith("rewards.md")) return "rewards";
  if (q.startsWith("algorithms") || q.endsWith("algorithms.md")) return "algorithms";
  return q.startsWith("spec") ? "default" : "external"; // arXiv (or a bare arXiv id), "paper", "et al."
}

/** Who a `§` belongs to, from the text between the previous citation on the line (or the line start) and it. */
function ownerOf(gap: string, previous: Owner | null): Owner {
  if (previous !== null && SEPARATORS.test(gap)) return previous; // a chain of sections: ", " or " and " between
  const named = qualifierOwner(gap);
  if (named !== null) return named;
  const cut = Math.max(gap.lastIndexOf("("), gap.lastIndexOf("["), gap.lastIndexOf(";"), gap.lastIndexOf("|"));
  // "(DAPO §3.3)", "(OSQP §5.2)": an acronym or CamelCase name right before it makes it another work's section.
  return NAME_BEFORE.test(gap.slice(cut + 1)) ? "external" : "default";
}

const ITEM_AFTER = /^\s?(?:#|steps? |rules? |items? )(\d+)(?:\s?[–-]\s?(\d+))?\b/;
const DECISION = /\b(G\d+|D-[A-Z]{1,2}\d+)(?:\s?[–-]\s?(G\d+|D-[A-Z]{1,2}\d+|[A-Z]{1,2}\d+))?\b/g;
const DESIGN_SECTION = /\bDESIGN(?:\.md)?(?:'s)?:?\s+"([^"\n]+)"/g;
const OUTSIDE_PATH = /(?:shared\/specs\/|(?<!docs\/)\bspecs\/)(?:rewards|algorithms)\.md/g;

/** Every spec reference in one file's text. */
export function referencesIn(path: string, text: string): Reference[] {
  const fallback = defaultSpec(path, text);
  const refs: Reference[] = [];
  // A chain may go on after a line break: the owner of a line's last citation carries over when only separators
  // follow it, and a qualifier at the end of a line (an arXiv id, "rewards spec") applies to the next line's first.
  let carried: Owner | null = null;
  text.split("\n").forEach((line, i) => {
    let previous: Owner | null = carried;
    let end = 0;
    let any = false;
    for (const m of line.matchAll(SECTION)) {
      const owner = ownerOf(line.slice(end, m.index), previous);
      previous = owner;
      any = true;
      end = m.index + m[0].length;
      if (owner === "external") continue;
      const spec = owner === "default" ? fallback : owner;
      const targets = m[2] ? [m[1]!, m[2]] : [m[1]!];
      const item = ITEM_AFTER.exec(line.slice(end));
      const items = item ? [Number(item[1]), ...(item[2] ? [Number(item[2])] : [])] : undefined;
      refs.push({ line: i + 1, text: m[0], kind: "section", spec, targets, ...(items ? { items } : {}) });
    }
    const trailing = line.slice(end);
    carried = qualifierOwner(trailing) ?? ((any || carried !== null) && SEPARATORS.test(trailing) ? previous : null);
    for (const m of line.matchAll(DECISION)) {
      const first = m[1]!;
      const last = m[2] === undefined ? [] : [/^(G|D-)/.test(m[2]) ? m[2] : first.replace(/[A-Z]{1,2}\d+$/, m[2])];
      refs.push({ line: i + 1, text: m[0], kind: "decision", spec: "rewards", targets: [first, ...last] });
    }
    for (const m of line.matchAll(DESIGN_SECTION)) {
      refs.push({ line: i + 1, text: m[0], kind: "design", spec: null, targets: [m[1]!] });
    }
    for (const m of line.matchAll(OUTSIDE_PATH)) {
      refs.push({ line: i + 1, text: m[0], kind: "path", spec: null, targets: [] });
    }
  });
  return refs;
}

/** The references of one file that do not resolve against `anchors`. */
export function danglingIn(path: string, text: string, anchors: Anchors): Dangling[] {
  const out: Dangling[] = [];
  for (const r of referencesIn(path, text)) {
    const at = { file: path, line: r.line, text: r.text };
    if (r.kind === "path") {
      out.push({ ...at, reason: "points outside the repository; cite docs/spec/*.md" });
    } else if (r.kind === "design") {
      const found = anchors.design.has(r.targets[0]!.toLowerCase());
      if (!found) out.push({ ...at, reason: "no such heading in docs/spec/design.md" });
    } else if (r.kind === "decision") {
      const missing = r.targets.filter((t) => !anchors.decisions.has(t));
      if (missing.length > 0) out.push({ ...at, reason: `no decision ${missing.join(", ")} in docs/spec` });
    } else if (r.spec === null) {
      out.push({ ...at, reason: 'cannot tell which spec: write "rewards spec §…" or "algorithms spec §…"' });
    } else {
      const missing = r.targets.filter((t) => !anchors.sections[r.spec!].has(t));
      const noItem = (r.items ?? []).filter((n) => !anchors.items[r.spec!].has(`${r.targets[0]}#${n}`));
      if (missing.length > 0) out.push({ ...at, reason: `no §${missing.join(", §")} in docs/spec/${r.spec}.md` });
      else if (noItem.length > 0) out.push({ ...at, reason: `no item ${noItem.join(", ")} in that section's list` });
    }
  }
  return out;
}

const SCANNED = /\.(ts|mts|cts|js|mjs|cjs|md|py|sh)$/;
const SKIPPED = new Set(["node_modules", "dist", "build", "fixtures", ".git"]);

/** Text files under `dirs` (relative to `root`), as repository-relative paths with forward slashes. */
export function scannedFiles(root: string, dirs: string[]): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      if (SKIPPED.has(name)) return [];
      const p = join(dir, name);
      if (statSync(p).isDirectory()) return walk(p);
      return SCANNED.test(name) ? [relative(root, p).split("\\").join("/")] : [];
    });
  return dirs.flatMap((d) => {
    try {
      return walk(join(root, d));
    } catch {
      return []; // a folder this checkout does not have
    }
  });
}
