/**
 * `rlvr train` attacks from the CLI suite (issue 11, items 9 and 10), through the real CLI in child processes:
 * `--set` pairs without `=` or otherwise malformed, `--set` paths through `__proto__` / `constructor` /
 * `prototype` (which used to change Object.prototype for the whole process), recipes too large for memory (which
 * used to end in a V8 out-of-memory abort) and run folders that cannot be created. Each class has at least five
 * variants, run in one child by test/cli/run-many.ts; each must end in one `rlvr:` line naming the field or folder.
 * A fast-check property drives random `--set` paths through `parseSets` in this process.
 */
import { beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { tmpdir } from "node:os";
import type { RunReport } from "./run-many.js";
import { parseSets } from "../../src/cli/overrides.js";
import { ConfigError } from "../../src/util/index.js";

const ROOT = resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(join(tmpdir(), "rlvr-hostile-recipe-"));
const RECIPE = join(dir, "tiny.yaml");
writeFileSync(
  RECIPE,
  [
    "name: tiny",
    `outDir: ${join(dir, "runs")}`,
    "model: { type: new, dModel: 16, nLayers: 1, nHeads: 2, maxSeqLen: 40 }",
    "task: { name: addition, options: { maxDigits: 1 }, trainExamples: 20, testExamples: 4 }",
    "train: { steps: 1, promptsPerStep: 2, groupSize: 2, maxCompletionTokens: 6 }",
    "eval: { every: 0, examples: 2, atStart: false }",
    "checkpoint: { keepBest: false }",
    "log: { progress: false }",
  ].join("\n"),
);
writeFileSync(join(dir, "a-file"), "not a folder");
mkdirSync(join(dir, "runs-ckfile", "tiny"), { recursive: true });
writeFileSync(join(dir, "runs-ckfile", "tiny", "checkpoints"), "a file where the checkpoints folder goes");

const train = (...args: string[]) => ["train", RECIPE, "--no-progress", ...args];
const set = (...pairs: string[]) => train(...pairs.flatMap((p) => ["--set", p]));

/** [command line, what the one rlvr: line must say] per variant, by class. */
const CLASSES: Record<string, Array<[string[], RegExp]>> = {
  noEquals: [
    [set("train.steps"), /--set "train\.steps": expected field\.path=value/],
    [set("=5"), /field path "" has an empty or invalid segment/],
    [set("train..steps=1"), /empty or invalid segment ""/],
    [set(".steps=1"), /empty or invalid segment ""/],
    [set("train.steps=1", "train.steps.x=2"), /train\.steps is already set to 1 by an earlier --set/],
    [set("train.lr=[1, 2"), /--set "train\.lr=\[1, 2": the value is not valid YAML/],
  ],
  prototype: [
    [set("__proto__.polluted=1"), /"__proto__" is not a recipe field/],
    [set("constructor.prototype.polluted=1"), /"constructor" is not a recipe field/],
    [set("task.options.__proto__.polluted=1"), /"__proto__" is not a recipe field/],
    [set("train.prototype.polluted=1"), /"prototype" is not a recipe field/],
    [set('task.options={"__proto__": {"polluted": 1}}'), /the value has a key "__proto__"/],
    [set("task.options=[{constructor: {prototype: {polluted: 1}}}]"), /the value has a key "constructor"/],
  ],
  memory: [
    [set("train.groupSize=100000000"), /train\.groupSize: the recipe needs about .* more than the limit of .*KV cache/],
    [set("train.promptsPerStep=100000000"), /train\.promptsPerStep: the recipe needs about/],
    [
      set("model.dModel=1000000"),
      /model\.dModel: the recipe needs about .* parameters, gradients and optimizer moments/,
    ],
    [set("model.nLayers=1000000"), /model\.nLayers: the recipe needs about/],
    [
      set("task.trainExamples=10000000000"),
      /task\.trainExamples: the recipe needs about .* of JS heap, more than the limit .*V8 heap limit/,
    ],
    [
      set("algorithm.zeroStd.policy=resample", "algorithm.zeroStd.maxGenBatches=100000000"),
      /algorithm\.zeroStd\.maxGenBatches: the recipe needs about .* JS heap/,
    ],
  ],
  runFolder: [
    [train("--out-dir", join(dir, "a-file")), /cannot create the run folder .*a-file\/tiny: ENOTDIR/],
    [train("--out-dir", join(dir, "a-file", "below")), /cannot create the run folder .*ENOTDIR/],
    [train("--name", "x".repeat(300)), /cannot create the run folder .*ENAMETOOLONG/],
    [
      train("--out-dir", join(dir, "runs-ckfile")),
      /cannot (create|use) the run folder .*runs-ckfile\/tiny: (ENOTDIR|EEXIST)/,
    ],
    [
      train("--out-dir", "/proc/rlvr-no-such-folder"),
      /cannot create the run folder \/proc\/rlvr-no-such-folder\/tiny: (ENOENT|EACCES|EROFS)/,
    ],
  ],
};

function runMany(lines: string[][]): { reports: RunReport[]; prototypeKeys: string[] } {
  const file = join(dir, `lines-${Object.keys(CLASSES).length}-${lines.length}.json`);
  writeFileSync(file, JSON.stringify(lines));
  const r = spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "test/cli/run-many.ts"), file], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 240_000,
  });
  expect(r.signal, `runner killed (a V8 abort is SIGABRT): ${r.stderr.slice(-2000)}`).toBeNull();
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout.trim().split("\n").pop()!);
}

describe("hostile train command lines", () => {
  let reports: RunReport[] = [];
  let prototypeKeys: string[] = [];
  beforeAll(() => {
    ({ reports, prototypeKeys } = runMany([
      ...Object.values(CLASSES)
        .flat()
        .map(([argv]) => argv),
      train(),
    ]));
  }, 300_000);

  it.each(Object.keys(CLASSES))(
    "%s: every variant is one rlvr: error naming the field or folder, exit status 1",
    (cls) => {
      const first = Object.keys(CLASSES)
        .slice(0, Object.keys(CLASSES).indexOf(cls))
        .reduce((n, k) => n + CLASSES[k]!.length, 0);
      expect(CLASSES[cls]!.length).toBeGreaterThanOrEqual(5);
      CLASSES[cls]!.forEach(([argv, pattern], i) => {
        const r = reports[first + i]!;
        expect(r.argv).toEqual(argv);
        expect(r.escaped, `${argv.join(" ")} escaped`).toBeUndefined();
        expect(r.exitCode, `${argv.join(" ")}: ${r.stderr}`).toBe(1);
        expect(r.stderr).toMatch(/^rlvr: /);
        expect(r.stderr).not.toMatch(/\n\s+at /);
        expect(r.stderr, argv.join(" ")).toMatch(pattern);
      });
    },
  );
  it("Object.prototype is unchanged after every attack, and the plain recipe still trains in the same process", () => {
    expect(prototypeKeys).toEqual(Reflect.ownKeys(Object.prototype).map(String).sort());
    const control = reports[reports.length - 1]!;
    expect(control.escaped).toBeUndefined();
    expect(control.exitCode, control.stderr).toBe(0);
    expect(control.stdout).toContain("run folder:");
  });
  it("as the rlvr command itself: exit status 1, one line, no stack trace", () => {
    for (const argv of [set("train.steps"), set("train.groupSize=100000000")]) {
      const r = spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "test/cli/run-cli.ts"), ...argv], {
        cwd: ROOT,
        encoding: "utf8",
        timeout: 120_000,
      });
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/^rlvr: /);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });
});

describe("parseSets", () => {
  const segment = fc.oneof(
    fc.constantFrom("__proto__", "constructor", "prototype", "a", "train", "0"),
    fc.string({ maxLength: 6 }),
  );
  it("never changes Object.prototype and either builds own fields or throws a ConfigError (property)", () => {
    const before = Reflect.ownKeys(Object.prototype).map(String).sort();
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.array(segment, { minLength: 1, maxLength: 4 }), fc.stringMatching(/^[a-z0-9 :{}[\],=_.-]{0,8}$/)),
          { maxLength: 4 },
        ),
        (pairs) => {
          try {
            const out = parseSets(pairs.map(([path, v]) => `${path.join(".")}=${v}`));
            expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
            const walk = (x: unknown): void => {
              if (typeof x !== "object" || x === null) return;
              for (const k of Object.keys(x)) {
                expect(["__proto__", "constructor", "prototype"]).not.toContain(k);
                walk((x as Record<string, unknown>)[k]);
              }
            };
            walk(out);
          } catch (err) {
            expect(err).toBeInstanceOf(ConfigError);
          }
          expect(Reflect.ownKeys(Object.prototype).map(String).sort()).toEqual(before);
        },
      ),
      { seed: 11, numRuns: 400 },
    );
  });
  it("builds nested fields with YAML values (hand-written)", () => {
    expect(
      parseSets(["train.steps=20", "algorithm.kl.beta=0", "task.options={maxDigits: 2}", "eval.k=[1, 4]"]),
    ).toEqual({
      train: { steps: 20 },
      algorithm: { kl: { beta: 0 } },
      task: { options: { maxDigits: 2 } },
      eval: { k: [1, 4] },
    });
  });
});
