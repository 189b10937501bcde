/**
 * The CLI attack suite's inputs that used to end in a stack trace or a V8 abort (issue 11, items 8-10), through
 * the real CLI in child processes: each class is a table of at least five variants run by test/cli/run-many.ts in
 * one child (same `main` as bin/rlvr.js), and one variant per class is also run as `rlvr` itself to check the exit
 * status and that no stack trace reaches the terminal. Every variant must end in one `rlvr:` line naming the file
 * or field; a control variant per table shows the setup itself loads.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { tmpdir } from "node:os";
import type { RunReport } from "./run-many.js";

const ROOT = resolve(import.meta.dirname, "../..");
const LLAMA = join(ROOT, "test/fixtures/parity/llama");
const dir = mkdtempSync(join(tmpdir(), "rlvr-hostile-"));

/** Runs command lines in one child process; returns each line's report and Object.prototype's keys after. */
function runMany(lines: string[][]): { reports: RunReport[]; prototypeKeys: string[] } {
  const file = join(dir, `lines-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(lines));
  const r = spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "test/cli/run-many.ts"), file], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 240_000,
  });
  expect(r.signal, `runner killed: ${r.stderr}`).toBeNull();
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout.trim().split("\n").pop()!);
}

/** Runs `rlvr ...args` as its own process. */
function rlvr(...args: string[]): { status: number | null; stderr: string } {
  const r = spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "test/cli/run-cli.ts"), ...args], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 120_000,
  });
  return { status: r.status, stderr: r.stderr };
}

/** Each report is one clean `rlvr:` error matching its pattern, with no stack trace. */
function expectRlvrErrors(reports: RunReport[], patterns: RegExp[]): void {
  reports.forEach((r, i) => {
    expect(r.escaped, `${r.argv.join(" ")} escaped`).toBeUndefined();
    expect(r.exitCode, `${r.argv.join(" ")}: ${r.stderr}`).toBe(1);
    expect(r.stderr, r.argv.join(" ")).toMatch(/^rlvr: /);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stderr, r.argv.join(" ")).toMatch(patterns[i]!);
  });
}

/** A copy of the tiny Llama fixture with `edit` applied. */
function llamaCopy(name: string, edit: (d: string) => void = () => {}): string {
  const d = join(dir, name);
  mkdirSync(d, { recursive: true });
  for (const f of ["config.json", "tokenizer.json", "model.safetensors"]) copyFileSync(join(LLAMA, f), join(d, f));
  edit(d);
  return d;
}

const evalArgs = (d: string) => ["eval", d, "--task", "addition", "--examples", "1", "--max-new-tokens", "1"];
const write = (name: string, text: string) => (d: string) => writeFileSync(join(d, name), text);
const config = (patch: Record<string, unknown>) => (d: string) => {
  const c = JSON.parse(readFileSync(join(LLAMA, "config.json"), "utf8"));
  writeFileSync(join(d, "config.json"), JSON.stringify({ ...c, ...patch }));
};
/** Replaces model.safetensors by one shard and an index (then `edit`s the index). */
const sharded =
  (index: unknown, edit: (d: string) => void = () => {}) =>
  (d: string) => {
    renameSync(join(d, "model.safetensors"), join(d, "model-00001-of-00001.safetensors"));
    writeFileSync(join(d, "model.safetensors.index.json"), typeof index === "string" ? index : JSON.stringify(index));
    edit(d);
  };
const fullMap = (): Record<string, string> => {
  const bytes = readFileSync(join(LLAMA, "model.safetensors"));
  const header = JSON.parse(bytes.subarray(8, 8 + Number(bytes.readBigUInt64LE(0))).toString("utf8")) as Record<
    string,
    unknown
  >;
  return Object.fromEntries(
    Object.keys(header)
      .filter((k) => k !== "__metadata__")
      .map((k) => [k, "model-00001-of-00001.safetensors"]),
  );
};

describe("hostile checkpoint folders (rlvr eval)", () => {
  const cases: Array<[string, (d: string) => void, RegExp]> = [
    // garbage tokenizer.json: the library used to throw TypeErrors from deep inside
    ["tok-not-json", write("tokenizer.json", "{ nope"), /tokenizer.*not valid JSON/],
    ["tok-null", write("tokenizer.json", "null"), /tokenizer\.json: missing the "model" section/],
    ["tok-array", write("tokenizer.json", "[1, 2, 3]"), /tokenizer\.json: missing the "model" section/],
    ["tok-model-number", write("tokenizer.json", '{"model": 5}'), /tokenizer\.json: missing the "model" section/],
    [
      "tok-bad-vocab",
      write("tokenizer.json", '{"model": {"type": "BPE", "vocab": 7, "merges": []}}'),
      /tokenizer\.json: not a tokenizer/,
    ],
    [
      "tok-string-ids",
      write("tokenizer.json", '{"model": {"type": "WordLevel", "vocab": {"a": "x"}, "unk_token": "a"}}'),
      /tokenizer\.json: (vocab entry "a" has id "x"|not a tokenizer)/,
    ],
    [
      "tok-added-not-list",
      (d) => {
        const t = JSON.parse(readFileSync(join(LLAMA, "tokenizer.json"), "utf8"));
        writeFileSync(join(d, "tokenizer.json"), JSON.stringify({ ...t, added_tokens: { id: 1 } }));
      },
      /tokenizer\.json: (added_tokens must be a list|not a tokenizer)/,
    ],
    // garbage shard indexes
    ["idx-not-json", sharded("{ weight_map"), /model\.safetensors\.index\.json: not valid JSON/],
    ["idx-null", sharded("null"), /index\.json: expected a JSON object at the top level, got null/],
    ["idx-map-number", sharded({ weight_map: 5 }), /weight_map must be an object/],
    [
      "idx-traversal",
      sharded({ weight_map: { ...fullMap(), "model.norm.weight": "../../../etc/passwd" } }),
      /maps to "\.\.\/\.\.\/\.\.\/etc\/passwd"/,
    ],
    [
      "idx-missing-shard",
      sharded({ weight_map: { ...fullMap(), "model.extra.weight": "model-00002-of-00002.safetensors" } }),
      /cannot read safetensors file .*00002/,
    ],
    [
      "idx-unlisted",
      sharded({ weight_map: { "model.norm.weight": "model-00001-of-00001.safetensors" } }),
      /tensor ".*" is in model-00001-of-00001\.safetensors, but the weight_map does not list it/,
    ],
    ["idx-empty", sharded({ weight_map: {} }), /weight_map lists no tensors/],
    // config.json bombs: sizes whose allocation would abort, and nonsense
    ["cfg-hidden-1e9", config({ hidden_size: 1e9 }), /model\.dModel \(hidden_size\): Too big/],
    ["cfg-vocab-1e12", config({ vocab_size: 1e12 }), /model\.vocabSize \(vocab_size\): Too big/],
    ["cfg-layers-1e6", config({ num_hidden_layers: 1e6 }), /model\.nLayers \(num_hidden_layers\): Too big/],
    ["cfg-ff-1e9", config({ intermediate_size: 1e9 }), /model\.dFf \(intermediate_size\): Too big/],
    [
      "cfg-within-bounds-too-big",
      config({
        hidden_size: 65536,
        intermediate_size: 262144,
        num_hidden_layers: 1000,
        head_dim: 4096,
        num_attention_heads: 16,
        num_key_value_heads: 16,
      }),
      /config\.json: [\s\S]*model\.dFf \(intermediate_size\): the MLP matrix .* one tensor holds at most/,
    ],
    [
      "cfg-total-too-big",
      config({
        hidden_size: 16384,
        intermediate_size: 65536,
        num_hidden_layers: 1000,
        head_dim: 128,
        num_attention_heads: 128,
        num_key_value_heads: 8,
      }),
      /config\.json: this config makes a model of .* parameters, .* GiB as float32, more than this machine's/,
    ],
    ["cfg-null", write("config.json", "null"), /config\.json: expected a JSON object at the top level, got null/],
    ["cfg-string-width", config({ hidden_size: "64" }), /model\.dModel \(hidden_size\)/],
    // lying safetensors (more variants in test/models/safetensors.test.ts) and NaN weights
    [
      "st-null-header",
      (d) => {
        const h = Buffer.from("null    ");
        const b = Buffer.alloc(8);
        b.writeBigUInt64LE(BigInt(h.length));
        writeFileSync(join(d, "model.safetensors"), Buffer.concat([b, h]));
      },
      /model\.safetensors: header is null, not a JSON object/,
    ],
    [
      "st-nan",
      (d) => {
        const bytes = readFileSync(join(d, "model.safetensors"));
        bytes.writeFloatLE(NaN, bytes.length - 4);
        writeFileSync(join(d, "model.safetensors"), bytes);
      },
      /tensor ".*" has a non-finite weight \(NaN\).*--allow-non-finite/,
    ],
  ];
  let run: { reports: RunReport[]; prototypeKeys: string[] };
  beforeAll(() => {
    const lines = cases.map(([name, edit]) => evalArgs(llamaCopy(name, edit)));
    lines.push(evalArgs(llamaCopy("control")));
    lines.push([...evalArgs(join(dir, "st-nan")), "--allow-non-finite"]);
    run = runMany(lines);
  }, 300_000);

  it("the untouched copy evaluates (the control), and NaN weights load when allowed", () => {
    for (const r of run.reports.slice(-2)) {
      expect(r.escaped).toBeUndefined();
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout).toContain("eval/addition/pass@1");
    }
  });
  it.each(["tok", "idx", "cfg", "st"])("every %s-* variant is one rlvr: error naming the file or field", (prefix) => {
    const idx = cases
      .map(([name], i) => [name, i] as const)
      .filter(([name]) => name.startsWith(`${prefix}-`))
      .map(([, i]) => i);
    expect(idx.length).toBeGreaterThanOrEqual(prefix === "st" ? 2 : 5);
    expectRlvrErrors(
      idx.map((i) => run.reports[i]!),
      idx.map((i) => cases[i]![2]),
    );
  });
  it("a run folder whose config.json is garbage or not a run config is an rlvr: error naming it", () => {
    const runs = ["{ nope", "null", "{}"].map((text, i) => {
      const d = join(dir, `run-${i}`);
      mkdirSync(join(d, "checkpoints"), { recursive: true });
      writeFileSync(join(d, "config.json"), text);
      return ["eval", d];
    });
    expectRlvrErrors(runMany(runs).reports, [
      /config\.json: not valid JSON/,
      /config\.json: not a run config/,
      /config\.json: not a run config: model/,
    ]);
  });
  it("as the rlvr command itself: exit status 1 and no stack trace", () => {
    const r = rlvr(...evalArgs(join(dir, "tok-bad-vocab")));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^rlvr: .*tokenizer\.json/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
